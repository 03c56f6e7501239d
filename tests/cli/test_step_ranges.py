#!/usr/bin/env python3
"""Every lab that runs steps shows them to Nsight Systems as NVTX ranges (See Note [capture
ranges], engine/src/runtime/step_ranges.h), on the CPU as on a GPU: an NVTX injection library
(tests/common/nvtx_recorder.cpp, loaded as nsys loads its own, by NVTX_INJECTION64_PATH) writes
down each process's range pushes and pops, and each run's ranges must be "warmup" around the
warm-up steps "step 0".."step W-1" and then "measured" around the measured ones, balanced:
bench and profile (TrainScope's model and the user's code; memory records on a GPU only), attention (our cells and
the user's function), precision train, and distributed ddp (each Gloo rank, ours and the user's
class). The flag itself is accepted everywhere and says it does nothing on the CPU.
Usage: test_step_ranges.py path/to/trainscope-cli path/to/libnvtx_recorder.so"""
import glob
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from runner_server import share_runner_server  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.join(ROOT, "examples", "course-checkout")
CLI = RECORDER = None
POINT = ["--size", "tiny", "--context-length", "16", "--batch-size", "2", "--warmup", "2", "--device", "cpu",
         "--cuda-profiler-range", "--no-store"]
ATTENTION = ["attention", "--device", "cpu", "--seq", "16", "--head-dim", "16", "--heads", "2", "--batch-size", "1",
             "--dtype", "fp32", "--pass", "forward,backward", "--warmup", "2", "--steps", "3",
             "--cuda-profiler-range", "--no-store"]
DDP = ["distributed", "ddp", "--world", "2", "--size", "tiny", "--context-length", "16", "--batch-size", "2",
       "--warmup", "1", "--steps", "2", "--cuda-profiler-range", "--no-store", "--timeout", "120", "-q"]


def step_groups(log):
    """One process's ranges: per thread, the "warmup" and "measured" ranges in order, each with
    the step numbers directly inside it, e.g. [("warmup", [0, 1]), ("measured", [2, 3, 4])]."""
    threads = {}
    for line in open(log).read().splitlines():
        tid, what, *name = line.split(" ", 2)
        stack, groups = threads.setdefault(tid, ([], []))
        if what == "push":
            name = name[0] if name else ""
            if name in ("warmup", "measured"):
                groups.append((name, []))
            elif name.startswith("step ") and stack and stack[-1] in ("warmup", "measured"):
                groups[-1][1].append(int(name[5:]))
            stack.append(name)
        else:
            assert stack, f"{log}: thread {tid} pops a range it never pushed"
            stack.pop()
    return {tid: (stack, groups) for tid, (stack, groups) in threads.items()}


class StepRanges(unittest.TestCase):
    def run_logged(self, *args, expect_processes=1):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, NVTX_INJECTION64_PATH=RECORDER, TRAINSCOPE_NVTX_LOG=tmp,
                       TRAINSCOPE_DB=os.path.join(tmp, "results.db"))
            p = subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=600)
            self.assertEqual(p.returncode, 0, f"{args}: {p.stdout[-1500:]}{p.stderr[-1500:]}")
            self.assertIn("--cuda-profiler-range does nothing for a run on cpu", p.stderr)
            found = []
            for log in sorted(glob.glob(os.path.join(tmp, "nvtx-*.log"))):
                for tid, (stack, groups) in step_groups(log).items():
                    self.assertEqual(stack, [], f"{args}: ranges left open in {log}")
                    if groups:
                        found.append(groups)
            self.assertEqual(len(found), expect_processes, f"{args}: threads with step ranges: {found}")
            return found

    def assertSteps(self, groups, warmup, measured, repeats=1):
        """`repeats` times warm-up steps 0..warmup-1 then measured warmup..warmup+measured-1."""
        one = ([("warmup", list(range(warmup)))] if warmup else []) + \
              [("measured", list(range(warmup, warmup + measured)))]
        self.assertEqual(groups, one * repeats)

    def test_point_labs(self):
        # (memory records on a CUDA device only: tst_capture_range_gpu runs it there.)
        for lab, extra, measured in (("bench", ["--steps", "3"], 3), ("profile", ["--profile-steps", "2"], 2)):
            with self.subTest(lab=lab):
                [groups] = self.run_logged(lab, *POINT, *extra)
                self.assertSteps(groups, 2, measured)
        with self.subTest(lab="bench --code"):  # the user's model, through the Python runner
            [groups] = self.run_logged("bench", *POINT, "--steps", "3", "--code", CHECKOUT)
            self.assertSteps(groups, 2, 3)

    def test_attention(self):
        # Each cell opens its own: naive and tiled on one problem.
        [groups] = self.run_logged(*ATTENTION, "--impl", "naive,tiled")
        self.assertSteps(groups, 2, 3, repeats=2)
        [groups] = self.run_logged(*ATTENTION, "--impl", "yours-pytorch", "--code", CHECKOUT)
        self.assertSteps(groups, 2, 3)

    def test_precision_train(self):
        [groups] = self.run_logged("precision", "train", "--dtype", "fp32,bf16", "--steps", "3",
                                   "--cuda-profiler-range")
        self.assertSteps(groups, 0, 3, repeats=2)

    def test_distributed_ddp(self):
        for strategy in ("naive", "yours-individual"):
            with self.subTest(strategy=strategy):
                code = ["--code", CHECKOUT] if strategy.startswith("yours") else []
                found = self.run_logged(*DDP, "--strategy", strategy, *code, expect_processes=2)
                for groups in found:  # each rank
                    self.assertSteps(groups, 1, 2)


if __name__ == "__main__":
    CLI, RECORDER = (os.path.abspath(a) for a in sys.argv[1:3])
    del sys.argv[1:3]
    # See Note [the runner server]: the runner's ranges from a forked child, as from a new process
    share_runner_server(CLI)
    unittest.main()
