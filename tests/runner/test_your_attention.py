#!/usr/bin/env python3
"""The user's own attention in the attention lab, end to end through trainscope-cli on the CPU:
the example checkout's tiled FlashAttention-2 passes the float64 gate and is timed beside ours
and torch.compile of the naive attention; its Triton version says plainly that Triton needs a
GPU; the deliberately wrong variant fails the gate for the right reason (the causal mask: the
full problems pass); an adapter that raises NotImplementedError is "not done yet", not a failure;
the user's exception is their traceback, the sweep going on; bad input exits 2 before anything
runs. See Note [attention in Python].
Usage: test_your_attention.py path/to/trainscope-cli"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import uuid

CLI = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.join(ROOT, "examples", "course-checkout")
WRONG = os.path.join(ROOT, "examples", "wrong")
SMALL = ["--device", "cpu", "--seq", "16,40", "--head-dim", "16", "--heads", "2", "--batch", "2",
         "--warmup", "1", "--steps", "2", "--jsonl"]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402
from cli_process import CliRunner  # noqa: E402
from runner_server import share_runner_server  # noqa: E402

# See Note [the CLI's fork server]: each command starts from a child of the fork server, without
# LibTorch's start-up; the runner processes it starts are real ones.
RUNNER = None


class YourAttention(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.marker = uuid.uuid4().hex
        self.env = marked_env(self.marker, TRAINSCOPE_DB=os.path.join(self.tmp.name, "results.db"))

    def tearDown(self):
        deadline = time.time() + 10
        while processes_with(self.marker) and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(processes_with(self.marker), [], "a runner process was left behind")
        self.tmp.cleanup()

    def cli(self, *args, timeout=600):
        return RUNNER.run(list(args), env=self.env, timeout=timeout, text=True)

    def cells(self, p):
        return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]

    def write(self, name, body):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def test_the_checkout_beside_ours_and_torch_compile(self):
        p = self.cli("attention", "--code", CHECKOUT, "--impl", "naive", "--causal", "--no-causal", *SMALL)
        self.assertEqual(p.returncode, 0, p.stderr)
        cells = self.cells(p)
        # torch.compile of the naive attention: one shape (each new shape compiles again).
        q = self.cli("attention", "--impl", "torch-compile", *SMALL[:2], "--seq", "40", *SMALL[4:])
        self.assertEqual(q.returncode, 0, q.stderr)
        cells += self.cells(q)
        by_impl = {}
        for c in cells:
            by_impl.setdefault(c["impl"], []).append(c)
        # Ours and the checkout's two over the 4 problems, torch.compile's over one.
        self.assertEqual(sorted(by_impl), ["naive", "torch-compile", "yours-pytorch", "yours-triton"])
        self.assertEqual(len(by_impl["yours-pytorch"]), 4)
        for impl in ("naive", "torch-compile", "yours-pytorch"):
            for c in by_impl[impl]:
                self.assertEqual(c["status"], "ok", c)
                self.assertLessEqual(c["err_out"], c["tolerance"])
                self.assertLessEqual(c["err_grad"], c["tolerance"])
                self.assertEqual(c["tolerance"], 3e-2, "bf16's gate")
                self.assertGreater(c["forward_ms"], 0)
                self.assertGreater(c["backward_ms"], 0)
                self.assertGreaterEqual(c["forward_std_ms"], 0)
                self.assertGreater(c["forward_mean_ms"], 0)
        # torch.compile's first call compiles: it is said apart from the step.
        self.assertGreater(max(c["first_call_ms"] for c in by_impl["torch-compile"]),
                           max(c["forward_ms"] for c in by_impl["torch-compile"]))
        for c in by_impl["yours-triton"]:
            self.assertEqual(c["status"], "unsupported")
            self.assertIn("Triton runs on a GPU", c["error"])
        self.assertIn("FlashAttentionPytorch", p.stderr)
        self.assertIn("2025 edition", p.stderr)

    def test_the_wrong_mask_fails_the_gate_for_the_right_reason(self):
        p = self.cli("attention", "--code", os.path.join(WRONG, "attention_mask_off_by_one.py"),
                     "--impl", "yours-pytorch", "--causal", "--no-causal", *SMALL)
        self.assertEqual(p.returncode, 3, p.stderr)
        cells = self.cells(p)
        self.assertEqual(len(cells), 4)
        for c in cells:
            if c["causal"]:
                self.assertEqual(c["status"], "failed", c)
                self.assertIn("wrong result", c["error"])
                self.assertGreater(c["err_out"], 1e-2)
                self.assertEqual(c["forward_ms"], 0, "a failed cell is not timed")
            else:  # the mask is the only thing wrong
                self.assertEqual(c["status"], "ok", c)

    def test_not_done_yet_is_said_plainly(self):
        os.makedirs(os.path.join(self.tmp.name, "checkout", "tests"))
        with open(os.path.join(self.tmp.name, "checkout", "tests", "adapters.py"), "w") as f:
            f.write("def get_flashattention_autograd_function_pytorch():\n    raise NotImplementedError\n")
        p = self.cli("attention", "--code", os.path.join(self.tmp.name, "checkout"), "--impl", "yours-pytorch",
                     *SMALL)
        self.assertEqual(p.returncode, 0, p.stderr)
        for c in self.cells(p):
            self.assertEqual(c["status"], "unsupported")
            self.assertIn("not done yet", c["error"])

    def test_a_callable_that_raises_is_its_traceback_and_the_sweep_goes_on(self):
        mod = self.write("mine.py", """
            import math
            import torch

            def attend(q, k, v, is_causal):
                s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
                if is_causal:
                    n = q.shape[-2]
                    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
                if q.shape[-2] == 40:
                    raise ValueError("my attention breaks at 40")
                return s.softmax(-1) @ v
        """)
        # Run from the user's folder, where their timeit.py must not shadow the standard
        # library's (see Note [the runner's sys.path]).
        self.write("timeit.py", "raise ImportError('the user\'s timeit.py')\n")
        p = subprocess.run([CLI, "attention", "--code", "mine.py:attend", "--impl", "naive", *SMALL],
                           capture_output=True, text=True, timeout=600, env=self.env, cwd=self.tmp.name)
        self.assertEqual(p.returncode, 3, p.stderr)
        cells = [c for c in self.cells(p) if c["impl"] == "yours"]
        self.assertEqual([c["seq"] for c in cells], [16, 40])
        self.assertEqual(cells[0]["status"], "ok", cells[0])
        self.assertEqual(cells[1]["status"], "failed")
        self.assertIn("my attention breaks at 40", cells[1]["error"])
        self.assertIn("mine.py", cells[1]["error"])
        self.assertIn("raise ValueError", cells[1]["traceback"])
        # The stored run's report shows the user's traceback.
        runs = json.loads(self.cli("runs", "list", "--json").stdout)
        report = self.cli("runs", "show", str(runs[0]["id"]), "--format", "markdown").stdout
        self.assertIn("yours raised", report)
        self.assertIn("my attention breaks at 40", report)

    def test_bad_input_exits_2_before_anything_runs(self):
        for args, words in [
            (["--impl", "yours-pytorch"], "needs --code"),
            (["--code", os.path.join(self.tmp.name, "nowhere.py")], "does not exist"),
            (["--code", CHECKOUT, "--python", "/no/such/python"], "no Python interpreter"),
            (["--impl", "yours-cuda"], "unknown value 'yours-cuda'"),
        ]:
            p = self.cli("attention", *args, "--device", "cpu", "--seq", "16", "--head-dim", "16")
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(words, p.stderr)


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    RUNNER = CliRunner(CLI)
    share_runner_server(CLI)  # See Note [the runner server]: one import of torch for the file
    unittest.main()
