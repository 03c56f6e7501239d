#!/usr/bin/env python3
"""The user's code on a GPU (label gpu; SKIPPED, exit 77, without one): the example checkout timed
with CUDA events through trainscope-cli, device memory recorded per step, bf16 autocast, an
out-of-memory inside the user's model as a result, and TrainScope's model beside it in one run;
profiled kernel by kernel; its allocator history read by the memory lab (the user's file and
line), and its OOM frontier found by bisection.
Usage: test_python_source_gpu.py path/to/trainscope-cli"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from runner_server import share_runner_server  # noqa: E402

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.join(ROOT, "examples", "course-checkout")


def main(cli):
    info = subprocess.run([cli, "info"], capture_output=True, text=True)
    if "cuda:0" not in info.stdout:
        print("SKIPPED: no CUDA device")
        return SKIP
    share_runner_server(cli)  # See Note [the runner server]: its children start CUDA themselves
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TRAINSCOPE_DB=os.path.join(tmp, "results.db"))

        def bench(*args):
            p = subprocess.run([cli, "bench", *args, "--device", "cuda", "--jsonl"], capture_output=True, text=True,
                               env=env, timeout=600)
            results = [json.loads(l) for l in p.stdout.splitlines() if '"result"' in l]
            return p, results

        p, rs = bench("--code", CHECKOUT, "--source", "trainscope,python", "--size", "small", "--context-length", "256",
                      "--precision", "fp32,bf16", "--warmup", "3", "--steps", "5")
        check(p.returncode == 0, f"the checkout beside TrainScope's model runs (exit {p.returncode}) {p.stderr[-500:]}")
        check([(r["config"].get("source", "trainscope"), r["config"]["precision"]) for r in rs] ==
              [("trainscope", "fp32"), ("python", "fp32"), ("trainscope", "bf16"), ("python", "bf16")],
              "four points, TrainScope's and yours, fp32 and bf16")
        for r in rs:
            who = f'{r["config"].get("source", "trainscope")} {r["config"]["precision"]}'
            check(r["status"] == "ok", f"{who}: ok ({r['error'][:300]})")
            check(all(s["memory_peak"] > 0 and s["memory_allocated"] > 0 for s in r["steps"]),
                  f"{who}: device memory recorded every step")
            check(r["peak_memory"] > 0, f"{who}: the point's peak")
            check(r["total"]["mean"] > 0 and r["forward"]["mean"] > 0 and r["backward"]["mean"] > 0,
                  f"{who}: CUDA-event phases")
            check("tflops" in r, f"{who}: TFLOP/s of the course model")
        oom = os.path.join(tmp, "huge.py")
        with open(oom, "w") as f:
            f.write(textwrap.dedent("""
                import torch, torch.nn as nn
                class Huge(nn.Module):
                    def __init__(self, v, d):
                        super().__init__()
                        self.e, self.h = nn.Embedding(v, d), nn.Linear(d, v)
                    def forward(self, x):
                        waste = torch.empty(1 << 44, dtype=torch.uint8, device=x.device)  # 16 TiB
                        return self.h(self.e(x)) + waste.sum()
                def build(vocab_size, d_model):
                    return Huge(vocab_size, d_model)
            """))
        p, rs = bench("--code", oom + ":build", "--size", "tiny", "--context-length", "64", "--warmup", "0",
                      "--steps", "2")
        check(p.returncode == 0 and len(rs) == 1 and rs[0]["status"] == "OOM",
              f"a CUDA out-of-memory in the user's model is a result (exit {p.returncode})")
        if rs:
            check("huge.py:" in rs[0]["error"], "it names the user's line")
        # The profiler: the user's kernels, each in its phase, and the attention's inside "attn".
        args = [cli, "profile", "--code", CHECKOUT, "--size", "small", "--context-length", "256", "--warmup", "2",
                "--profile-steps", "1", "--device", "cuda", "--jsonl", "--top", "0"]
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
        check(p.returncode == 0, f"profile --code on the GPU (exit {p.returncode}) {p.stderr[-500:]}")
        docs = [json.loads(l) for l in p.stdout.splitlines() if '"type": "profile"' in l or '"type":"profile"' in l]
        check(len(docs) == 1, f"one profile summary ({p.stdout[-300:]})")
        if docs:
            doc = docs[0]
            check(doc.get("gpu") is True and len(doc.get("kernels", [])) > 10,
                  f"a GPU profile with its kernels (keys {sorted(doc)}, gpu {doc.get('gpu')})")
            check(not any(k["kernel"] in ("attn", "ffn") or k["kernel"].startswith("Optimizer.step")
                          for k in doc.get("kernels", [])), "ranges are not taken for kernels")
            kernels = {x["phase"]: x["kernels"] for x in doc.get("phases", [])}
            check(all(kernels.get(ph, 0) > 0 for ph in ("forward", "backward", "optimizer")),
                  f"kernels in every phase: {kernels}")
            check(any(c["category"] == "GEMM" and c["time_us"] > 0 for c in doc.get("categories", [])), "GEMM time")
            p = subprocess.run(args + ["--range", "attn"], capture_output=True, text=True, env=env, timeout=600)
            attn = [k for l in p.stdout.splitlines() if '"profile"' in l for k in json.loads(l).get("kernels", [])]
            check(any("softmax" in k["kernel"].lower() for k in attn), "the softmax kernel inside the attn range")
        # The memory lab: the allocator's history of the checkout's steps, read by TrainScope's
        # analysis: the phases, the exact parameter bytes, the user's file and line.
        snap = os.path.join(tmp, "yours.pickle")
        args = [cli, "memory", "--code", CHECKOUT, "--size", "small", "--context-length", "256", "--warmup", "1",
                "--record-steps", "2", "--device", "cuda", "--jsonl", "--top", "20", "--snapshot", snap]
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
        check(p.returncode == 0, f"memory --code on the GPU (exit {p.returncode}) {p.stderr[-800:]}")
        docs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{") and '"memory"' in l]
        check(len(docs) == 1, f"one memory summary ({p.stdout[-300:]})")
        if docs:
            doc = docs[0]
            check(doc["status"] == "ok" and doc["events"] > 100, f"recorded: {doc['status']} {doc['error'][:300]}, "
                                                                 f"{doc['events']} events")
            check(doc["peak"]["phase"] in ("forward", "backward", "optimizer"),
                  f"the peak lies in a phase of the step: {doc['peak']}")
            cats = {c["category"]: c["peak_bytes"] for c in doc["categories"]}
            check(cats.get("parameters") == doc["parameter_bytes"] and doc["parameter_bytes"] > 0,
                  f"the parameters at the peak are exactly the model's: {cats.get('parameters')} vs "
                  f"{doc['parameter_bytes']}")
            check(cats.get("optimizer state", 0) >= doc["parameter_bytes"],
                  f"AdamW's two moments found: {cats.get('optimizer state')}")
            check(cats.get("activations", 0) > 0, f"activations found: {cats}")
            where = [x["where"] for x in doc["largest"] if x["where"]]
            check(any(w.startswith("cs336_basics/model.py:") for w in where),
                  f"the largest allocations name the user's file and line: {where[:5]}")
            check(any(x["range"] for x in doc["largest"]), "and the user's module")
        check(os.path.getsize(snap) > 1000 if os.path.exists(snap) else False, "the memory_viz snapshot written")
        # The OOM frontier of the user's code: a model whose step holds batch GiB fits below the
        # device's memory and not above it; the probe that ran out leaves its snapshot.
        hog = os.path.join(tmp, "hog.py")
        with open(hog, "w") as f:
            f.write(textwrap.dedent("""
                import torch, torch.nn as nn
                class Hog(nn.Module):
                    def __init__(self, v, d):
                        super().__init__()
                        self.e, self.h = nn.Embedding(v, d), nn.Linear(d, v)
                    def forward(self, x):
                        held = torch.ones(x.shape[0], 1 << 30, dtype=torch.uint8, device=x.device)  # batch GiB
                        return self.h(self.e(x)) + held[:, 0].float().mean() * 0
                def build(vocab_size, d_model):
                    return Hog(vocab_size, d_model)
            """))
        oom_snap = os.path.join(tmp, "oom.pickle")
        args = [cli, "memory", "--code", hog + ":build", "--size", "tiny", "--context-length", "16", "--warmup", "0",
                "--record-steps", "1", "--device", "cuda", "--jsonl", "--frontier", "batch", "--frontier-max", "1024",
                "--oom-snapshot", oom_snap]
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
        check(p.returncode == 0, f"memory --code --frontier batch (exit {p.returncode}) {p.stderr[-800:]}")
        docs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{") and '"memory"' in l]
        if docs and docs[0].get("frontier"):
            fr = docs[0]["frontier"]
            check(8 < fr["largest_fit"] < fr["smallest_oom"] <= 1024 and fr["smallest_oom"] - fr["largest_fit"] == 1,
                  f"the batch frontier found: fits {fr['largest_fit']}, OOM at {fr['smallest_oom']}")
            check(fr.get("oom_trace") is not None, "the probe that ran out of memory kept its history")
        else:
            check(False, f"a frontier in the summary ({p.stdout[-300:]})")
        check(os.path.exists(oom_snap) and os.path.getsize(oom_snap) > 100, "the OOM snapshot written")
    if failures:
        print(f"{len(failures)} failed")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1])))
