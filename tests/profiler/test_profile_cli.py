#!/usr/bin/env python3
"""trainscope-cli profile end to end on the CPU: the default tables, a phase and range filter,
Markdown/CSV/JSON lines, the Perfetto trace (parsed back), the stored run shown by `runs show`,
and bad input (exit 2, naming the value).
Usage: test_profile_cli.py path/to/trainscope-cli"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CLI = None
TINY = ["--size", "tiny", "--context-length", "16", "--batch-size", "2", "--warmup", "1", "--profile-steps", "2",
        "--device", "cpu", "--vocab-size", "500"]


def run(*args, db=None, timeout=300):
    env = dict(os.environ)
    if db:
        env["TRAINSCOPE_DB"] = db
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


class Profile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def test_default_tables_trace_and_stored_run(self):
        trace = os.path.join(self.tmp.name, "step.json")
        p = run("profile", *TINY, "--trace", trace, "--label", "tiny profile", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        # Kineto's log of a machine without a GPU is no error of this profile.
        self.assertNotIn("ERROR", p.stderr)
        self.assertNotIn("gpuGetDeviceCount", p.stderr)
        out = p.stdout
        for title in ("Phases over 2 profiled step(s)", "Top ops by self CPU time — forward",
                      "Top ops by self CPU time — whole step", "Matmuls — whole step", "Op self time by category"):
            self.assertIn(title, out)
        phases = [l.split()[0] for l in out.split("Phases over")[1].split("\n\n")[0].splitlines()[3:]]
        self.assertEqual(phases[:3], ["forward", "backward", "optimizer"])
        self.assertIn("aten::mm", out)  # the matmul table lists it whatever the timings
        # The optimizer's fused op is in its phase and category (the top-10 by time may not
        # hold it on a busy machine).
        categories = out.split("Op self time by category")[1]
        self.assertTrue(any(l.split()[:2] == ["optimizer", "optimizer"] for l in categories.splitlines()), out)
        # The trace parses back and holds the step's ranges and ops.
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        names = {e["name"] for e in events if e.get("cat") == "range"}
        for name in ("forward", "backward", "optimizer", "layer.0", "attention", "scores", "softmax", "values", "mlp",
                     "lm_head", "loss"):
            self.assertIn(name, names)
        ops = [e for e in events if e.get("cat") == "op"]
        self.assertTrue(ops)
        self.assertTrue(all(e["dur"] >= 0 and e["ts"] >= 0 for e in ops))
        self.assertIn("backward", {e["args"]["phase"] for e in ops})
        # Stored as a run of kind profile and shown through its lab.
        p = run("runs", "list", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("profile", p.stdout)
        self.assertIn("tiny profile", p.stdout)
        run_id = p.stdout.splitlines()[1].split()[0]
        p = run("runs", "show", run_id, db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Top ops by self CPU time — forward", p.stdout)
        p = run("runs", "show", run_id, "--format", "json", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["kind"], "profile")
        self.assertEqual(doc["results"][0]["spec"]["profile_steps"], 2)
        self.assertTrue(doc["results"][0]["trace"]["ops"])

    def test_phase_range_and_formats(self):
        p = run("profile", *TINY, "--phase", "backward", "--range", "softmax", "--top", "0", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Top ops by self CPU time — backward, range softmax", p.stdout)
        self.assertNotIn("— forward", p.stdout)
        table = p.stdout.split("range softmax")[1].split("\n\n")[0]
        self.assertIn("aten::_softmax_backward_data", table)
        self.assertNotIn("aten::mm ", table)  # the matmuls around the softmax are in other ranges
        p = run("profile", *TINY, "--markdown", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| op ", p.stdout)
        self.assertIn("### Top ops by self CPU time — forward", p.stdout)
        p = run("profile", *TINY, "--csv", "--phase", "forward", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = p.stdout.strip().splitlines()
        self.assertTrue(rows[0].startswith("op,calls,"))
        mm = [r for r in rows if r.startswith("aten::mm,")]
        self.assertEqual(len(mm), 1)
        self.assertGreater(float(mm[0].split(",")[5]), 0)  # FLOPs
        p = run("profile", *TINY, "--jsonl", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual([l["type"] for l in lines], ["step"] * 3 + ["profile"])
        summary = lines[-1]
        self.assertEqual(summary["status"], "ok")
        self.assertFalse(summary["gpu"])
        measured = {p["phase"]: p for p in summary["phases"]}
        self.assertGreater(measured["forward"]["profiled_ms"], 0)
        self.assertGreater(measured["optimizer"]["measured_ms"], 0)
        self.assertTrue(any(o["op"] == "aten::mm" and o["flops"] > 0 for o in summary["ops"]))

    def test_call_tree_and_two_runs_compared(self):
        import csv
        import io
        for ctx in ("16", "32"):
            p = run("profile", *TINY, "--context-length", ctx, "-q", db=self.db)
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Call tree: CPU time by phase, range and op", p.stdout)
        # The call tree as a CSV table: depth-first, every path under a phase.
        p = run("runs", "show", "1", "--format", "csv", "--table", "calltree", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        self.assertEqual(list(rows[0].keys()), ["profile", "depth", "path", "name", "kind", "inclusive_ms",
                                                "self_ms", "share", "calls"])
        self.assertEqual((rows[0]["kind"], rows[0]["depth"], rows[0]["share"]), ("all", "0", "1"))
        phases = {r["name"]: r for r in rows if r["kind"] == "phase"}
        self.assertTrue({"forward", "backward", "optimizer"} <= set(phases), phases.keys())
        self.assertAlmostEqual(sum(float(r["share"]) for r in phases.values()), 1.0, places=6)
        paths = [r["path"] for r in rows]
        self.assertTrue(any(x.startswith("forward/layer.0/attention/") for x in paths), paths[:20])
        # Backward ops sit under their forward op's range (autograd's thread has none).
        self.assertTrue(any(x.startswith("backward/layer.0/attention/") for x in paths), paths[:20])
        for r in rows:
            if r["kind"] == "op":
                self.assertGreaterEqual(int(r["calls"]), 1)
                self.assertLessEqual(float(r["self_ms"]), float(r["inclusive_ms"]) + 1e-9)
        p = run("runs", "show", "1", "--format", "csv", "--table", "nope", db=self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("calltree", p.stderr)
        # Two stored profiles side by side: a CPU profile compares its ops.
        p = run("profile", "--compare", "1,2", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Two profiles compared", p.stdout)
        self.assertIn("Ops by |B - A|", p.stdout)
        self.assertIn("(2 profiled step(s) counted)", p.stdout)
        p = run("profile", "--compare", "1,2", "--format", "csv", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        diff = list(csv.DictReader(io.StringIO(p.stdout)))
        self.assertEqual(list(diff[0].keys())[:6], ["op", "category", "a_us_per_step", "b_us_per_step", "delta_us",
                                                    "ratio"])
        deltas = [abs(float(r["delta_us"])) for r in diff]
        self.assertEqual(deltas, sorted(deltas, reverse=True))
        mm = [r for r in diff if r["op"] == "aten::mm"][0]
        self.assertAlmostEqual(float(mm["delta_us"]), float(mm["b_us_per_step"]) - float(mm["a_us_per_step"]), places=3)
        for extra, needle in [(["--compare", "1"], "two runs"), (["--compare", "1,99"], "no run 99"),
                              (["--compare", "1,2", "--trace", "x.json"], "--trace")]:
            p = run("profile", *extra, db=self.db)
            self.assertEqual(p.returncode, 2, (extra, p.stderr))
            self.assertIn(needle, p.stderr, extra)

    def test_import_a_torch_profiler_trace(self):
        import csv
        import io
        fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "cpu_step.pt.trace.json")
        p = run("profile", "import", fixture, db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cpu_step.pt.trace.json (an imported trace, CPU), 1 profiled step(s)", p.stdout)
        self.assertIn("Call tree", p.stdout)
        self.assertIn("imported", p.stderr)
        # Stored under the file's name, and every table of the lab serves it.
        p = run("runs", "list", "--json", db=self.db)
        runs = json.loads(p.stdout)
        self.assertEqual((runs[0]["kind"], runs[0]["label"]), ("profile", "cpu_step.pt.trace.json"))
        run_id = str(runs[0]["id"])
        p = run("runs", "show", run_id, "--format", "csv", "--table", "calltree", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        phases = {r["name"] for r in csv.DictReader(io.StringIO(p.stdout)) if r["kind"] == "phase"}
        self.assertEqual(phases & {"forward", "backward", "optimizer"}, {"forward", "backward", "optimizer"})
        p = run("runs", "show", run_id, "--format", "json", db=self.db)
        self.assertEqual(json.loads(p.stdout)["results"][0]["spec"]["imported"], "cpu_step.pt.trace.json")
        # A label, Markdown, no store; an imported profile compares with a profiled one.
        p = run("profile", "import", fixture, "--label", "mine", "--format", "markdown", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("## Profile: cpu_step.pt.trace.json", p.stdout)
        p = run("profile", "--compare", "1,2", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("B - A +0.000 ms", p.stdout)
        # Bad files: a clear message, exit 2, nothing stored.
        with open(fixture) as f:
            text = f.read()
        bad = {"truncated.json": text[:len(text) // 2], "wrong.json": '{"schemaVersion": 1}',
               "empty.json": '{"traceEvents": []}', "binary.json": "\x80\x02}q\x00."}
        for name, content in bad.items():
            path = os.path.join(self.tmp.name, name)
            with open(path, "w") as f:
                f.write(content)
        for name, needle in [("truncated.json", "truncated"), ("wrong.json", "traceEvents"),
                             ("empty.json", "empty trace"), ("binary.json", "cannot be read"),
                             ("missing.json", "no such file")]:
            p = run("profile", "import", os.path.join(self.tmp.name, name), db=self.db)
            self.assertEqual(p.returncode, 2, (name, p.stderr))
            self.assertIn(needle, p.stderr, name)
            self.assertNotIn("Traceback", p.stderr)
        p = run("profile", "import", self.tmp.name, db=self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("directory", p.stderr)
        p = run("profile", "import", fixture, "--rank", "1", db=self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("one process's, not a distributed run's merged trace", p.stderr)
        self.assertEqual(len(json.loads(run("runs", "list", "--json", db=self.db).stdout)), 2)
        # A distributed run's merged trace (distributed ddp --trace-steps): one rank at a time.
        with open(fixture) as f:
            one = json.load(f)
        events = []
        for rank in (0, 1):
            events += [dict(e, pid=rank) for e in one["traceEvents"] if e.get("ph") == "X"]
        merged = os.path.join(self.tmp.name, "run-1-point-1.json")
        with open(merged, "w") as f:
            json.dump({"traceEvents": events, "ranks": [{"rank": 0}, {"rank": 1}]}, f)
        p = run("profile", "import", merged, "--no-store", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("rank 0 imported (--rank R for another)", p.stderr)
        self.assertIn("run-1-point-1.json (rank 0 of 2) (an imported trace, CPU), 1 profiled step(s)", p.stdout)
        p = run("profile", "import", merged, "--rank", "1", "--no-store", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(rank 1 of 2)", p.stdout)
        self.assertNotIn("note:", p.stderr)
        for rank, needle in (("2", "the trace holds ranks 0 to 1"), ("-1", "--rank"), ("x", "--rank")):
            p = run("profile", "import", merged, "--rank", rank, db=self.db)
            self.assertEqual(p.returncode, 2, (rank, p.stderr))
            self.assertIn(needle, p.stderr, rank)
        p = run("profile", "import", db=self.db)
        self.assertEqual(p.returncode, 2, p.stderr)

    def test_bad_input_exits_2_naming_the_value(self):
        cases = [(["--phase", "sideways"], "sideways"),
                 (["--profile-steps", "0"], "--profile-steps"),
                 (["--profile-steps", "x"], "--profile-steps"),
                 (["--top", "-1"], "--top"),
                 (["--context-length", "16,32"], "one point"),
                 (["--precision", "fp8"], "fp8"),
                 (["--trace", os.path.join("/nonexistent-dir", "t.json")], "--trace"),
                 (["--trace", "/tmp"], "directory"),
                 (["--kineto-trace", os.path.join("/nonexistent-dir", "t.json")], "--kineto-trace"),
                 (["--kineto-trace", "/tmp/trace.txt"], "does not end in .json"),
                 (["--kineto-trace", "/tmp"], "directory"),
                 # Compiled mode is profiled on a GPU only, after a warm-up step that captures.
                 (["--exec", "compiled", "--device", "cpu"], "needs a CUDA device"),
                 (["--exec", "sometimes"], "sometimes")]
        for extra, needle in cases:
            p = run("profile", *TINY, *extra, "--no-store")
            self.assertEqual(p.returncode, 2, (extra, p.stdout, p.stderr))
            self.assertIn(needle, p.stderr, extra)
        p = run("profile", *TINY, "--csv", "--markdown", "--no-store")
        self.assertNotEqual(p.returncode, 0)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
