#!/usr/bin/env python3
"""The user's DDP classes, sharded optimizer and FSDP in the distributed lab, end to end through
trainscope-cli on Gloo (CPU processes): every class of the examples passes the course's check
(every rank's parameters equal single-process training) on 2 and 4 ranks, beside PyTorch's DDP
and TrainScope's own; the 2026 edition's adapters are found as such; each deliberately wrong
variant fails the check for its reason; a hook that raises is the user's traceback with the
rank, as are a wrong signature, a rank that dies and gradients on the wrong device; a collective
on one rank only is stopped by the rank timeout; nothing is left running.
See Note [your DDP classes].
Usage: test_your_ddp.py path/to/trainscope-cli"""
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
CHECKOUT_2026 = os.path.join(ROOT, "examples", "course-checkout-2026")
WRONG = os.path.join(ROOT, "examples", "wrong")
TINY = ["--size", "tiny", "--context-length", "16", "--batch", "2", "--warmup", "1", "--steps", "1",
        "--format", "json", "--timeout", "120"]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402
from cli_process import CliRunner  # noqa: E402
from runner_server import share_runner_server  # noqa: E402

# See Note [the CLI's fork server]: each command starts from a child of the fork server, without
# LibTorch's start-up; the runner processes it starts are real ones.
RUNNER = None


class YourDdp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.marker = uuid.uuid4().hex
        self.env = marked_env(self.marker, TRAINSCOPE_DB=os.path.join(self.tmp.name, "results.db"))

    def tearDown(self):
        deadline = time.time() + 10
        while processes_with(self.marker) and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(processes_with(self.marker), [], "a rank was left running")
        self.tmp.cleanup()

    def ddp(self, *args, world=2, timeout=600):
        return RUNNER.run(["distributed", "ddp", "--world", str(world), *args], env=self.env, timeout=timeout,
                          text=True)

    def points(self, p):
        return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]

    def write_adapters(self, body):
        path = os.path.join(self.tmp.name, "my_adapters.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def assert_passed(self, point):
        self.assertEqual(point["status"], "ok", point)
        self.assertTrue(point["check"]["passed"], point["check"])
        self.assertLess(point["check"]["max_diff"], 1e-5)
        self.assertEqual(point["steps"], 1)
        self.assertGreater(point["step_ms"], 0)

    # ---- the examples pass

    def test_the_checkout_beside_pytorch_and_ours(self):
        p = self.ddp("--code", CHECKOUT, *TINY)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = {q["strategy"]: q for q in self.points(p)}
        self.assertEqual(sorted(points), ["bucketed", "torch-ddp", "yours-bucketed", "yours-individual"])
        for s in ("yours-individual", "yours-bucketed", "torch-ddp"):
            self.assert_passed(points[s])
        self.assertEqual(points["yours-individual"]["what"], "cs336_systems.ddp.DDPIndividualParameters")
        self.assertNotIn("check", points["bucketed"], "TrainScope's own are checked by its tests")
        # The user's collectives are counted and sized.
        self.assertGreater(points["yours-bucketed"]["hidden_ms"], -1)
        self.assertIn("the course's check passed", p.stderr)
        self.assertIn("2025 edition", p.stderr)

    def test_four_ranks_with_the_users_sharded_optimizer(self):
        p = self.ddp("--code", CHECKOUT, "--strategy", "yours-individual", "--shard", "both", *TINY, world=4)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = self.points(p)
        self.assertEqual(len(points), 2)
        for q in points:
            self.assert_passed(q)
        state = {q["sharded"]: q["optimizer_state_bytes"] for q in points}
        # AdamW's two moments of every parameter, against about a quarter of them on each of 4 ranks.
        self.assertLess(state[True], 0.5 * state[False])

    def test_the_2026_edition(self):
        p = self.ddp("--code", CHECKOUT_2026, "--strategy", "yours", *TINY)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = {q["strategy"]: q for q in self.points(p)}
        self.assertEqual(sorted(points), ["yours-ddp", "yours-fsdp"])
        for q in points.values():
            self.assert_passed(q)
        self.assertIn("2026 edition", p.stderr)
        # FSDP keeps 1/world of the sharded weights on each rank.
        self.assertLess(points["yours-fsdp"]["parameter_bytes"], 0.75 * points["yours-ddp"]["parameter_bytes"])

    # ---- the wrong variants fail the check, each for its reason

    def test_the_wrong_variants_fail_the_check(self):
        for name, strategy, shard in [("ddp_not_averaged.py", "yours-individual", "off"),
                                      ("ddp_bucketed_stale.py", "yours-bucketed", "off"),
                                      ("sharded_optimizer_no_broadcast.py", "yours-individual", "on"),
                                      ("fsdp_not_averaged.py", "yours-fsdp", "off")]:
            with self.subTest(name):
                p = self.ddp("--code", os.path.join(WRONG, name), "--strategy", strategy, "--shard", shard, *TINY)
                self.assertEqual(p.returncode, 3, p.stderr)
                [q] = self.points(p)
                self.assertEqual(q["status"], "failed")
                self.assertFalse(q["check"]["passed"])
                self.assertGreater(q["check"]["max_diff"], 1e-4)
                self.assertIn("wrong result", q["error"])
                self.assertEqual(q["steps"], 0, "a class that fails the check is not timed")

    # ---- the user's failures are theirs, said with the rank

    def test_a_hook_that_raises_is_the_users_traceback_with_the_rank(self):
        code = self.write_adapters(f"""
            import sys
            sys.path.insert(0, {CHECKOUT!r})  # the hook builds on the example's class
            import torch.distributed as dist
            from cs336_systems.ddp import DDPIndividualParameters

            def get_ddp_individual_parameters(module):
                return DDPIndividualParameters(module)

            def ddp_individual_parameters_on_after_backward(model, optimizer):
                if dist.get_rank() == 1:
                    raise RuntimeError("my hook is broken")
                model.finish_gradient_synchronization()
        """)
        p = self.ddp("--code", code, "--strategy", "yours-individual", *TINY)
        self.assertEqual(p.returncode, 3, p.stderr)
        [q] = self.points(p)
        self.assertEqual(q["status"], "failed")
        self.assertIn("my hook is broken", q["error"])
        self.assertIn("my_adapters.py", q["error"])
        self.assertIn("rank 1", p.stderr)
        # The user's traceback, their frames: printed, and kept with the point.
        self.assertIn('raise RuntimeError("my hook is broken")', p.stderr)
        self.assertIn("my_adapters.py", q["traceback"])

    def test_a_collective_on_one_rank_only_is_stopped_by_the_timeout(self):
        code = self.write_adapters("""
            import torch
            import torch.distributed as dist

            class Lonely(torch.nn.Module):
                def __init__(self, module):
                    super().__init__()
                    self.module = module

                def forward(self, *args, **kwargs):
                    return self.module(*args, **kwargs)

            def get_ddp_individual_parameters(module):
                return Lonely(module)

            def ddp_individual_parameters_on_after_backward(model, optimizer):
                if dist.get_rank() == 0:  # rank 1 never joins: a hang
                    dist.all_reduce(torch.zeros(1))
        """)
        started = time.time()
        p = self.ddp("--code", code, "--strategy", "yours-individual", *TINY[:-2], "--timeout", "15")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertLess(time.time() - started, 120)
        self.assertRegex(p.stderr, r"rank [01]")

    def test_a_file_named_like_a_module_in_the_working_folder_shadows_nothing(self):
        # See Note [the runner's sys.path]: a user's timeit.py beside them broke `import torch`.
        with open(os.path.join(self.tmp.name, "timeit.py"), "w") as f:
            f.write("raise ImportError('this is the user\'s timeit.py')\n")
        p = subprocess.run([CLI, "distributed", "ddp", "--world", "2", "--strategy", "torch-ddp", *TINY],
                           capture_output=True, text=True, timeout=600, env=self.env, cwd=self.tmp.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        [q] = self.points(p)
        self.assert_passed(q)

    def test_a_wrong_signature_a_rank_that_dies_and_gradients_on_the_wrong_device(self):
        base = f"""
            import os, sys
            sys.path.insert(0, {CHECKOUT!r})
            import torch.distributed as dist
            from cs336_systems.ddp import DDPIndividualParameters

            def get_ddp_individual_parameters(module):
                return DDPIndividualParameters(module)
        """
        cases = {
            # a constructor adapter without the module argument: the user's TypeError, said
            "signature": ("""
                def get_ddp_individual_parameters():
                    return None

                def ddp_individual_parameters_on_after_backward(model, optimizer):
                    pass
            """, ["takes 0 positional arguments", "get_ddp_individual_parameters()"]),
            # rank 1 leaves mid-step without a word: the run says which rank and how it ended
            "dies": (textwrap.dedent(base) + textwrap.dedent("""
                def ddp_individual_parameters_on_after_backward(model, optimizer):
                    if dist.get_rank() == 1:
                        os._exit(7)
                    model.finish_gradient_synchronization()
            """), ["rank 1 failed (exit code 7)"]),
            # gradients put on another device than the parameters: PyTorch's error, the user's line
            "device": (textwrap.dedent(base) + textwrap.dedent("""
                def ddp_individual_parameters_on_after_backward(model, optimizer):
                    model.finish_gradient_synchronization()
                    for p in model.parameters():
                        p.grad = p.grad.to("meta")
            """), ["device type 'meta'", 'p.grad = p.grad.to("meta")']),
        }
        for name, (body, words) in cases.items():
            with self.subTest(name):
                code = self.write_adapters(body)
                p = self.ddp("--code", code, "--strategy", "yours-individual", *TINY)
                self.assertEqual(p.returncode, 3, p.stderr)
                [q] = self.points(p)
                self.assertEqual(q["status"], "failed")
                self.assertRegex(p.stderr, r"rank [01]")
                for w in words:
                    self.assertIn(w, p.stderr)

    def test_not_done_yet_is_said_plainly(self):
        os.makedirs(os.path.join(self.tmp.name, "checkout", "tests"))
        with open(os.path.join(self.tmp.name, "checkout", "tests", "adapters.py"), "w") as f:
            f.write("def get_ddp_bucketed(module, bucket_size_mb):\n    raise NotImplementedError\n")
        p = self.ddp("--code", os.path.join(self.tmp.name, "checkout"), "--strategy", "yours", *TINY)
        self.assertEqual(p.returncode, 3, p.stderr)
        [q] = self.points(p)
        self.assertEqual(q["strategy"], "yours-bucketed")
        self.assertIn("not done yet", q["error"])

    def test_bad_input_exits_2_before_any_rank_starts(self):
        for args, words in [
            (["--strategy", "yours-bucketed"], "give --code"),
            (["--strategy", "yours", "--code", "mypkg.ddp:DDP"], "name them"),
            (["--strategy", "yours-ddp", "--code", os.path.join(self.tmp.name, "none.py")], "does not exist"),
            (["--strategy", "torch-ddp", "--python", "/no/such/python"], "no Python interpreter"),
            (["--strategy", "yours-ddp", "--code", CHECKOUT, "--precision", "fp16"], "fp16"),
        ]:
            p = self.ddp(*args, *TINY)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(words, p.stderr)


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    RUNNER = CliRunner(CLI)
    share_runner_server(CLI)  # See Note [the runner server]: one import of torch for the file
    unittest.main()
