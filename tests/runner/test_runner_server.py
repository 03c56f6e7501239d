#!/usr/bin/env python3
"""The runner server (See Note [the runner server], runner/trainscope_runner/serve.py), through
trainscope-cli on the CPU: a command's runner processes are children of one server of its own
(torch imported once), each with the job's folder, environment and thread count; the server ends
with the command; TRAINSCOPE_RUNNER_SERVER=off runs each as a new process; `trainscope-cli
runner-server` keeps one for many commands, and a job whose start-up settings (PYTHON*, TORCH*,
...) differ from the server's runs as a new process instead; a front end killed mid-run takes
its served runner with it.
Usage: test_runner_server.py path/to/trainscope-cli"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402

CLI = None
TINY = ["--size", "tiny", "--device", "cpu", "--batch-size", "1", "--warmup", "0", "--steps", "1", "--no-store",
        "--jsonl"]

PROBE = """
    import json, os, time
    import torch, torch.nn as nn

    def build(vocab_size, d_model, context_length):
        with open(os.path.join(os.environ["PROBE_OUT"], f"{os.getpid()}.json"), "w") as f:
            parent = open(f"/proc/{os.getppid()}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
            json.dump({"pid": os.getpid(), "ppid": os.getppid(), "parent": parent, "cwd": os.getcwd(),
                       "tag": os.environ.get("PROBE_TAG"), "threads": torch.get_num_threads(),
                       "omp": os.environ.get("OMP_NUM_THREADS"), "context": context_length}, f)
        if os.environ.get("PROBE_HANG"):
            time.sleep(600)
        return nn.Sequential(nn.Embedding(vocab_size, d_model), nn.Linear(d_model, vocab_size))
"""


class RunnerServer(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "probes")
        os.makedirs(self.out)
        self.code = os.path.join(self.tmp.name, "probe.py")
        with open(self.code, "w") as f:
            f.write(textwrap.dedent(PROBE))
        self.marker = uuid.uuid4().hex
        self.env = marked_env(self.marker, PROBE_OUT=self.out, PROBE_TAG="job's own")
        self.env.pop("TRAINSCOPE_RUNNER_SERVER", None)
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            if s.poll() is None:
                s.stdin.close()
                s.wait(timeout=30)
            s.stdout.close()
            s.stderr.close()
        deadline = time.time() + 10
        while processes_with(self.marker) and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(processes_with(self.marker), [], "a server or runner was left behind")
        self.tmp.cleanup()

    def bench(self, *extra, env=None, contexts="16"):
        p = subprocess.Popen([CLI, "bench", "--code", self.code + ":build", "--context-length", contexts, *TINY,
                              *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env or self.env, cwd=self.tmp.name)
        out, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, err)
        for line in out.splitlines():
            if line.startswith("{") and '"result"' in line:
                self.assertEqual(json.loads(line)["status"], "ok", line)
        return p.pid

    def probes(self):
        found = []
        for path in sorted(glob.glob(os.path.join(self.out, "*.json"))):
            with open(path) as f:
                found.append(json.load(f))
            os.remove(path)
        return sorted(found, key=lambda x: x["context"])

    def shared_server(self):
        proc = subprocess.Popen([CLI, "runner-server", "--while-stdin-open"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        self.servers.append(proc)
        line = proc.stdout.readline().strip()
        if not line.startswith("TRAINSCOPE_RUNNER_SERVER=@"):
            proc.kill()
            self.fail(f"runner-server said {line!r}: {proc.stderr.read()}")
        server_pid = int(proc.stderr.readline().split()[2])
        return line.split("=", 1)[1], server_pid

    def test_a_commands_runners_are_children_of_its_own_server(self):
        cli = self.bench(contexts="16,24")
        first, second = self.probes()
        self.assertEqual(first["ppid"], second["ppid"], "one server for the command's points")
        self.assertNotEqual(first["ppid"], cli)
        self.assertIn("trainscope_runner serve", first["parent"])
        for p in (first, second):
            self.assertEqual(p["cwd"], self.tmp.name, "the job's folder")
            self.assertEqual(p["tag"], "job's own", "the job's environment")
            self.assertEqual(str(p["threads"]), p["omp"], "OMP_NUM_THREADS applied")

    def test_off_runs_each_runner_as_a_new_process(self):
        cli = self.bench(env=dict(self.env, TRAINSCOPE_RUNNER_SERVER="off"))
        [p] = self.probes()
        self.assertEqual(p["ppid"], cli)
        self.assertNotIn("serve", p["parent"])

    def test_one_server_for_many_commands_and_what_it_cannot_serve(self):
        socket, server = self.shared_server()
        env = dict(self.env, TRAINSCOPE_RUNNER_SERVER=socket)
        for _ in range(2):
            self.bench(env=env)
            [p] = self.probes()
            self.assertEqual(p["ppid"], server)
            self.assertEqual(p["tag"], "job's own")
        # A setting the interpreter reads as it starts: not the server's, so a new process.
        cli = self.bench(env=dict(env, PYTHONWARNINGS="ignore::DeprecationWarning"))
        [p] = self.probes()
        self.assertEqual(p["ppid"], cli)

    def test_a_killed_front_end_takes_its_served_runner_with_it(self):
        socket, server = self.shared_server()
        env = dict(self.env, TRAINSCOPE_RUNNER_SERVER=socket, PROBE_HANG="1")
        cli = subprocess.Popen([CLI, "bench", "--code", self.code + ":build", "--context-length", "16", *TINY],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=self.tmp.name)
        deadline = time.time() + 120
        while not glob.glob(os.path.join(self.out, "*.json")) and time.time() < deadline:
            time.sleep(0.1)
        [p] = self.probes()
        self.assertEqual(p["ppid"], server)
        cli.send_signal(signal.SIGKILL)
        cli.wait(timeout=30)
        deadline = time.time() + 10
        while os.path.exists(f"/proc/{p['pid']}") and time.time() < deadline:
            time.sleep(0.1)
        self.assertFalse(os.path.exists(f"/proc/{p['pid']}"), "the runner outlived its front end")

    def test_runner_server_refuses_an_interpreter_that_is_not_there(self):
        p = subprocess.run([CLI, "runner-server", "--python", "/no/such/python"], capture_output=True, text=True,
                           env=self.env, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no Python interpreter '/no/such/python'", p.stderr)


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
