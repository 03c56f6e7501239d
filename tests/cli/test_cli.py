#!/usr/bin/env python3
"""trainscope-cli end to end: run the binary, parse what it prints, check exit codes, and kill
it mid-sweep to see that every finished point survives in the store.
Usage: test_cli.py path/to/trainscope-cli"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

CLI = None
TINY = ["--size", "tiny", "--context-length", "16", "--batch-size", "2", "--warmup", "1", "--steps", "2", "--device", "cpu"]


def run(*args, db=None, timeout=300):
    env = dict(os.environ)
    if db:
        env["TRAINSCOPE_DB"] = db
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


class Cli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def test_help_on_every_subcommand(self):
        for args in (["--help"], ["bench", "--help"], ["runs", "--help"], ["runs", "list", "--help"],
                     ["runs", "show", "--help"], ["runs", "export", "--help"], ["info", "--help"]):
            p = run(*args)
            self.assertEqual(p.returncode, 0, args)
            self.assertIn("Usage", p.stdout + p.stderr, args)

    def test_jsonl_streams_steps_then_result(self):
        p = run("bench", *TINY, "--batch-size", "1,2", "--mode", "forward", "--jsonl", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([json.loads(l)["config"]["batch_size"] for l in p.stdout.splitlines() if '"result"' in l], [1, 2])
        p = run("bench", *TINY, "--precision", "fp32,bf16", "--jsonl", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [json.loads(l) for l in p.stdout.splitlines()]
        types = [l["type"] for l in lines]
        self.assertEqual(types, ["step"] * 3 + ["result"] + ["step"] * 3 + ["result"])
        result = lines[3]
        self.assertEqual(result["status"], "ok")
        self.assertEqual(result["config"]["precision"], "fp32")
        self.assertEqual(lines[7]["config"]["precision"], "bf16")
        self.assertEqual(result["total"]["count"], 2)
        self.assertTrue(lines[0]["warmup"])
        self.assertFalse(lines[1]["warmup"])
        self.assertGreater(result["forward"]["mean"], 0)
        env = result["environment"]
        for key in ("device_name", "torch_version", "cpu", "date", "git_commit"):
            self.assertTrue(env[key], key)

    def test_table_markdown_and_csv(self):
        p = run("bench", *TINY, "--mode", "forward,train", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("forward (ms)", p.stdout)
        self.assertIn("optimizer (ms)", p.stdout)
        p = run("bench", *TINY, "--markdown", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        # The settings every row shares first (see Note [tables other programs read]), then the table.
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("Settings of every row: context length 16, batch size 2"), lines[0])
        header = next(l for l in lines if l.startswith("| size"))
        for col in ("size", "d_model", "d_ff", "layers", "heads", "forward (ms)", "backward (ms)"):
            self.assertIn(col, header)
        self.assertTrue(header.startswith("| "))
        p = run("bench", *TINY, "--csv", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = p.stdout.strip().splitlines()
        self.assertEqual(len(rows), 2)
        self.assertTrue(rows[0].startswith("size,d_model,d_ff,layers,heads,"))
        self.assertEqual(len(rows[0].split(",")), len(rows[1].split(",")))

    def test_bad_input_exits_2_naming_the_value(self):
        cases = [(["--precision", "fp8"], "fp8"), (["--size", "huge"], "huge"), (["--mode", "sideways"], "sideways"),
                 (["--context-length", "abc"], "abc"), (["--context-length", "0"], "context_length must be positive"),
                 (["--num-heads", "7"], "not divisible by num_heads 7"), (["--device", "tpu"], "tpu"),
                 (["--batch-size", "-1"], "batch_size must be positive"), (["--sweep", "/nonexistent.json"], "/nonexistent.json")]
        for extra, needle in cases:
            p = run("bench", *TINY, *extra, db=self.db)
            self.assertEqual(p.returncode, 2, (extra, p.stderr))
            self.assertIn(needle, p.stderr, extra)
            self.assertNotIn("terminate", p.stderr)
        p = run("bench", "--no-such-flag")
        self.assertEqual(p.returncode, 2)
        p = run("runs", "show", "999", db=self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("run 999 does not exist", p.stderr)

    def test_sweep_file(self):
        path = os.path.join(self.tmp.name, "sweep.json")
        with open(path, "w") as f:
            json.dump({"base": {"size": "tiny", "context_length": 16, "batch_size": 2, "warmup": 0, "steps": 1, "device": "cpu"},
                       "precisions": ["fp32", "bf16"], "modes": ["forward"]}, f)
        p = run("bench", "--sweep", path, "--jsonl", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        results = [json.loads(l) for l in p.stdout.splitlines() if '"result"' in l]
        self.assertEqual([r["config"]["precision"] for r in results], ["fp32", "bf16"])
        with open(path, "w") as f:
            json.dump({"base": {"size": "tiny"}, "precisionz": ["fp32"]}, f)
        p = run("bench", "--sweep", path, db=self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("precisionz", p.stderr)

    def test_fused_loss_is_swept_from_the_command_line(self):
        # A dimension of the point's table (see Note [point dimensions]): its flag, its sweep, and the
        # engine honouring it: the fused LM head's loss is the whole logits' loss.
        p = run("bench", "--help")
        self.assertIn("--loss", p.stdout)
        self.assertIn("logits | fused", p.stdout)
        p = run("bench", *TINY, "--loss", "logits,fused", "--jsonl", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [json.loads(l) for l in p.stdout.splitlines()]
        results = [l for l in lines if l["type"] == "result"]
        self.assertEqual([r["config"]["loss"] for r in results], ["logits", "fused"])
        losses = [l["loss"] for l in lines if l["type"] == "step" and l.get("index") == 0]
        self.assertEqual(len(losses), 2, losses)
        self.assertAlmostEqual(losses[0], losses[1], delta=1e-4 * abs(losses[0]))
        # The stored run's spec keeps the sweep over it.
        with sqlite3.connect(self.db) as store:
            (spec,) = store.execute("SELECT spec_json FROM runs").fetchone()
        self.assertEqual(json.loads(spec)["losses"], ["logits", "fused"])

    def test_cuda_profiler_range_is_a_note_on_the_cpu(self):
        # Accepted by every command that runs a point's steps; on the CPU the steps run as ever
        # and a note says there is nothing for cudaProfilerStart/Stop to do (See Note [capture
        # ranges]). The stored point remembers it; --sweep takes it too.
        p = run("bench", *TINY, "--cuda-profiler-range", "--jsonl", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("note: --cuda-profiler-range does nothing for a run on cpu", p.stderr)
        results = [json.loads(l) for l in p.stdout.splitlines() if '"result"' in l]
        self.assertEqual(results[0]["status"], "ok")
        self.assertEqual(results[0]["total"]["count"], 2)
        self.assertIs(results[0]["config"]["cuda_profiler_range"], True)
        p = run("bench", *TINY, "--jsonl", db=self.db)
        self.assertNotIn("cuda-profiler-range", p.stderr)
        self.assertNotIn("cuda_profiler_range", json.loads(p.stdout.splitlines()[-1])["config"])
        p = run("profile", *TINY[:6], "--warmup", "1", "--profile-steps", "1", "--device", "cpu",
                "--cuda-profiler-range", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("note: --cuda-profiler-range", p.stderr)
        path = os.path.join(self.tmp.name, "sweep.json")
        with open(path, "w") as f:
            json.dump({"base": {"size": "tiny", "context_length": 16, "batch_size": 2, "warmup": 0, "steps": 1,
                                "device": "cpu"}}, f)
        p = run("bench", "--sweep", path, "--cuda-profiler-range", "--jsonl", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIs(json.loads(p.stdout.splitlines()[-1])["config"]["cuda_profiler_range"], True)

    def test_runs_list_show_export(self):
        self.assertEqual(run("bench", *TINY, "--label", "first", db=self.db).returncode, 0)
        p = run("runs", "list", "--json", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = json.loads(p.stdout)
        self.assertEqual(len(runs), 1)
        self.assertEqual(runs[0]["label"], "first")
        self.assertEqual(runs[0]["points"], 1)
        self.assertEqual((runs[0]["planned"], runs[0]["finished"]), (1, True))
        rid = str(runs[0]["id"])
        # --db before or after the subcommand
        self.assertEqual(json.loads(run("runs", "list", "--json", "--db", self.db).stdout)[0]["id"], runs[0]["id"])
        self.assertEqual(json.loads(run("runs", "--db", self.db, "list", "--json").stdout)[0]["id"], runs[0]["id"])
        p = run("runs", "show", rid, "--format", "json", db=self.db)
        self.assertEqual(json.loads(p.stdout)["results"][0]["status"], "ok")
        out = os.path.join(self.tmp.name, "report.md")
        p = run("runs", "export", rid, "-o", out, db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = open(out).read()
        self.assertIn("## Environment", text)
        self.assertIn("| size", text)
        p = run("runs", "export", rid, "--format", "csv", db=self.db)
        self.assertTrue(p.stdout.startswith("size,"))
        self.assertEqual(run("runs", "delete", rid, db=self.db).returncode, 0)
        self.assertEqual(json.loads(run("runs", "list", "--json", db=self.db).stdout), [])

    def test_kill_mid_sweep_keeps_every_finished_point(self):
        env = dict(os.environ, TRAINSCOPE_DB=self.db)
        args = [CLI, "bench", "--size", "tiny", "--context-length", "16,24,32,40,48,56,64,72", "--batch-size", "2",
                "--warmup", "0", "--steps", "3", "--device", "cpu", "--jsonl"]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        finished = 0
        deadline = time.time() + 240
        while finished < 3 and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if '"type":"result"' in line:
                finished += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assertEqual(finished, 3)
        runs = json.loads(run("runs", "list", "--json", db=self.db).stdout)
        self.assertEqual(len(runs), 1)
        self.assertGreaterEqual(runs[0]["points"], 3)
        self.assertLess(runs[0]["points"], 8)
        # Killed before it ended: not finished, with the 8 points it meant to measure, in the
        # listing as in JSON (see Note [unfinished runs]).
        self.assertEqual((runs[0]["planned"], runs[0]["finished"]), (8, False))
        listing = run("runs", "list", db=self.db).stdout
        self.assertIn(f"no ({runs[0]['points']}/8)", listing)
        shown_table = run("runs", "show", str(runs[0]["id"]), db=self.db).stdout
        self.assertIn(f"not finished: {runs[0]['points']} of 8 planned points stored", shown_table)
        shown = json.loads(run("runs", "show", str(runs[0]["id"]), "--format", "json", db=self.db).stdout)
        self.assertEqual([r["config"]["model"]["context_length"] for r in shown["results"][:3]], [16, 24, 32])
        self.assertTrue(all(r["status"] == "ok" for r in shown["results"]))

    def test_sigint_stops_and_keeps_what_was_measured(self):
        env = dict(os.environ, TRAINSCOPE_DB=self.db)
        proc = subprocess.Popen([CLI, "bench", *TINY[:-4], "--steps", "100000", "--warmup", "0", "--device", "cpu", "--jsonl"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        for _ in range(3):
            proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130)
        result = [json.loads(l) for l in out.splitlines() if '"result"' in l][0]
        self.assertEqual(result["status"], "cancelled")
        self.assertGreaterEqual(len(result["steps"]), 3)

    def test_attention_run_is_stored_and_shown(self):
        p = run("attention", "--device", "cpu", "--impl", "naive,tiled", "--seq", "32", "--head-dim", "16",
                "--dtype", "fp32", "--causal", "--warmup", "0", "--steps", "1", "--jsonl", "--label", "att", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        streamed = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual([c["impl"] for c in streamed], ["naive", "tiled"])
        runs = json.loads(run("runs", "list", "--json", db=self.db).stdout)
        self.assertEqual((runs[0]["kind"], runs[0]["label"], runs[0]["points"], runs[0]["ok"]), ("attention", "att", 2, 2))
        shown = json.loads(run("runs", "show", str(runs[0]["id"]), "--format", "json", db=self.db).stdout)
        self.assertEqual(shown["cells"], streamed)
        p = run("runs", "show", str(runs[0]["id"]), db=self.db)
        self.assertIn("| tiled | fp32 | yes |", p.stdout)

    def test_info(self):
        p = run("info")
        self.assertEqual(p.returncode, 0)
        self.assertIn("LibTorch 2.11", p.stdout)
        self.assertIn("cpu", p.stdout)


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
