#!/usr/bin/env python3
"""--cuda-profiler-range on a GPU (label gpu; SKIPPED, exit 77, without one): bench, profile and
memory run a tiny point with it and exit 0, TrainScope's model and the user's code (the example
checkout, through the Python runner); so do attention (our kernels and the user's), precision
train and distributed ddp (one NCCL rank, ours and the user's class), and each run's NVTX ranges,
recorded by tests/common/nvtx_recorder.cpp as test_step_ranges.py records them on the CPU, are
"warmup" then "measured" around the right steps. Where Nsight Systems (`nsys`) is on PATH, it records a
bench run with --capture-range=cudaProfilerApi and with --capture-range=nvtx
--nvtx-capture=measured, and each report must hold the measured steps' NVTX ranges and not the
warm-up's (See Note [capture ranges]).
Usage: test_capture_range_gpu.py path/to/trainscope-cli [path/to/libnvtx_recorder.so]"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_step_ranges import step_groups  # noqa: E402

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.join(ROOT, "examples", "course-checkout")
POINT = ["--size", "tiny", "--context-length", "64", "--batch-size", "2", "--warmup", "2", "--device", "cuda",
         "--cuda-profiler-range"]


def nvtx_ranges(nsys, report, tmp):
    """The NVTX range names in an nsys report (its SQLite export)."""
    sqlite = os.path.join(tmp, os.path.basename(report).replace(".nsys-rep", ".sqlite"))
    subprocess.run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", sqlite, report],
                   capture_output=True, text=True, timeout=300, check=True)
    db = sqlite3.connect(sqlite)
    try:
        rows = db.execute("SELECT COALESCE(NVTX_EVENTS.text, StringIds.value) FROM NVTX_EVENTS "
                          "LEFT JOIN StringIds ON NVTX_EVENTS.textId = StringIds.id").fetchall()
    finally:
        db.close()
    return {r[0] for r in rows if r[0]}


def main(cli, recorder):
    info = subprocess.run([cli, "info"], capture_output=True, text=True)
    if "cuda:0" not in info.stdout:
        print("SKIPPED: no CUDA device")
        return SKIP
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TRAINSCOPE_DB=os.path.join(tmp, "results.db"))

        def run(*args, tool=()):
            return subprocess.run([*tool, cli, *args], capture_output=True, text=True, env=env, timeout=600)

        for lab, extra in (("bench", ["--steps", "3"]), ("profile", ["--profile-steps", "2"]),
                           ("memory", ["--record-steps", "1"])):
            p = run(lab, *POINT, *extra)
            check(p.returncode == 0, f"{lab} --cuda-profiler-range exits 0 ({p.returncode}) {p.stderr[-400:]}")
            check("does nothing" not in p.stderr, f"{lab}: no CPU note on a GPU")
            p = run(lab, *POINT, *extra, "--code", CHECKOUT)
            check(p.returncode == 0, f"{lab} --code --cuda-profiler-range exits 0 ({p.returncode}) {p.stderr[-400:]}")

        # The other labs that run steps: exit 0 with the flag, and their NVTX ranges.
        def ranges_of(*args):
            logs = tempfile.mkdtemp(dir=tmp)
            p = subprocess.run([cli, *args, "--cuda-profiler-range"], capture_output=True, text=True, timeout=600,
                               env=dict(env, NVTX_INJECTION64_PATH=recorder or "", TRAINSCOPE_NVTX_LOG=logs))
            check(p.returncode == 0, f"{args[:2]} --cuda-profiler-range exits 0 ({p.returncode}) {p.stderr[-400:]}")
            found = []
            for log in sorted(os.listdir(logs)):
                found += [g for stack, g in step_groups(os.path.join(logs, log)).values() if g]
            return found

        def expect(warmup, measured, repeats=1):
            return (([("warmup", list(range(warmup)))] if warmup else []) +
                    [("measured", list(range(warmup, warmup + measured)))]) * repeats

        attention = ["attention", "--device", "cuda", "--seq", "256", "--head-dim", "64", "--dtype", "bf16",
                     "--warmup", "2", "--steps", "3", "--no-store"]
        ddp = ["distributed", "ddp", "--backend", "nccl", "--world", "1", "--size", "tiny", "--context-length", "64",
               "--batch-size", "2", "--warmup", "1", "--steps", "2", "--no-store", "--timeout", "300", "-q"]
        for what, args, want in (
                ("attention", [*attention, "--impl", "naive,flash"], expect(2, 3, 2)),
                ("attention --code", [*attention, "--impl", "yours-pytorch", "--code", CHECKOUT], expect(2, 3)),
                ("precision train", ["precision", "train", "--device", "cuda", "--dtype", "bf16", "--steps", "3"],
                 expect(0, 3)),
                ("ddp", [*ddp, "--strategy", "bucketed"], expect(1, 2)),
                ("ddp --code", [*ddp, "--strategy", "yours-individual", "--code", CHECKOUT], expect(1, 2))):
            found = ranges_of(*args)
            if recorder:
                check(found == [want], f"{what}: NVTX ranges {found}")

        nsys = shutil.which("nsys")
        if not nsys:
            print("note: no nsys on PATH: the capture itself is not checked")
        else:
            for name, flags in (("api", ["--capture-range=cudaProfilerApi"]),
                                ("nvtx", ["--capture-range=nvtx", "--nvtx-capture=measured"])):
                report = os.path.join(tmp, f"capture-{name}")
                p = run("bench", *POINT, "--steps", "3", "--no-store",
                        tool=(nsys, "profile", "-t", "cuda,nvtx", *flags, "--capture-range-end=stop",
                              "--force-overwrite", "true", "-o", report))
                check(p.returncode == 0, f"nsys {' '.join(flags)} exits 0 ({p.returncode}) {p.stderr[-400:]}")
                if p.returncode != 0:
                    continue
                names = nvtx_ranges(nsys, report + ".nsys-rep", tmp)
                # Steps 0 and 1 are the warm-up, 2 to 4 measured.
                check({"step 2", "step 3", "step 4", "forward"} <= names, f"{name}: the measured steps are in {sorted(names)[:12]}")
                check(not ({"step 0", "step 1", "warmup"} & names), f"{name}: the warm-up is not")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None))
