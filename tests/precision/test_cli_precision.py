#!/usr/bin/env python3
"""trainscope-cli precision end to end: the sums and the autocast inspector as a table,
Markdown and JSON, the stored run shown by `runs show`, and bad input refused with exit 2.
Usage: test_cli_precision.py path/to/trainscope-cli"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

CLI = None


def run(*args, db=None, timeout=300):
    env = dict(os.environ)
    if db:
        env["TRAINSCOPE_DB"] = db
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


class Precision(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def test_help(self):
        for args in (["precision", "--help"], ["precision", "accumulate", "--help"], ["precision", "autocast", "--help"]):
            p = run(*args)
            self.assertEqual(p.returncode, 0, args)
            self.assertIn("Usage", p.stdout + p.stderr, args)

    def test_accumulate_table_has_the_courses_values(self):
        p = run("precision", "accumulate", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {line.split("  ")[0]: line for line in p.stdout.splitlines()}
        self.assertIn("10.0001", rows["fp32 += fp32"])
        self.assertIn("9.9531", rows["fp16 += fp16"])
        self.assertIn("10.0021", rows["fp32 += fp16"])
        self.assertIn("10.0021", rows["fp32 += fp16 (cast)"])
        self.assertIn("bf16 += bf16", rows)
        self.assertIn("run 1", p.stderr)

    def test_accumulate_json_matches_struct_float_arithmetic(self):
        # The fp32 sum recomputed here in Python with float32 rounding after every add.
        p = run("precision", "accumulate", "--addend", "0.1", "--count", "50", "--dtype", "fp16",
                "--json", "--running-error", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        sums = json.loads(p.stdout)["sums"]
        self.assertEqual([s["variant"] for s in sums],
                         ["fp32 += fp32", "fp16 += fp16", "fp32 += fp16", "fp32 += fp16 (cast)"])
        s, a = 0.0, f32(0.1)
        errs = []
        for i in range(1, 51):
            s = f32(s + a)
            errs.append(s - i * 0.1)
        self.assertEqual(sums[0]["value"], s)
        self.assertEqual(sums[0]["running_error"], errs)
        self.assertEqual(sums[0]["error"], s - 50 * 0.1)
        for r in sums:
            self.assertTrue(r["torch_checked"])
            self.assertEqual(r["torch_value"], r["value"])

    def test_jsonl_and_markdown(self):
        p = run("precision", "accumulate", "--jsonl", "--dtype", "bf16", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual(len(lines), 4)
        self.assertNotIn("running_error", lines[0])
        bf = lines[1]
        self.assertEqual(bf["variant"], "bf16 += bf16")
        self.assertGreater(bf["first_stall_step"], 0)
        self.assertEqual(bf["value"], bf["sum_at_stall"])
        p = run("precision", "accumulate", "--markdown", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| fp16 += fp16 | 9.9531 |", p.stdout)

    def test_autocast_toy_cpu_bf16(self):
        p = run("precision", "autocast", "--json", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rep = json.loads(p.stdout)["reports"][0]
        by = {r["name"]: r for r in rep["records"]}
        self.assertEqual(by["fc1"]["output_dtype"], "bf16")
        self.assertEqual(by["ln"]["output_dtype"], "bf16")  # CPU autocast keeps layer_norm off its fp32 list
        self.assertEqual(by["fc2"]["output_dtype"], "bf16")
        self.assertEqual(by["loss"]["output_dtype"], "fp32")
        self.assertEqual(by["fc1.weight.grad"]["output_dtype"], "fp32")
        # The measured ops: fc1's linear cast to bf16, the layer norm's mixed-type call left
        # alone, the loss cast up to fp32, backward ops present.
        ops = rep["ops"]
        def first(module, name, phase="forward"):
            return next(o for o in ops if o["module"] == module and o["name"] == name and o["phase"] == phase)
        lin = first("fc1", "aten::linear")
        self.assertTrue(lin["cast"])
        self.assertEqual(lin["input_dtypes"], ["fp32", "fp32"])
        self.assertEqual(lin["computed_dtype"], "bf16")
        self.assertEqual(first("fc1", "aten::mm")["computed_dtype"], "bf16")
        ln = first("ln", "aten::layer_norm")
        self.assertFalse(ln["cast"])
        self.assertEqual(ln["computed_dtype"], "bf16+fp32")
        self.assertEqual(first("loss", "aten::cross_entropy_loss")["computed_dtype"], "fp32")
        self.assertEqual(first("fc2", "aten::mm", "backward")["autograd_node"], "MmBackward0")
        p = run("precision", "autocast", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("computed in", p.stdout)
        self.assertRegex(p.stdout, r"forward +fc1 +aten::linear +- +fp32, fp32 +yes +bf16 +bf16")
        self.assertRegex(p.stdout, r"ln +layer_norm +fp32 +bf16 +bf16 +bf16\+fp32")
        p = run("runs", "show", "1", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(precision)", p.stdout)
        self.assertIn("fc1", p.stdout)

    def test_runs_show_of_a_stored_accumulation(self):
        self.assertEqual(run("precision", "accumulate", "--label", "course", db=self.db).returncode, 0)
        p = run("runs", "show", "1", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("9.9531", p.stdout)
        p = run("runs", "show", "1", "--format", "json", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["rows"]), 7)
        p = run("runs", "list", "--json", db=self.db)
        self.assertEqual(json.loads(p.stdout)[0]["kind"], "precision")
        # Each of the three commands marks its run ended when done (see Note [unfinished runs]).
        self.assertEqual(run("precision", "autocast", "--dtype", "bf16,fp16", db=self.db).returncode, 0)
        self.assertEqual(run("precision", "train", "--steps", "5", db=self.db).returncode, 0)
        runs = json.loads(run("runs", "list", "--json", db=self.db).stdout)
        self.assertEqual(len(runs), 3)
        for r in runs:
            self.assertTrue(r["finished"], r)
        self.assertEqual(runs[1]["planned"], 2)  # autocast: one point per dtype

    def test_train_three_precisions_and_overflow(self):
        p = run("precision", "train", "--steps", "20", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("fp32", "bf16", "fp16"):
            self.assertTrue(any(l.startswith(name + " ") for l in p.stdout.splitlines()), p.stdout)
        p = run("precision", "train", "--dtype", "fp16", "--init-scale", "1e9", "--steps", "30", "--json", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        curve = json.loads(p.stdout)["curves"][0]
        steps = curve["steps"]
        self.assertTrue(steps[0]["skipped"])
        self.assertFalse(steps[-1]["skipped"])
        self.assertEqual(curve["skipped_steps"], sum(s["skipped"] for s in steps))
        self.assertEqual(steps[1]["loss_scale"], steps[0]["loss_scale"] / 2)
        self.assertLess(steps[-1]["loss"], steps[0]["loss"])
        p = run("runs", "show", "1", db=self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Training, 20 steps", p.stdout)

    def test_bad_input_exits_2_with_a_message(self):
        cases = [
            (["precision"], ""),
            (["precision", "accumulate", "--count", "0"], "--count"),
            (["precision", "accumulate", "--count", "many"], "--count"),
            (["precision", "accumulate", "--addend", "nan"], "--addend"),
            (["precision", "accumulate", "--addend", "1e300"], "fp32"),
            (["precision", "accumulate", "--dtype", "fp8"], "--dtype"),
            (["precision", "accumulate", "--dtype", ","], "--dtype"),
            (["precision", "accumulate", "--json", "--jsonl"], "two output formats"),
            (["precision", "accumulate", "--table", "ops", "--csv"], "--table: 'ops' is not one of sums"),
            (["precision", "autocast", "--table", "ops"], "give --format csv too"),
            (["precision", "autocast", "--dtype", "fp32"], "--dtype"),
            (["precision", "autocast", "--model", "huge"], "--model"),
            (["precision", "autocast", "--device", "tpu"], "tpu"),
            (["precision", "autocast", "--batch", "-1"], "--batch"),
            (["precision", "train", "--dtype", "fp8"], "--dtype"),
            (["precision", "train", "--steps", "0"], "--steps"),
            (["precision", "train", "--lr", "inf"], "--lr"),
            (["precision", "train", "--init-scale", "0.5"], "loss scale"),
            (["precision", "train", "--device", "cuda:x"], "cuda:x"),
        ]
        for args, word in cases:
            p = run(*args, db=self.db)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertIn(word, p.stderr, args)
        # Nothing was run, so nothing was stored.
        p = run("runs", "list", "--json", db=self.db)
        self.assertEqual(json.loads(p.stdout) if p.returncode == 0 else [], [])

if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main()
