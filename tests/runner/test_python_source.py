#!/usr/bin/env python3
"""The user's own PyTorch code on the benchmark's bench (the Python source), end to end through
trainscope-cli on the CPU: the example course checkout and a module:callable are timed step by
step beside TrainScope's own model; `--check` says what was found; and every way the user's code
can fail (import, construction, forward, backward, optimizer step, a wrong return, no torch, a
hang, an out-of-memory, a segfault) ends that point with the user's message, file and line, the
sweep going on where it can, exit codes as everywhere, no runner process left behind.
Usage: test_python_source.py path/to/trainscope-cli"""
import json
import os
import signal
import sqlite3
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
TINY = ["--size", "tiny", "--device", "cpu", "--context-length", "16", "--batch-size", "2", "--warmup", "1",
        "--steps", "2"]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402
from cli_process import CliRunner  # noqa: E402
from runner_server import share_runner_server  # noqa: E402

# See Note [the CLI's fork server]: each command starts from a child of the fork server, without
# LibTorch's start-up; the runner processes it starts are real ones.
RUNNER = None


class PythonSource(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")
        self.marker = uuid.uuid4().hex
        self.env = marked_env(self.marker, TRAINSCOPE_DB=self.db)

    def tearDown(self):
        deadline = time.time() + 10
        while processes_with(self.marker) and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(processes_with(self.marker), [], "a runner process was left behind")
        self.tmp.cleanup()

    def cli(self, *args, timeout=300):
        return RUNNER.run(list(args), env=self.env, timeout=timeout, text=True)

    def write(self, name, body):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def results(self, p):
        return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{") and '"result"' in l]

    # ---- what works

    def test_the_example_checkout_is_timed_step_by_step(self):
        p = self.cli("bench", "--code", CHECKOUT, *TINY, "--jsonl")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cs336_basics.model.BasicsTransformerLM", p.stderr, "says what it found")
        self.assertIn("cs336_basics.optimizer.AdamW", p.stderr)
        [r] = self.results(p)
        self.assertEqual(r["status"], "ok", r["error"])
        self.assertEqual(r["config"]["source"], "python")
        self.assertEqual(len(r["steps"]), 3)
        self.assertEqual([s["warmup"] for s in r["steps"]], [True, False, False])
        for s in r["steps"]:
            self.assertGreater(s["forward_ms"], 0)
            self.assertGreater(s["backward_ms"], 0)
            self.assertGreater(s["optimizer_ms"], 0)
            self.assertAlmostEqual(s["total_ms"], s["forward_ms"] + s["backward_ms"] + s["optimizer_ms"], delta=1.0)
            self.assertGreater(s["loss"], 0)
        self.assertEqual(r["total"]["count"], 2)
        # The course model of the checkout: TrainScope's count of its parameters (untied head,
        # no biases, two RMSNorm gains a layer) is the model's own.
        self.assertEqual(r["parameter_count"], 10000 * 64 * 2 + 2 * (4 * 64 * 64 + 3 * 64 * 256 + 2 * 64) + 64)
        # Stored, and shown again with its source.
        shown = self.cli("runs", "show", "1", "--format", "markdown")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn("python", shown.stdout)

    def test_yours_beside_trainscopes_in_one_sweep(self):
        p = self.cli("bench", "--code", CHECKOUT, "--source", "trainscope,python", *TINY, "--markdown")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| source", p.stdout)
        self.assertIn("trainscope", p.stdout)
        self.assertIn("python", p.stdout)
        runs = json.loads(self.cli("runs", "list", "--json").stdout)
        self.assertEqual((runs[0]["points"], runs[0]["ok"]), (2, 2))
        # A stored run's spec runs again as a sweep file, the user's code with it.
        with sqlite3.connect(self.db) as c:
            spec = c.execute("SELECT spec_json FROM runs WHERE id = ?", (runs[0]["id"],)).fetchone()[0]
        self.assertEqual(json.loads(spec)["sources"], ["trainscope", "python"])
        again = self.cli("bench", "--sweep", self.write("again.json", spec), "-q")
        self.assertEqual(again.returncode, 0, again.stderr)
        runs = json.loads(self.cli("runs", "list", "--json").stdout)
        self.assertEqual((runs[0]["points"], runs[0]["ok"]), (2, 2))

    def test_a_callable_and_an_optimizer_of_the_users(self):
        opt = self.write("myopt.py", """
            import torch
            def sgd(params, lr):
                return torch.optim.SGD(params, lr=lr)
        """)
        p = self.cli("bench", "--code", os.path.join(ROOT, "examples", "my_model.py") + ":build",
                     "--optimizer", opt + ":sgd", *TINY, "--jsonl")
        self.assertEqual(p.returncode, 0, p.stderr)
        [r] = self.results(p)
        self.assertEqual(r["status"], "ok", r["error"])
        self.assertIn("myopt.py:sgd", p.stderr)
        self.assertNotIn("tflops", r, "an arbitrary model's FLOPs are not guessed")

    def test_check_says_what_it_found(self):
        p = self.cli("bench", "--code", CHECKOUT, "--check")
        self.assertEqual(p.returncode, 0, p.stderr)
        for text in ("torch", "A course checkout", "cs336_basics.model.BasicsTransformerLM",
                     "get_ddp_bucketed (implemented)"):
            self.assertIn(text, p.stdout)
        self.assertFalse(os.path.exists(self.db) and json.loads(self.cli("runs", "list", "--json").stdout),
                         "nothing is run or stored")

    def test_torch_compile_runs_the_users_model(self):
        p = self.cli("bench", "--code", CHECKOUT, *TINY, "--exec", "eager,compiled", "--jsonl", timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        rs = self.results(p)
        self.assertEqual([r["config"]["exec"] for r in rs], ["eager", "compiled"])
        for r in rs:
            self.assertEqual(r["status"], "ok", r["error"])
        # The compilation is timed apart from the steps: the first step's wall time holds it.
        eager, compiled = rs
        self.assertGreater(compiled["first_step_ms"], 5 * compiled["total"]["mean"], compiled["first_step_ms"])
        run = json.loads(self.cli("runs", "list", "--json").stdout)[0]["id"]
        shown = self.cli("runs", "show", str(run))
        self.assertIn("compile (s)", shown.stdout)

    def test_the_profiler_attributes_the_users_ops_to_phases_and_modules(self):
        args = ["profile", "--code", CHECKOUT, "--size", "tiny", "--device", "cpu", "--context-length", "16",
                "--batch-size", "2", "--warmup", "1", "--profile-steps", "1", "--jsonl"]
        p = self.cli(*args)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout.splitlines()[-1])
        self.assertEqual(doc["status"], "ok", doc["error"])
        self.assertEqual(doc["spec"]["bench"]["source"], "python")
        phases = {x["phase"]: x for x in doc["phases"]}
        for phase in ("forward", "backward", "optimizer"):
            self.assertGreater(phases[phase]["measured_ms"], 0, phase)
        ops = {x["op"] for x in doc["ops"]}
        self.assertTrue(ops & {"aten::mm", "aten::matmul", "aten::linear", "aten::addmm"}, ops)
        # The user's submodules are ranges: the attention's softmax is found inside "attn".
        p = self.cli(*args, "--range", "attn", "--top", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        in_attention = {x["op"] for x in json.loads(p.stdout.splitlines()[-1])["ops"]}
        self.assertIn("aten::softmax", in_attention)
        self.assertNotIn("aten::embedding", in_attention)
        # The attention's parts, found in the user's code by shape (Note [attention parts of the
        # user's code]): the scores' matmul, the softmax, the values' matmul; the projections are
        # in none of them. At context 32 (tiny's heads are 16 wide: a 16×16 tensor is ambiguous).
        parts_args = [a if a != "16" else "32" for a in args] + ["--top", "0"]
        ops_in = {}
        for part in ("scores", "softmax", "values"):
            p = self.cli(*parts_args, "--range", part)
            self.assertEqual(p.returncode, 0, p.stderr)
            ops_in[part] = {x["op"] for x in json.loads(p.stdout.splitlines()[-1])["ops"]}
        self.assertTrue(ops_in["scores"] & {"aten::matmul", "aten::bmm", "aten::einsum"}, ops_in)
        self.assertIn("aten::softmax", ops_in["softmax"])
        self.assertNotIn("aten::softmax", ops_in["scores"] | ops_in["values"])
        self.assertTrue(ops_in["values"] & {"aten::matmul", "aten::bmm", "aten::einsum"}, ops_in)
        self.assertFalse((ops_in["scores"] | ops_in["values"]) & {"aten::linear", "aten::addmm", "aten::embedding"},
                         ops_in)
        report = self.cli(*[a for a in parts_args if a != "--jsonl"], "--no-store")
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertRegex(report.stdout, r"(?s)Attention.*scores.*softmax.*values")
        # Stored as a profile run of the user's code, and shown again.
        runs = json.loads(self.cli("runs", "list", "--json").stdout)
        self.assertEqual(runs[0]["kind"], "profile")
        shown = self.cli("runs", "show", str(runs[0]["id"]))
        self.assertEqual(shown.returncode, 0, shown.stderr)

    def test_the_memory_lab_takes_the_users_code_and_says_what_it_needs(self):
        sweep = self.write("memory.json", json.dumps({"base": {"size": "tiny", "context_length": 16, "device": "cpu",
                                                               "source": "python", "code": CHECKOUT}}))
        p = self.cli("bench", "--sweep", sweep, "--no-store", "-q")
        self.assertEqual(p.returncode, 0, p.stderr)  # the benchmark runs it from a sweep file too
        # On the CPU there is no caching allocator to record: the point fails saying so (and
        # whose code it was), the analytic model is shown, and the run is stored.
        p = self.cli("memory", "--size", "tiny", "--device", "cpu", "--code", CHECKOUT, "--jsonl")
        self.assertEqual(p.returncode, 3, p.stderr)
        [doc] = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        self.assertEqual(doc["status"], "failed")
        self.assertIn("needs a CUDA device", doc["error"])
        self.assertEqual(doc["spec"]["bench"]["source"], "python")
        self.assertEqual(json.loads(self.cli("runs", "list", "--json").stdout)[0]["kind"], "memory")
        # What the memory lab cannot do with the user's code is refused before anything runs.
        p = self.cli("memory", "--size", "tiny", "--device", "cpu", "--code", CHECKOUT, "--stacks")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("your Python file and line", p.stderr)
        p = self.cli("memory", "--size", "tiny", "--device", "cpu", "--code", "/no/such/checkout")
        self.assertEqual(p.returncode, 2, p.stderr)

    # ---- the user's code failing

    def failing(self, name, body, *extra, code_suffix=":build"):
        path = self.write(name, body)
        return self.cli("bench", "--code", path + code_suffix, *TINY, "--jsonl", *extra)

    def assert_failed_with(self, p, *texts):
        self.assertEqual(p.returncode, 3, p.stderr)
        [r] = self.results(p)
        self.assertEqual(r["status"], "failed")
        for t in texts:
            self.assertIn(t, r["error"])
        self.assertNotIn("trainscope_runner", r["error"], "the runner's own frames are left out")
        return r

    def test_an_import_error_shows_the_users_traceback(self):
        p = self.failing("broken_import.py", """
            import torch
            x = 1
            raise ValueError("boom at import")
            def build(**kw):
                pass
        """)
        self.assert_failed_with(p, "ValueError: boom at import", "broken_import.py:4", "Traceback")

    def test_errors_in_each_phase_are_named(self):
        body = """
            import torch, torch.nn as nn
            class M(nn.Module):
                def __init__(self, vocab_size, d_model):
                    super().__init__()
                    self.e = nn.Embedding(vocab_size, d_model)
                    self.h = nn.Linear(d_model, vocab_size)
                def forward(self, x):
                    {forward}
            class BadOpt(torch.optim.SGD):
                def step(self, closure=None):
                    raise RuntimeError("step is broken")
            def build(vocab_size, d_model):
                {build}
            def bad_opt(params, lr):
                return BadOpt(params, lr=lr)
        """
        ok_forward = "return self.h(self.e(x))"
        cases = [
            ("construct.py", ok_forward, 'raise KeyError("no such layer")', (), ["construct", "KeyError", "construct.py:"]),
            ("wrong.py", ok_forward, "return 42", (), ["returned a builtins.int, not a torch.nn.Module"]),
            ("fwd.py", 'raise IndexError("forward is broken")', "return M(vocab_size, d_model)", (),
             ["forward raised IndexError: forward is broken", "fwd.py:"]),
            ("bwd.py", "return self.h(self.e(x)).detach()", "return M(vocab_size, d_model)", (),
             ["backward raised RuntimeError"]),
            ("opt.py", ok_forward, "return M(vocab_size, d_model)", ("--optimizer", "OPT"),
             ["optimizer step raised RuntimeError: step is broken", "opt.py:"]),
        ]
        for name, forward, build, extra, texts in cases:
            with self.subTest(name):
                src = body.replace("{forward}", forward).replace("{build}", build)
                path = self.write(name, textwrap.dedent(src))
                extra = tuple(path + ":bad_opt" if e == "OPT" else e for e in extra)
                p = self.cli("bench", "--code", path + ":build", *extra, *TINY, "--jsonl")
                self.assert_failed_with(p, *texts)

    def test_the_sweep_goes_on_after_a_failed_point(self):
        path = self.write("picky.py", """
            import torch.nn as nn
            def build(vocab_size, d_model, context_length):
                if context_length == 16:
                    raise ValueError("16 is not my size")
                return nn.Sequential(nn.Embedding(vocab_size, d_model), nn.Linear(d_model, vocab_size))
        """)
        p = self.cli("bench", "--code", path + ":build", "--size", "tiny", "--device", "cpu", "--context-length",
                     "16,24", "--batch-size", "1", "--warmup", "0", "--steps", "1", "--jsonl")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual([r["status"] for r in self.results(p)], ["failed", "ok"])
        runs = json.loads(self.cli("runs", "list", "--json").stdout)
        self.assertEqual((runs[0]["points"], runs[0]["ok"]), (2, 1), "both points are kept")

    def test_a_python_without_torch(self):
        shim = os.path.join(self.tmp.name, "shim")
        os.makedirs(shim)
        with open(os.path.join(shim, "torch.py"), "w") as f:
            f.write('raise ImportError("No module named torch (a shim)")\n')
        fake = self.write("python-without-torch", f"#!/bin/sh\nPYTHONPATH={shim}:$PYTHONPATH exec {sys.executable} \"$@\"\n")
        os.chmod(fake, 0o755)
        p = self.cli("bench", "--code", CHECKOUT, "--python", fake, *TINY, "--jsonl")
        r = self.assert_failed_with(p, "cannot import torch", "a shim")
        self.assertEqual(r["steps"], [])

    def test_an_interpreter_or_code_that_is_not_there_is_refused_up_front(self):
        cases = [
            (["--code", CHECKOUT, "--python", "/no/such/python"], "--python: no Python interpreter '/no/such/python'"),
            (["--code", "/no/such/file.py:build"], "'/no/such/file.py' does not exist"),
            (["--code", "justaname"], "neither a folder nor module:callable"),
            (["--python", "python3"], "--python is for your own code: give --code too"),
            (["--source", "python"], "give your code with --code"),
            (["--code", CHECKOUT, "--timeout", "0"], "--timeout: 0 is outside"),
            (["--code", CHECKOUT, "--source", "trainscope"], "add python to run yours"),
            (["--exec", "reduce-overhead"], "for the user's code (--code) only"),
        ]
        for args, text in cases:
            with self.subTest(args):
                p = self.cli("bench", *args, *TINY)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(text, p.stderr)
        self.assertFalse(os.path.exists(self.db) and json.loads(self.cli("runs", "list", "--json").stdout))

    def test_a_hung_step_is_stopped_by_the_timeout(self):
        t0 = time.time()
        p = self.failing("hang.py", """
            import time, torch.nn as nn
            class M(nn.Module):
                def __init__(self, v, d):
                    super().__init__()
                    self.e, self.h = nn.Embedding(v, d), nn.Linear(d, v)
                def forward(self, x):
                    time.sleep(600)
            def build(vocab_size, d_model):
                return M(vocab_size, d_model)
        """, "--timeout", "3")
        self.assert_failed_with(p, "wrote nothing for 3 s")
        self.assertLess(time.time() - t0, 60)

    def test_out_of_memory_is_a_result(self):
        p = self.failing("oom.py", """
            import torch, torch.nn as nn
            class M(nn.Module):
                def __init__(self, v, d):
                    super().__init__()
                    self.e, self.h = nn.Embedding(v, d), nn.Linear(d, v)
                def forward(self, x):
                    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
            def build(vocab_size, d_model):
                return M(vocab_size, d_model)
        """)
        self.assertEqual(p.returncode, 0, p.stderr)
        [r] = self.results(p)
        self.assertEqual(r["status"], "OOM")
        self.assertIn("Tried to allocate 20.00 GiB", r["error"])
        self.assertIn("oom.py:", r["error"])

    def test_a_segfault_in_an_extension(self):
        p = self.failing("segv.py", """
            import ctypes, torch.nn as nn
            class M(nn.Module):
                def __init__(self, v, d):
                    super().__init__()
                    self.e, self.h = nn.Embedding(v, d), nn.Linear(d, v)
                def forward(self, x):
                    ctypes.string_at(0)
            def build(vocab_size, d_model):
                return M(vocab_size, d_model)
        """)
        self.assert_failed_with(p, "the Python runner was killed by signal 11 (SIGSEGV)")

    def test_ctrl_c_stops_the_runner_and_keeps_what_was_measured(self):
        proc = subprocess.Popen([CLI, "bench", "--code", CHECKOUT, "--size", "tiny", "--device", "cpu",
                                 "--context-length", "16,32", "--batch-size", "1", "--warmup", "0", "--steps",
                                 "100000", "--jsonl"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        for line in proc.stdout:
            if '"step"' in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        runs = json.loads(self.cli("runs", "list", "--json").stdout)
        self.assertEqual(runs[0]["points"], 1, "the stopped point is kept")
        with sqlite3.connect(self.db) as c:
            status = c.execute("SELECT status FROM points").fetchone()[0]
        self.assertEqual(status, "cancelled")


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    RUNNER = CliRunner(CLI)
    share_runner_server(CLI)  # See Note [the runner server]: one import of torch for the file
    unittest.main(verbosity=2)
