#!/usr/bin/env python3
"""trainscope-cli distributed ddp --trace-steps end to end on 2 Gloo ranks (see Note [one trace of
every rank]): each rank profiles its first measured step under Kineto, the launching process
merges the two traces into one Chrome/Perfetto trace beside the store, a process track per rank,
each with backward's ops and Gloo's all-reduce, the two ranks' steps overlapping in time on one
clock; the stored run names the file. PyTorch's FSDP2 (the Python runner, torch.profiler) is traced
into the same kind of file. Bad settings exit 2 before any rank starts.
Usage: test_rank_traces.py path/to/trainscope-cli"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import uuid

CLI = None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402
from runner_server import share_runner_server  # noqa: E402

TINY = ["distributed", "ddp", "--world", "2", "--size", "tiny", "--context-length", "32", "--batch", "2",
        "--warmup", "1", "--steps", "2", "--timeout", "120"]


class RankTraces(unittest.TestCase):
    def setUp(self):
        self.marker = uuid.uuid4().hex
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.assertEqual(processes_with(self.marker), [], "a worker was left running")
        self.tmp.cleanup()

    def run_cli(self, *args, timeout=120):
        return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout,
                              env=marked_env(self.marker, TRAINSCOPE_DB=self.db))

    def merged_trace(self, *args):
        """Runs a two-rank point with --trace-steps 1; its merged trace, checked: one file beside
        the store (the ranks' own merged and removed), a process per rank, the stored run naming it."""
        p = self.run_cli(*args, "--trace-steps", "1", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        path = os.path.join(self.tmp.name, "results.traces", "run-1-point-1.json")
        self.assertIn(path, p.stderr)
        self.assertIn("ui.perfetto.dev", p.stderr)
        self.assertEqual(os.listdir(os.path.dirname(path)), ["run-1-point-1.json"])
        with open(path) as f:
            trace = json.load(f)
        names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
        self.assertEqual(names, {0: "rank 0", 1: "rank 1"})
        self.assertEqual({e["pid"] for e in trace["traceEvents"] if "pid" in e}, {0, 1})
        runs = json.loads(self.run_cli("runs", "list", "--json").stdout)
        shown = json.loads(self.run_cli("runs", "show", str(runs[0]["id"]), "--format", "json").stdout)
        self.assertEqual(shown["points"][0]["trace"], path)
        return trace

    def test_every_ranks_ops_on_one_timeline(self):
        events = self.merged_trace(*TINY, "--strategy", "overlap")["traceEvents"]
        spans = {}
        for rank in (0, 1):
            ops = [e for e in events if e.get("ph") == "X" and e["pid"] == rank]
            self.assertTrue(any("Backward" in e["name"] for e in ops),
                            f"rank {rank}: no backward op in {sorted({e['name'] for e in ops})[:40]}")
            self.assertTrue(any("gloo" in e["name"].lower() for e in ops),
                            f"rank {rank}: no Gloo op in {sorted({e['name'] for e in ops})}")
            steps = [e for e in ops if e["name"].startswith("ProfilerStep#")]
            self.assertEqual([e["name"] for e in steps], ["ProfilerStep#1"], rank)
            spans[rank] = (steps[0]["ts"], steps[0]["ts"] + steps[0]["dur"])
        # One clock: the ranks' profiled steps overlap (every all-reduce holds both).
        self.assertLess(max(s for s, _ in spans.values()), min(e for _, e in spans.values()), spans)

    def test_pytorchs_fsdp2_traced_as_ours(self):
        # The Python strategies' ranks trace through torch.profiler (runner/rank_trace.py) into the
        # same merged file: PyTorch's FSDP2 beside ours, its all-gathers on each rank's track.
        trace = self.merged_trace(*TINY[:-4], "--warmup", "1", "--steps", "1", "--timeout", "120",
                                  "--strategy", "fsdp2")
        events = trace["traceEvents"]
        self.assertEqual([r["distributedInfo"]["rank"] for r in trace["ranks"]], [0, 1])
        for rank in (0, 1):
            ops = {e["name"] for e in events if e.get("ph") == "X" and e["pid"] == rank}
            self.assertIn("ProfilerStep#1", ops, rank)
            self.assertTrue(any(n.startswith("FSDP::all_gather") for n in ops), (rank, sorted(ops)[:40]))
            self.assertIn("gloo:all_gather", ops, rank)
            self.assertTrue(any("Backward" in n for n in ops), rank)

    def test_bad_settings_exit_2(self):
        for args, message in (
                (["--trace-steps", "3"], "traced steps must be between 0 and the 2 measured steps"),
                (["--trace-steps", "-1"], "--trace-steps"),
                (["--trace-steps", "1", "--trace-dir", "/etc/passwd"], "is not a folder")):
            p = self.run_cli(*TINY, "--strategy", "flat", *args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(message, p.stderr)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    share_runner_server(CLI)  # See Note [the runner server]: fsdp2's ranks fork from one server
    unittest.main()
