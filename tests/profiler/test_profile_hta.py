#!/usr/bin/env python3
"""`profile --kineto-trace` (See Note [Kineto's trace]) read by Holistic Trace Analysis' own
parser (hta.common.trace.Trace, what TraceAnalysis builds on), for TrainScope's model and for
the user's code (the example checkout, through the Python runner).
  cpu: on the CPU: rank 0, the profiled steps as HTA's iterations, CPU ops and the step's
       ranges; the metadata names the point.
  gpu: on a GPU (label gpu; SKIPPED, exit 77, without one): every kernel linked to the CUDA
       runtime call that launched it (HTA's index_correlation), the ac2g flow events,
       deviceProperties.
HTA is found in $TRAINSCOPE_HTA_PYTHON or one of PYTHONS (scripts/test.sh installs it into
LibTorch's venv); without it SKIPPED, unless TRAINSCOPE_REQUIRE_HTA=1 (test.sh sets it).
Usage: test_profile_hta.py cpu|gpu path/to/trainscope-cli PYTHONS(':'-separated)
       test_profile_hta.py gpu-files FOLDER PYTHONS   (traces a GPU run left in
       $TRAINSCOPE_KINETO_TRACES_OUT, checked where HTA is installed)"""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.join(ROOT, "examples", "course-checkout")
STEPS = 2

# Run in HTA's python: parses the folder's trace, prints what the test checks as JSON.
HTA_SCRIPT = r"""
import json, sys, logging
logging.disable(logging.WARNING)
from hta.common.trace import Trace
t = Trace(trace_dir=sys.argv[1])
t.parse_traces(use_multiprocessing=False)
df = t.get_trace(0)
names = t.symbol_table.get_sym_table()
def name(i): return names[int(i)]
cats = df["cat"].map(name)
gpu = df[(df["stream"] > 0) & cats.isin(["kernel", "gpu_memcpy", "gpu_memset"])]
cpu_ops = df[cats == "cpu_op"]
runtime = df[cats == "cuda_runtime"]
print(json.dumps({
    "ranks": [int(r) for r in t.get_ranks()],
    "iterations": [int(i) for i in t.get_iterations()],
    "meta": {k: v for k, v in t.meta_data[0].items() if k in ("distributedInfo", "trainscope")},
    "cpu_ops": int(len(cpu_ops)),
    "cpu_op_names": sorted(set(cpu_ops["name"].map(name)))[:400],
    "annotations": sorted(set(df[cats == "user_annotation"]["name"].map(name))),
    "ops_in_iterations": int((cpu_ops["iteration"] >= 0).sum()),
    "kernels": int(len(gpu)),
    "kernels_linked": int((gpu["index_correlation"] > 0).sum()) if len(gpu) else 0,
    "kernels_linked_to_runtime": int(gpu["index_correlation"].map(
        lambda i: i > 0 and name(df.loc[i, "cat"]) in ("cuda_runtime", "cuda_driver")).sum()) if len(gpu) else 0,
    "kernel_iterations": sorted(int(i) for i in set(gpu["iteration"])) if len(gpu) else [],
    "kernels_outside_iterations": int((gpu["iteration"] < 0).sum()) if len(gpu) else 0,
    "runtime_calls": int(len(runtime)),
}))
"""


def hta_python(pythons):
    for py in [os.environ.get("TRAINSCOPE_HTA_PYTHON", "")] + pythons.split(":"):
        if not py:
            continue
        try:
            if subprocess.run([py, "-c", "import hta.common.trace"], capture_output=True, timeout=120).returncode == 0:
                return py
        except OSError:
            continue
    return None


def check_trace(folder, who, py, gpu, ours, check):
    """HTA's reading of the trace in `folder` (rank0.pt.trace.json), checked."""
    with open(os.path.join(folder, "rank0.pt.trace.json")) as f:
        raw = json.load(f)
    q = subprocess.run([py, "-c", HTA_SCRIPT, folder], capture_output=True, text=True, timeout=600)
    check(q.returncode == 0, f"{who}: HTA parses it ({q.returncode}) {q.stderr[-800:]}")
    if q.returncode != 0:
        return
    r = json.loads(q.stdout.strip().splitlines()[-1])
    print(f"{who}: {r['cpu_ops']} cpu ops, {r['kernels']} kernels, iterations {r['iterations']}")
    check(r["ranks"] == [0], f"{who}: rank 0 ({r['ranks']})")
    check(r["meta"].get("distributedInfo", {}).get("rank") == 0, f"{who}: distributedInfo {r['meta']}")
    check(r["meta"].get("trainscope", {}).get("profile_steps") == STEPS, f"{who}: the point in the metadata")
    check(r["iterations"] == list(range(STEPS)), f"{who}: the profiled steps are HTA's iterations")
    check(r["cpu_ops"] > 0 and r["ops_in_iterations"] > 0, f"{who}: CPU ops, inside the iterations")
    check(any(n in r["cpu_op_names"] for n in ("aten::mm", "aten::matmul", "aten::linear", "aten::addmm")),
          f"{who}: matmuls among the ops")
    check({f"ProfilerStep#{i}" for i in range(STEPS)} <= set(r["annotations"]),
          f"{who}: ProfilerStep#N annotations ({r['annotations'][:10]})")
    if ours:
        check({"forward", "backward", "optimizer"} <= set(r["annotations"]), f"{who}: the step's ranges")
    if gpu:
        flows = [e for e in raw["traceEvents"] if e.get("cat") == "ac2g"]
        check(r["kernels"] > 0, f"{who}: kernels")
        check(r["kernels_linked_to_runtime"] == r["kernels"],
              f"{who}: every kernel linked to its launch ({r['kernels_linked_to_runtime']} of {r['kernels']})")
        check([i for i in r["kernel_iterations"] if i >= 0] == list(range(STEPS)) and
              r["kernels_outside_iterations"] == 0,
              f"{who}: kernels in the iterations {r['kernel_iterations']}, "
              f"{r['kernels_outside_iterations']} outside")
        check(len([e for e in flows if e.get("ph") == "s"]) >= r["kernels"] > 0
              and len([e for e in flows if e.get("ph") == "f"]) >= r["kernels"],
              f"{who}: ac2g flow events from launches to kernels ({len(flows)})")
        check(len(raw.get("deviceProperties", [])) > 0, f"{who}: deviceProperties")


WHO = (("TrainScope's model", "trainscope", []), ("your code", "yours", ["--code", CHECKOUT]))


def main(mode, arg, pythons):
    """mode cpu or gpu: `arg` is trainscope-cli, the traces are made (and kept in
    $TRAINSCOPE_KINETO_TRACES_OUT when set, e.g. to bring a GPU's back); mode gpu-files: `arg` is
    such a folder of GPU traces (trainscope/ and yours/), checked here."""
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    gpu = mode in ("gpu", "gpu-files")
    if mode == "gpu":
        info = subprocess.run([arg, "info"], capture_output=True, text=True)
        if "cuda:0" not in info.stdout:
            print("SKIPPED: no CUDA device")
            return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        root = arg if mode == "gpu-files" else os.environ.get("TRAINSCOPE_KINETO_TRACES_OUT") or tmp
        if mode != "gpu-files":
            env = dict(os.environ, TRAINSCOPE_DB=os.path.join(tmp, "results.db"))
            for who, sub, extra in WHO:
                os.makedirs(os.path.join(root, sub), exist_ok=True)
                path = os.path.join(root, sub, "rank0.pt.trace.json")
                p = subprocess.run([arg, "profile", "--size", "tiny", "--context-length", "32", "--batch-size", "2",
                                    "--warmup", "1", "--profile-steps", str(STEPS), "--device", "cuda" if gpu else "cpu",
                                    "--kineto-trace", path, *extra],
                                   capture_output=True, text=True, env=env, timeout=600)
                check(p.returncode == 0 and os.path.isfile(path),
                      f"{who}: profile --kineto-trace exits 0 ({p.returncode}) {p.stderr[-600:] if p.returncode else ''}")
        py = hta_python(pythons)
        if not py:
            if os.environ.get("TRAINSCOPE_REQUIRE_HTA") == "1" or failures:
                print("FAIL: no python with HolisticTraceAnalysis (scripts/test.sh installs it)")
                return 1
            print("SKIPPED: no python with HolisticTraceAnalysis (scripts/test.sh installs it into LibTorch's venv)"
                  + (f"; the traces are in {root}" if root != tmp else ""))
            return SKIP
        for who, sub, extra in WHO:
            if os.path.isfile(os.path.join(root, sub, "rank0.pt.trace.json")):
                check_trace(os.path.join(root, sub), who, py, gpu, not extra, check)
            else:
                check(False, f"{who}: no trace in {os.path.join(root, sub)}")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""))
