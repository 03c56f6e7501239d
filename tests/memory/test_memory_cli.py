#!/usr/bin/env python3
"""trainscope-cli memory end to end on the CPU (no allocator to record there): bad input
(exit 2, naming the value, nothing run), a CPU point ends Failed with a clear reason (exit 3)
and is stored, `runs show` reads it back in every format, and --snapshot refuses to write
what was not recorded.
Usage: test_memory_cli.py path/to/trainscope-cli"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CLI = None
TINY = ["--size", "tiny", "--context-length", "16", "--batch-size", "2", "--warmup", "1", "--record-steps", "1",
        "--device", "cpu", "--vocab-size", "500"]


def run(*args, db=None, timeout=300):
    env = dict(os.environ)
    if db:
        env["TRAINSCOPE_DB"] = db
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


class Memory(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def test_bad_input_names_the_value(self):
        cases = [
            (["--record-steps", "0"], "--record-steps"),
            (["--record-steps", "many"], "--record-steps"),
            (["--frontier", "width"], "--frontier"),
            (["--frontier", "context", "--frontier-max", "8"], "--frontier-max"),
            (["--frontier-max", "64"], "--frontier-max"),
            (["--precision", "fp8"], "fp8"),
            (["--snapshot", self.tmp.name], "is a directory"),
            (["--snapshot", os.path.join(self.tmp.name, "no", "such", "x.pickle")], "does not exist"),
            (["--context-length", "16,32", "--snapshot", os.path.join(self.tmp.name, "s.pickle")], "one point"),
            (["--top", "-1"], "--top"),
            (["--oom-snapshot", os.path.join(self.tmp.name, "o.pickle")], "needs --frontier"),
            (["--frontier", "context", "--oom-snapshot", self.tmp.name], "is a directory"),
        ]
        for extra, needle in cases:
            args = TINY + extra
            p = run("memory", *args, db=self.db)
            self.assertEqual(p.returncode, 2, (extra, p.stdout, p.stderr))
            self.assertIn(needle, p.stderr, extra)
        # Nothing was run, so nothing was stored.
        p = run("runs", "list", "--json", db=self.db)
        self.assertFalse([r for r in json.loads(p.stdout or "[]") if r.get("kind") == "memory"], p.stdout)

    def test_cpu_point_fails_clearly_and_is_stored(self):
        p = run("memory", *TINY, "--label", "cpu memory", db=self.db)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("memory recording needs a CUDA device", p.stdout + p.stderr)
        self.assertIn("memory: tiny ctx=16 batch=2 fp32 naive train on cpu, 1 recorded step(s) after 1 warm-up", p.stdout)
        # The analytic model is still shown.
        self.assertIn("Predicted by the analytic model (195392 parameters)", p.stdout)
        runs = run("runs", "list", "--json", db=self.db)
        self.assertEqual(runs.returncode, 0, runs.stderr)
        rows = json.loads(runs.stdout)
        mem = [r for r in rows if r.get("kind") == "memory"]
        self.assertEqual(len(mem), 1, rows)
        run_id = str(mem[0]["id"])
        shown = run("runs", "show", run_id, db=self.db)
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn("Peak memory by point", shown.stdout)
        self.assertIn("failed", shown.stdout)
        md = run("runs", "show", run_id, "--format", "markdown", db=self.db)
        self.assertEqual(md.returncode, 0, md.stderr)
        self.assertIn("| size", md.stdout)
        csv = run("runs", "export", run_id, "--format", "csv", db=self.db)
        self.assertEqual(csv.returncode, 0, csv.stderr)
        self.assertTrue(csv.stdout.startswith("size,context,batch,precision,attention,mode,status,peak_bytes,predicted_peak_bytes"), csv.stdout)
        js = run("runs", "show", run_id, "--format", "json", db=self.db)
        self.assertEqual(js.returncode, 0, js.stderr)
        doc = json.loads(js.stdout)
        self.assertEqual(doc["kind"], "memory")
        self.assertEqual(doc["results"][0]["status"], "failed")
        self.assertEqual(doc["results"][0]["spec"]["record_steps"], 1)

    def test_compare_two_stored_runs(self):
        a = run("memory", *TINY, db=self.db)
        b = run("memory", *TINY, "--precision", "bf16", db=self.db)
        self.assertEqual((a.returncode, b.returncode), (3, 3))
        ids = sorted(r["id"] for r in json.loads(run("runs", "list", "--json", db=self.db).stdout) if r["kind"] == "memory")
        self.assertEqual(len(ids), 2)
        c = run("memory", "--compare", f"{ids[0]},{ids[1]}:0", db=self.db)
        self.assertEqual(c.returncode, 0, c.stderr)
        self.assertIn("A: tiny ctx=16 batch=2 fp32 naive train on cpu", c.stdout)
        self.assertIn("B: tiny ctx=16 batch=2 bf16 naive train on cpu", c.stdout)
        for row in ("parameters", "gradients", "optimizer state", "activations", "temporaries", "other",
                    "peak allocated"):
            self.assertIn(row, c.stdout)
        csv = run("memory", "--compare", f"{ids[0]},{ids[1]}", "--csv", db=self.db)
        self.assertEqual(csv.returncode, 0, csv.stderr)
        self.assertTrue(csv.stdout.startswith("category,a_peak_bytes,b_peak_bytes,b_minus_a_bytes"), csv.stdout)
        for bad, needle in ((f"{ids[0]}", "two runs"), (f"{ids[0]},999", "no run 999"), (f"{ids[0]},{ids[1]}:5", "no point 5"),
                            ("x,y", "x")):
            p = run("memory", "--compare", bad, db=self.db)
            self.assertNotEqual(p.returncode, 0, bad)
            self.assertIn(needle, p.stderr, bad)

    def test_sweep_gives_one_row_per_point_and_jsonl(self):
        p = run("memory", *TINY, "--precision", "fp32,bf16", "--jsonl", "--no-store")
        self.assertEqual(p.returncode, 3, p.stderr)
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        summaries = [l for l in lines if l["type"] == "memory"]
        self.assertEqual([s["spec"]["bench"]["precision"] for s in summaries], ["fp32", "bf16"])
        for s in summaries:
            self.assertEqual(s["status"], "failed")
            self.assertGreater(s["predicted_peak"], 0)
        q = run("memory", *TINY, "--precision", "fp32,bf16", "--csv", "--no-store")
        self.assertEqual(len(q.stdout.strip().splitlines()), 3, q.stdout)

    def test_snapshot_of_nothing_recorded_is_an_error(self):
        path = os.path.join(self.tmp.name, "snap.pickle")
        p = run("memory", *TINY, "--snapshot", path, "--no-store")
        self.assertEqual(p.returncode, 3)
        self.assertIn("no allocator trace to write", p.stderr)
        self.assertFalse(os.path.exists(path))

    def test_import_a_memory_viz_snapshot(self):
        import csv
        import io
        here = os.path.dirname(os.path.abspath(__file__))
        fixture = os.path.join(here, "fixtures", "snapshot.pickle")
        p = run("memory", "import", fixture, db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("snapshot.pickle (an imported snapshot of cuda:1", p.stdout)
        self.assertIn("Largest allocations", p.stdout)
        self.assertIn("gradients", p.stdout)
        self.assertNotIn("predicted", p.stdout)
        runs = json.loads(run("runs", "list", "--json", db=self.db).stdout)
        self.assertEqual((runs[0]["kind"], runs[0]["label"], runs[0]["points"]), ("memory", "snapshot.pickle", 1))
        p = run("runs", "show", str(runs[0]["id"]), "--format", "json", db=self.db)
        self.assertEqual(json.loads(p.stdout)["results"][0]["spec"]["imported"], "snapshot.pickle")
        p = run("memory", "import", fixture, "--format", "csv", "--no-store", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        self.assertTrue(rows)
        # TrainScope's own snapshot (--snapshot's pickle) reads back too: the tool's own tests
        # check that in C++; here a snapshot Python wrote with pickle's highest protocol.
        py = os.path.join(self.tmp.name, "p5.pickle")
        subprocess.run([sys.executable, "-c", "import pickle,sys; d=pickle.load(open(sys.argv[1],'rb')); "
                        "pickle.dump(d, open(sys.argv[2],'wb'), protocol=pickle.HIGHEST_PROTOCOL)", fixture, py],
                       check=True)
        p = run("memory", "import", py, "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        # Bad files: a clear message, exit 2, nothing stored.
        with open(fixture, "rb") as f:
            whole = f.read()
        bad = {"truncated.pickle": whole[:len(whole) // 2], "json.pickle": b'{"traceEvents": []}',
               "list.pickle": b"\x80\x04]\x94.", "empty.pickle": b""}
        for name, content in bad.items():
            with open(os.path.join(self.tmp.name, name), "wb") as f:
                f.write(content)
        for name, needle in [("truncated.pickle", "truncated"), ("json.pickle", "not a Python pickle"),
                             ("list.pickle", "device_traces"), ("empty.pickle", "empty file"),
                             ("missing.pickle", "no such file")]:
            p = run("memory", "import", os.path.join(self.tmp.name, name), db=self.db)
            self.assertEqual(p.returncode, 2, (name, p.stderr))
            self.assertIn(needle, p.stderr, name)
        self.assertEqual(len(json.loads(run("runs", "list", "--json", db=self.db).stdout)), 1)
        # `memory` alone still runs a point (its import is a command of its own).
        p = run("memory", *TINY, "--no-store")
        self.assertEqual(p.returncode, 3, p.stderr)

    def test_help_lists_the_flags(self):
        p = run("memory", "--help")
        self.assertEqual(p.returncode, 0)
        for flag in ("--record-steps", "--frontier", "--snapshot", "--oom-snapshot", "--stacks", "--markdown", "--csv", "--jsonl"):
            self.assertIn(flag, p.stdout)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main()
