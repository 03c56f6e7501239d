#!/usr/bin/env python3
"""trainscope-cli plan end to end: the plan as a table, Markdown and JSON with the values the
course's formulas give (worked here by hand), the run stored and shown by `runs show`, a
measurement of this machine (CPU, Gloo), and bad input refused with exit 2 naming the value.
Usage: test_cli_planner.py path/to/trainscope-cli"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

CLI = None

# C = 1e12 FLOP/s, W = 1 GB/s (C/W = 1000), B = 8192 tokens, D = 1024, F = 4096, L = 2,
# X = 4, Y = 2.
HAND = ["plan", "-C", "1e12", "-W", "1", "--batch-tokens", "8192", "--d-model", "1024",
        "--d-ff", "4096", "--layers", "2", "--dp", "4", "--tp", "2"]


def run(*args, db=None, timeout=300):
    env = dict(os.environ)
    if db:
        env["TRAINSCOPE_DB"] = db
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


class Plan(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def test_help_lists_the_command(self):
        p = run("--help")
        self.assertIn("plan", p.stdout)
        p = run("plan", "--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--measure", p.stdout)

    def test_json_has_the_hand_worked_values(self):
        p = run(*HAND, "--json", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        plans = {x["strategy"]: x for x in r["plans"]}
        self.assertEqual(set(plans), {"dp", "fsdp", "tp", "dp-tp", "fsdp-tp"})
        dp = plans["dp"]
        # Backward: 12·B·D·F/X FLOPs; all-reduce of 3·D·F·2 bytes, 2·(3/4) of it sent.
        self.assertEqual(dp["backward"]["flops"], 12 * 8192 * 1024 * 4096 / 4)
        self.assertEqual(dp["backward"]["comm_bytes"], 2 * 0.75 * 3 * 1024 * 4096 * 2)
        self.assertAlmostEqual(dp["backward"]["comm_s"], 0.037748736, places=12)
        self.assertFalse(dp["comm_bound"])
        limits = {l["what"]: l for l in dp["limits"]}
        self.assertAlmostEqual(limits["largest N_DP (backward)"]["value"], 1 + 8192 * 1e9 / 1e12)
        tp = {l["what"]: l["value"] for l in plans["tp"]["limits"]}
        self.assertAlmostEqual(tp["largest N_TP (forward)"], 1 + 3 * 4096 * 1e9 / (2 * 1e12))
        f2 = {l["what"]: l["value"] for l in plans["fsdp-tp"]["limits"]}
        self.assertAlmostEqual(f2["optimal FSDP degree for N = X·Y"], math.sqrt(2 * 8192 * 8 / (3 * 4096)))
        self.assertAlmostEqual(f2["largest N at X_opt (forward, axes overlapped)"],
                               3 * 8192 * 4096 * 1e18 / (2 * 1e24))
        self.assertAlmostEqual(r["C_over_W"], 1000)
        alt = [c for c in r["collectives"] if "alternate" in c["name"]][0]
        self.assertEqual(alt["formula"], "(N−1) · S/W")
        # --no-overlap: the 2-D limit is a quarter.
        p = run(*HAND, "--json", "--no-overlap", "--no-store")
        f2 = {l["what"]: l["value"] for l in
              [x for x in json.loads(p.stdout)["plans"] if x["strategy"] == "fsdp-tp"][0]["limits"]}
        self.assertAlmostEqual(f2["largest N at X_opt (forward, axes share the links)"],
                               3 * 8192 * 4096 * 1e18 / (8 * 1e24))

    def test_table_shows_formulas_and_is_stored(self):
        p = run(*HAND, db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("run 1", p.stderr)
        out = p.stdout
        self.assertIn("all-reduce dW1, dW2, dW3: 2·(X−1)/X · 3·D·F·b / W", out)
        self.assertIn("N_DP ≤ 1 + 2·B·W/(b·C)  (b = 2: N_DP ≤ 1 + B·W/C)", out)
        self.assertIn("FSDP × TP", out)
        self.assertIn("37.7 ms", out)  # the DP backward's all-reduce
        md = run(*HAND, "--markdown", "--no-store")
        self.assertEqual(md.returncode, 0, md.stderr)
        self.assertIn("| DP        | 4 | 1 |", md.stdout)
        self.assertIn("### Where each becomes communication bound", md.stdout)
        shown = run("runs", "show", "1", db=self.db)
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn("planner", shown.stdout)
        self.assertIn("all-reduce dW1, dW2, dW3", shown.stdout)
        exported = run("runs", "show", "1", "--format", "json", db=self.db)
        self.assertEqual(exported.returncode, 0, exported.stderr)
        self.assertEqual(json.loads(exported.stdout)["rows"][0]["inputs"]["dp"], 4)

    def test_a_preset_adds_the_whole_models_step(self):
        p = run("plan", "-C", "989e12", "-W", "450", "--size", "small", "--batch-size", "8",
                "--context-length", "512", "--dp", "2", "--json", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["inputs"]["B"], 4096)
        self.assertEqual(r["inputs"]["d_model"], 768)
        preds = {x["strategy"]: x for x in r["predictions"]}
        self.assertEqual(set(preds), {"dp", "fsdp"})
        P = preds["dp"]["parameters"]
        self.assertEqual(preds["dp"]["backward_comm_bytes"], 2 * 0.5 * P * 2)
        self.assertEqual(preds["fsdp"]["forward_comm_bytes"], 0.5 * P * 2)

    def test_measure_on_the_cpu(self):
        p = run("plan", "--measure", "--device", "cpu", "--gemm-n", "256", "--allreduce-size",
                "1MiB", "--iters", "2", "--batch-tokens", "4096", "--d-model", "256", "--d-ff",
                "1024", "--dp", "2", "--json", db=self.db, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        m = r["measured"]
        self.assertEqual(m["backend"], "gloo")
        self.assertEqual(m["world"], 2)
        self.assertTrue(m["ring_exact"])
        self.assertGreater(m["C"], 0)
        self.assertEqual(r["inputs"]["C"], m["C"])
        self.assertEqual(r["inputs"]["W"], m["W"])

    def test_bad_input_exits_2_naming_the_value(self):
        base = ["plan", "--batch-tokens", "8192", "--d-model", "1024", "--d-ff", "4096"]
        cases = [
            (base, "-C/--flops"),  # neither C nor --measure
            (["plan", "-C", "0", "-W", "1", *base[1:]], "must be positive, got '0'"),
            (["plan", "-C", "nan", "-W", "1", *base[1:]], "-C/--flops"),
            (["plan", "-C", "1e12", "-W", "1", *base[1:], "--tp", "3"],
             "d_ff 4096 is not divisible by the tensor-parallel degree 3"),
            (["plan", "-C", "1e12", "-W", "1", *base[1:], "--dp", "0"], "--dp"),
            (["plan", "-C", "1e12", "-W", "1", "--batch-tokens", "8", "--d-model", "8",
              "--d-ff", "8", "--dp", "16"], "less than one token"),
            (["plan", "-C", "1e12", "-W", "1", *base[1:], "--size", "small"], "not with --size"),
            (["plan", "-C", "1e12", "-W", "1", "--size", "huge", "--batch-tokens", "1"],
             "unknown model 'huge'"),
            (["plan", "-C", "1e12", "-W", "1", "--d-model", "8", "--d-ff", "8"], "--batch-tokens"),
            (["plan", "--measure", "-C", "1e12", *base[1:]], "not with --measure"),
            (["plan", "-C", "1e12", "-W", "1", *base[1:], "--world", "2"], "only with --measure"),
            (["plan", "--measure", "--device", "tpu", *base[1:]], "--device: 'tpu'"),
            (["plan", "-C", "1e12", "-W", "1", *base[1:], "--json", "--markdown"], "two output formats"),
            (["plan", "-C", "1e12", "-W", "1", *base[1:], "--format", "csv", "--json"], "two output formats"),
        ]
        for args, message in cases:
            p = run(*args, db=self.db)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertIn(message, p.stderr, args)
            self.assertNotIn("Traceback", p.stderr)
        # Nothing was stored for refused input.
        listed = run("runs", "list", db=self.db)
        self.assertNotIn("planner", listed.stdout)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main()
