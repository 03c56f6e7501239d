#!/usr/bin/env python3
"""`trainscope-cli distributed ddp|allreduce` as ranks that torchrun or srun started (Gloo, on
this machine; see docs/DISTRIBUTED.md, "Past one machine: torchrun and srun"):
  - two torchrun agents, `--nnodes 2 --node-rank 0|1`: rank 0 prints the tables a local run
    prints, stores one run with both ranks' rows (each with its node), rank 1 says its rows went
    to rank 0, both exit 0;
  - srun's variables (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_ID, set
    here for two processes): the same, and the all-reduce experiment;
  - a rank that fails is named by rank 0 with its message, one killed is noticed; both exit
    non-zero within the timeout, nothing left running;
  - --world that is not the launcher's world, and a Python strategy, exit 2; a step of one task
    (`srun --pty bash`'s shell) runs its own local ranks.
Usage: test_torchrun.py path/to/trainscope-cli PYTHON[:PYTHON...]  (the pythons that may have
torch; without one with torch.distributed.run the torchrun case is skipped, exit 77 if nothing ran).
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402

CLI = None
PYTHON = None  # one with torch.distributed.run, or None
TINY = ["--backend", "gloo", "--size", "tiny", "--context-length", "16", "--batch", "2", "--warmup", "1",
        "--steps", "2", "--strategy", "bucketed", "--timeout", "60"]
# The launchers' own variables never leak in from the test's environment.
OWN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "TORCHELASTIC_RUN_ID",
       "TORCHELASTIC_USE_AGENT_STORE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID",
       "SLURM_STEP_ID")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torch_python(candidates):
    for py in candidates:
        # Found without importing torch (seconds on a loaded machine): torch/distributed/run.py.
        probe = ("import importlib.util, os, sys; s = importlib.util.find_spec('torch'); "
                 "sys.exit(0 if s and os.path.exists(os.path.join(os.path.dirname(s.origin), "
                 "'distributed', 'run.py')) else 1)")
        if py and os.path.exists(py) and subprocess.run([py, "-c", probe], capture_output=True,
                                                        timeout=60).returncode == 0:
            return py
    return None


class Ranks(unittest.TestCase):
    def setUp(self):
        self.marker = uuid.uuid4().hex
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.assertEqual(processes_with(self.marker), [], "a rank was left running")
        self.tmp.cleanup()

    def env(self, **extra):
        env = marked_env(self.marker, TRAINSCOPE_DB=self.db, OMP_NUM_THREADS="1", **extra)
        for name in OWN:
            if name not in extra:
                env.pop(name, None)
        return env

    def start(self, argv, **extra):
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env(**extra))

    def finish(self, procs, timeout=120):
        out = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=timeout)
            out.append((p.returncode, stdout, stderr))
        return out

    def srun(self, args, world=2, **extra):
        port = str(free_port())
        return self.finish([self.start([CLI, *args], SLURM_PROCID=str(k), SLURM_NTASKS=str(world),
                                       SLURM_LOCALID="0", SLURM_NODEID=str(k), SLURM_STEP_ID="0",
                                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **extra)
                            for k in range(world)])

    def stored(self):
        runs = json.loads(subprocess.run([CLI, "runs", "list", "--json"], capture_output=True, text=True,
                                         env=self.env()).stdout)
        self.assertEqual(len(runs), 1, runs)
        shown = subprocess.run([CLI, "runs", "show", str(runs[0]["id"]), "--format", "json"], capture_output=True,
                               text=True, env=self.env())
        self.assertEqual(shown.returncode, 0, shown.stderr)
        return runs[0], json.loads(shown.stdout)

    def check_ddp_run(self, results, nodes):
        (rc0, out0, err0), (rc1, out1, err1) = results
        self.assertEqual(rc0, 0, err0)
        self.assertEqual(rc1, 0, err1)
        # Rank 0: the local run's tables; rank 1: one line.
        self.assertIn("DDP strategies", out0)
        self.assertIn("bucketed", out0)
        self.assertIn("stored as run", err0)
        self.assertEqual(out1.strip(), "rank 1 of 2: rows sent to rank 0")
        run, doc = self.stored()
        self.assertEqual((run["kind"], run["points"], run["ok"]), ("distributed", 1, 1))
        point = doc["points"][0]
        self.assertEqual((point["status"], point["world_size"]), ("ok", 2))
        self.assertEqual(point["nodes"], nodes)
        steps = point["steps"]
        self.assertEqual(sorted((s["rank"], s["step"]) for s in steps), [(r, k) for r in (0, 1) for k in range(3)])
        for s in steps:
            self.assertEqual(s["node"], nodes[s["rank"]])
            self.assertGreater(s["total_ms"], 0)
        # Both ranks agree on the global batch's loss, step by step.
        for k in range(3):
            losses = {s["global_loss"] for s in steps if s["step"] == k}
            self.assertEqual(len(losses), 1, losses)

    @unittest.skipIf(os.environ.get("TRAINSCOPE_TORCHRUN_SKIP"), "asked")
    def test_two_torchrun_agents(self):
        if not PYTHON:
            self.skipTest("no python with torch.distributed.run")
        port = str(free_port())
        t0 = time.monotonic()
        agents = [self.start([PYTHON, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
                              "--node-rank", str(k), "--master-addr", "127.0.0.1", "--master-port", port,
                              "--monitor-interval", "0.1", "--no-python", CLI, "distributed", "ddp", *TINY])
                  for k in (0, 1)]
        results = self.finish(agents, timeout=180)
        host = socket.gethostname()
        self.check_ddp_run(results, [f"node 0 ({host})", f"node 1 ({host})"])
        print(f"two torchrun agents: {time.monotonic() - t0:.1f} s", file=sys.stderr)

    def test_srun_ddp(self):
        host = socket.gethostname()
        self.check_ddp_run(self.srun(["distributed", "ddp", *TINY]), [f"node 0 ({host})", f"node 1 ({host})"])

    def test_srun_allreduce(self):
        (rc0, out0, err0), (rc1, out1, err1) = self.srun(
            ["distributed", "allreduce", "--backend", "gloo", "--sizes", "64KiB", "--dtypes", "fp32", "--warmup", "0",
             "--steps", "2", "--timeout", "60", "--format", "json"])
        self.assertEqual((rc0, rc1), (0, 0), err0 + err1)
        rows = json.loads(out0)["rows"]
        self.assertEqual([(r["bytes"], r["world_size"], len(r["ranks"])) for r in rows], [(65536, 2, 2)])
        self.assertEqual(out1.strip(), "rank 1 of 2: times sent to rank 0")
        self.assertEqual(self.stored()[1]["points"][0]["allreduce"][0]["bytes"], 65536)

    def test_a_failing_rank_is_named(self):
        t0 = time.monotonic()
        (rc0, out0, err0), (rc1, _, err1) = self.srun(["distributed", "ddp", *TINY, "--strategy", "naive,bucketed"],
                                                      TRAINSCOPE_TEST_FAIL_RANK="1")
        self.assertEqual((rc0, rc1), (3, 3), err0 + err1)
        self.assertIn("rank 1 failed: failing on purpose (TRAINSCOPE_TEST_FAIL_RANK)", out0 + err0)
        self.assertIn("failing on purpose", err1)
        # The point after it is not run: the group went with the failed rank.
        first, second = self.stored()[1]["points"]
        self.assertEqual((first["status"], first["failed_rank"]), ("failed", 1))
        self.assertEqual(second["status"], "failed")
        self.assertIn("not run: point 1 failed", second["error"])
        self.assertLess(time.monotonic() - t0, 50, "rank 0 waited for the timeout")

    def test_a_killed_rank_ends_the_run(self):
        t0 = time.monotonic()
        (rc0, out0, err0), (rc1, _, _) = self.srun(["distributed", "ddp", *TINY], TRAINSCOPE_TEST_KILL_RANK="1")
        self.assertEqual(rc1, -9)
        self.assertEqual(rc0, 3, err0)
        self.assertIn("no other rank said why", out0 + err0)
        self.assertLess(time.monotonic() - t0, 50, "rank 0 waited for the timeout")

    def test_a_step_of_one_task_starts_its_own_ranks(self):
        # `srun --pty bash` leaves SLURM_STEP_ID in the shell: a run there is a local one.
        p = subprocess.run([CLI, "distributed", "ddp", *TINY, "--world", "2", "--format", "json", "--no-store"],
                           capture_output=True, text=True, timeout=120,
                           env=self.env(SLURM_PROCID="0", SLURM_NTASKS="1", SLURM_STEP_ID="0"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual((json.loads(p.stdout)["status"], json.loads(p.stdout)["world_size"]), ("ok", 2))
        self.assertNotIn("started by srun", p.stderr)

    def test_settings_that_do_not_fit(self):
        for args, says in ((["--world", "4"], "--world 4: srun started 2 ranks"),
                           (["--strategy", "fsdp2"], "--strategy fsdp2: runs in the Python runner"),
                           (["--trace-steps", "1"], "--trace-steps: the ranks' traces are merged by")):
            results = self.srun(["distributed", "ddp", *TINY, *args])
            for rc, _, err in results:
                self.assertEqual(rc, 2, err)
                self.assertIn(says, err)


def main():
    global CLI, PYTHON
    CLI = sys.argv[1]
    PYTHON = torch_python(sys.argv[2].split(":") if len(sys.argv) > 2 else [])
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)


if __name__ == "__main__":
    main()
