#!/usr/bin/env python3
"""Smoke test of the distributed reference and its comparison on the CPU (Gloo):
  - distributed_reference.py allreduce over 2 ranks at 1 MiB: exact bytes, busbw = algbw·2(n−1)/n;
  - distributed_reference.py ddp over 2 ranks (tiny, context 32, 2 steps), with and without
    --zero, and single: positive step times, ZeRO's optimizer state about half per rank;
  - compare_distributed.py on hand-written fixtures (made-up round numbers, not measurements):
    the tables, the targets met and missed, and TrainScope's DDP JSON in its flat and nested forms.
  test_distributed_reference.py PYTHON[:PYTHON...]   the pythons that may have torch, tried in order
Exit 77 (skipped) when none of them has torch.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from reftest import check, run

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "distributed_reference.py")
COMPARE = os.path.join(HERE, "compare_distributed.py")


def run_ref(py, *args):
    env = dict(os.environ)  # everything inherited (NCCL_* and the like reach the ranks)
    env.pop("RANK", None)   # spawned here, not under torchrun
    env.pop("WORLD_SIZE", None)
    env.setdefault("OMP_NUM_THREADS", "1")
    r = subprocess.run([py, REF, *args], capture_output=True, text=True, env=env, timeout=240)
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0:
        print(r.stderr[-3000:], file=sys.stderr)
    check(r.returncode == 0, f"reference {' '.join(args)}: exit 0 (got {r.returncode})")
    return lines


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel)


def test_allreduce(py):
    lines = run_ref(py, "allreduce", "--backend", "gloo", "--world", "2", "--sizes", "1MiB,1MB",
                    "--dtypes", "fp32,bf16", "--warmup", "1", "--iters", "3")
    check(len(lines) == 4, f"allreduce: 4 lines (2 sizes × 2 dtypes), got {len(lines)}")
    for r in lines:
        n = r["world_size"]
        check(n == 2 and r["backend"] == "gloo" and r["status"] == "ok", f"allreduce {r['bytes']} {r['dtype']}: 2 gloo ranks, ok")
        check(r["bytes"] in (1 << 20, 10**6), f"allreduce: exact bytes ({r['bytes']})")
        check(r["elements"] * (4 if r["dtype"] == "fp32" else 2) == r["bytes"], "allreduce: elements × dtype size = bytes")
        check(r["time_ms"] > 0 and r["time_ms"] == max(x["mean_ms"] for x in r["ranks"]),
              "allreduce: time is the slowest rank's mean")
        check(close(r["algbw_gbps"], r["bytes"] / (r["time_ms"] * 1e-3) / 1e9), "allreduce: algbw = bytes/time")
        check(close(r["busbw_gbps"], r["algbw_gbps"] * 2 * (n - 1) / n), "allreduce: busbw = algbw·2(n−1)/n")
    check({(r["bytes"], r["dtype"]) for r in lines} == {(1 << 20, "fp32"), (10**6, "fp32"), (1 << 20, "bf16"), (10**6, "bf16")},
          "allreduce: 1MiB = 2^20 and 1MB = 10^6 bytes, as TrainScope parses them")
    return lines


def test_ddp(py):
    common = ["--backend", "gloo", "--world", "2", "--size", "tiny", "--context-length", "32", "--batch", "2",
              "--warmup", "1", "--steps", "2"]
    out = {}
    for zero in (False, True):
        lines = run_ref(py, "ddp", *common, *(["--zero"] if zero else []))
        check(len(lines) == 1, f"ddp zero={zero}: one line, got {len(lines)}")
        if not lines:
            continue
        r = out[zero] = lines[0]
        check(r["status"] == "ok" and r["world_size"] == 2 and r["sharded"] == zero, f"ddp zero={zero}: ok, 2 ranks")
        check(r["step_ms"] > 0 and r["total"]["count"] == 2 and r["total"]["min"] > 0, f"ddp zero={zero}: steps positive")
        check(r["step_ms"] >= r["forward_ms"] > 0 and r["backward_ms"] > 0 and r["optimizer_ms"] > 0,
              f"ddp zero={zero}: phases positive and within the step")
        check(r["comm_bytes"] == r["parameter_bytes"] == sum(r["bucket_sizes"]),
              f"ddp zero={zero}: DDP's buckets hold every gradient")
        check(math.isfinite(r["global_loss"]) and r["global_loss"] > 0, f"ddp zero={zero}: a finite loss")
        h = r.get("hidden_estimate")
        check(h is not None and 0 <= h["hidden_share"] <= 1 and h["comm_alone_ms"] > 0,
              f"ddp zero={zero}: a hidden-share estimate in [0, 1]")
    if len(out) == 2:
        full, shard = out[False]["optimizer_state_bytes"], out[True]["optimizer_state_bytes"]
        check(0 < shard < 0.75 * full, f"ZeRO: the largest rank's optimizer state ({shard} B) about half of DDP's ({full} B)")
    # --compile takes torch.compile's modes only (compiling itself is the GPU evidence's: minutes on a CPU).
    bad = subprocess.run([py, REF, "ddp", *common, "--compile", "fast"], capture_output=True, text=True, timeout=120)
    check(bad.returncode == 2 and "invalid choice: 'fast'" in bad.stderr, "ddp --compile fast: refused by the parser")
    lines = run_ref(py, "single", "--backend", "gloo", "--size", "tiny", "--context-length", "32", "--batch", "2", "--warmup", "1", "--steps", "2")
    check(len(lines) == 1 and lines[0]["status"] == "ok" and lines[0]["step_ms"] > 0 and lines[0]["world_size"] == 1,
          "single: one positive step time on one device")
    return out


# Made-up round numbers, only to exercise compare_distributed.py: not measurements.
FIX_REF = [
    {"impl": "pytorch", "experiment": "allreduce", "bytes": 1 << 20, "dtype": "fp32", "world_size": 2, "time_ms": 0.1,
     "algbw_gbps": 10.0, "busbw_gbps": 10.0, "status": "ok"},
    {"impl": "pytorch", "experiment": "allreduce", "bytes": 256 << 20, "dtype": "fp32", "world_size": 2, "time_ms": 1.0,
     "algbw_gbps": 200.0, "busbw_gbps": 200.0, "status": "ok"},
    {"impl": "pytorch", "experiment": "allreduce", "bytes": 1 << 30, "dtype": "fp32", "world_size": 2, "time_ms": 4.0,
     "algbw_gbps": 300.0, "busbw_gbps": 300.0, "status": "ok"},
    {"impl": "pytorch", "experiment": "ddp", "sharded": False, "precision": "bf16", "world_size": 2, "step_ms": 120.0,
     "forward_ms": 30.0, "backward_ms": 80.0, "optimizer_ms": 10.0, "memory_peak": 4000 << 20,
     "optimizer_state_bytes": 2000 << 20, "status": "ok",
     "hidden_estimate": {"hidden_share": 0.5}},
    {"impl": "pytorch", "experiment": "ddp", "sharded": True, "precision": "bf16", "world_size": 2, "step_ms": 130.0,
     "forward_ms": 30.0, "backward_ms": 80.0, "optimizer_ms": 20.0, "memory_peak": 3000 << 20,
     "optimizer_state_bytes": 1000 << 20, "status": "ok"},
    {"impl": "pytorch", "experiment": "single", "precision": "bf16", "world_size": 1, "step_ms": 100.0, "status": "ok"},
    # PyTorch DDP + torch.compile, three modes: the best (reduce-overhead) is the one compared.
    *[{"impl": "pytorch", "experiment": "ddp", "sharded": False, "precision": "bf16", "world_size": 2, "step_ms": ms,
       "forward_ms": 25.0, "backward_ms": 70.0, "optimizer_ms": 5.0, "compile": mode, "status": "ok"}
      for mode, ms in (("default", 112.0), ("reduce-overhead", 100.0), ("max-autotune-no-cudagraphs", 104.0))],
]
FIX_TS_ALLREDUCE = {"experiment": "allreduce", "rows": [
    {"bytes": 1 << 20, "dtype": "fp32", "world_size": 2, "time_ms": 0.2, "algbw_gbps": 5.0, "busbw_gbps": 5.0},
    {"bytes": 256 << 20, "dtype": "fp32", "world_size": 2, "time_ms": 1.0, "algbw_gbps": 196.0, "busbw_gbps": 196.0},
    {"bytes": 1 << 30, "dtype": "fp32", "world_size": 2, "time_ms": 4.0, "algbw_gbps": 290.0, "busbw_gbps": 290.0}]}


def ts_point(strategy, step, sharded=False, bucket_mb=None, hidden=0.0, peak=4000 << 20, median=None, exec_="eager"):
    return {"strategy": strategy, "bucket_mb": bucket_mb, "sharded": sharded, "precision": "bf16", "world_size": 2,
            "step_ms": step, "step_std_ms": 1.0, "step_median_ms": median if median else step, "forward_ms": 30.0, "backward_ms": 70.0, "comm_wait_ms": 5.0,
            "hidden_share": hidden, "optimizer_ms": 10.0, "memory_peak": peak, "status": "ok", "error": "", "exec": exec_}


FIX_TS_DDP = [
    ts_point("naive", 150.0), ts_point("flat", 140.0), ts_point("overlap", 125.0, hidden=0.6),
    ts_point("bucketed", 108.0, bucket_mb=25, hidden=0.9, median=103.0),
    ts_point("bucketed", 110.0, sharded=True, bucket_mb=25, hidden=0.9, peak=3000 << 20),
    # Compiled (CUDA graphs holding the collectives): in the compiled table only.
    ts_point("flat", 99.0, exec_="compiled"), ts_point("bucketed", 95.0, bucket_mb=25, hidden=-1, exec_="compiled"),
]
FIX_TS_SINGLE = [{"type": "result", "status": "ok", "config": {"precision": "bf16"}, "total": {"mean": 100.0, "median": 98.0}}]


def compare(d, ref, ts_ar, ts_ddp, ts_single):
    paths = {}
    for name, content in (("ref.jsonl", ref), ("ts-allreduce.json", ts_ar), ("ts-ddp.jsonl", ts_ddp),
                          ("ts-single.jsonl", ts_single)):
        paths[name] = os.path.join(d, name)
        with open(paths[name], "w") as f:
            if isinstance(content, list):
                f.write("".join(json.dumps(x) + "\n" for x in content))
            else:
                f.write(json.dumps(content, indent=2) + "\n")  # as `--format json` prints it
    r = subprocess.run([sys.executable, COMPARE, "--ref", paths["ref.jsonl"], "--ts-allreduce", paths["ts-allreduce.json"],
                        "--ts-ddp", paths["ts-ddp.jsonl"], "--ts-single", paths["ts-single.jsonl"]],
                       capture_output=True, text=True, timeout=60)
    if r.stderr:
        print(r.stderr, file=sys.stderr)
    return r.returncode, r.stdout


def test_compare():
    with tempfile.TemporaryDirectory() as d:
        rc, out = compare(d, FIX_REF, FIX_TS_ALLREDUCE, FIX_TS_DDP, FIX_TS_SINGLE)
        print(out)
        check(rc == 0, f"compare: every target met on the good fixture (exit {rc})")
        check("| 256 MiB | 268435456 | fp32 |" in out and "| 0.980 | met |" in out, "compare: 256 MiB busbw ratio 0.980, met")
        check("| 1 MiB | 1048576 | fp32 |" in out and "| 0.500 |  |" in out, "compare: 1 MiB has no target")
        check("| bf16 | bucketed 25 MB | 108.0 |" in out and "| 0.900 | met |" in out, "compare: bucketed 108/120 = 0.900, met")
        check("| bf16 | bucketed 25 MB + ZeRO | 110.0 |" in out and "| 0.846 |" in out,
              "compare: the sharded point against ZeroRedundancyOptimizer (110/130)")
        check("| bf16 | overlap |" in out and "| 60% |" in out and "50% (estimate¹)" in out, "compare: hidden shares")
        check("| 8.0% | 5.1% | met |" in out and "| 20.0% | - | |" in out,
              "compare: overhead ours 8.0% (met; by medians 103/98: 5.1%), PyTorch 20.0%")
        check("| TrainScope bucketed 25 MB + ZeRO | 4000 | 3000 | 1000 |" in out, "compare: ZeRO memory per rank")
        check("| bf16 | bucketed 25 MB | 95.0 | reduce-overhead (of: default 112.0, max-autotune-no-cudagraphs 104.0, "
              "reduce-overhead 100.0) | 100.0 | 120.0 | 0.950 | met |" in out and "| bf16 | flat | 99.0 |" in out,
              "compare: compiled bucketed 95 against the best compile mode (reduce-overhead, 100): 0.950, met")
        check("| bf16 | bucketed 25 MB | 95.0 | 1.0 | DDP |" not in out, "compare: compiled points stay out of the eager tables")

        # Missed targets: busbw 0.90 at 1 GiB, bucketed 1.10× PyTorch, 15% overhead.
        bad_ar = json.loads(json.dumps(FIX_TS_ALLREDUCE))
        bad_ar["rows"][2]["busbw_gbps"] = 270.0
        bad_ddp = [p for p in FIX_TS_DDP if p["strategy"] != "bucketed"] + [ts_point("bucketed", 132.0, bucket_mb=25)]
        bad_ddp.append(ts_point("bucketed", 115.0, bucket_mb=50))
        bad_ddp = [p for p in bad_ddp if p["exec"] == "eager"] + [ts_point("bucketed", 102.0, bucket_mb=25, exec_="compiled")]
        rc, out = compare(d, FIX_REF, bad_ar, bad_ddp, FIX_TS_SINGLE)
        print(out)
        check(rc == 1, f"compare: exit 1 when targets are missed (exit {rc})")
        check("| 0.900 | **missed** |" in out and "all-reduce 1 GiB fp32: ratio 0.900" in out, "compare: busbw missed at 1 GiB")
        check("| bf16 | bucketed 25 MB | 132.0 |" in out and "| 1.100 | **missed** |" in out, "compare: bucketed 1.100 missed")
        check("overhead bf16: the best bucketed is 15.0% > 10%" in out, "compare: the overhead target missed")
        check("| 1.020 | **missed** |" in out and "compiled DDP bf16: ours bucketed 25 MB is 1.020×" in out,
              "compare: compiled 102 against the best compile mode's 100 missed")

        # TrainScope's DDP JSON nested (point/summary, as DdpSpec/DdpSummary) and extra lines.
        nested = [{"type": "progress", "done": 1}]
        for p in FIX_TS_DDP:
            nested.append({"type": "result", "point": {"world_size": 2, "ddp": {
                "strategy": p["strategy"], "bucket_mb": p["bucket_mb"] or 25.0, "shard_optimizer": p["sharded"],
                "precision": "bf16", "exec": p["exec"]}}, "summary": {k: p[k] for k in ("step_ms", "step_std_ms", "forward_ms", "backward_ms",
                                                                     "comm_wait_ms", "hidden_share", "optimizer_ms",
                                                                     "memory_peak")}, "status": "ok"})
        rc, out = compare(d, FIX_REF, FIX_TS_ALLREDUCE, nested, FIX_TS_SINGLE)
        check(rc == 0 and "| bf16 | bucketed 25 MB | 108.0 |" in out and "| bf16 | naive | 150.0 |" in out,
              f"compare: the nested form reads the same (exit {rc})")

        # Nothing from TrainScope: the reference alone, and an exit 1 (the evidence is incomplete).
        rc, out = compare(d, FIX_REF, {"rows": []}, [], [])
        check(rc == 1 and "(TrainScope not run)" in out and "DDP: no TrainScope bucketed point" in out,
              "compare: the reference alone is shown; exit 1")


def main():
    return run(test_compare, lambda py: (test_allreduce(py), test_ddp(py)),
               probe="import torch, torch.distributed as d; assert d.is_available()")


if __name__ == "__main__":
    sys.exit(main())
