#!/usr/bin/env python3
"""Every table the CLI writes, read back as other programs read it
(See Note [tables other programs read] in engine/src/core/table.h): each CSV with Python's csv module (one table, one
header line, snake_case headers, numbers as numbers, empty where nothing was measured) and each
Markdown report with a Markdown parser (markdown-it-py: every table's rows have its header's
columns, a label with "|", "<b>" and "#" comes out as written). Also the one spelling of the
options (see Note [one spelling]): --format beside the old flags, --batch-size beside --batch,
--steps beside --iters. All on the CPU, a few seconds.
Usage: test_formats.py path/to/trainscope-cli [python-with-markdown-it[:another...]]"""
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

CLI = None
LABEL = "a|b <b>x</b> #1"
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
NOT_MEASURED = {"n/a", "-", "—", "NaN", "nan"}
TINY = ["--size", "tiny", "--context-length", "16", "--batch-size", "1", "--warmup", "0", "--steps", "2",
        "--device", "cpu", "-q"]

try:
    from markdown_it import MarkdownIt
except ImportError:  # re-run under a python that has it (the project's venv: scripts/setup.sh)
    MarkdownIt = None


def run(*args, db, ok=True):
    env = dict(os.environ, TRAINSCOPE_DB=db)
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300, env=env)
    if ok and p.returncode != 0:
        raise AssertionError(f"{args}: exit {p.returncode}\n{p.stderr}")
    return p


def number(text):
    """A CSV field that is a number, as float; None for text."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


class Formats(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.tmp.name, "results.db")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def last_run(self):
        runs = json.loads(run("runs", "list", "--json", db=self.db).stdout)
        return str(runs[0]["id"])

    def read_csv(self, text, rows=None, numeric=(), context=""):
        """One table: a header of snake_case names, every row as wide; `numeric` columns hold
        numbers or nothing. Returns the rows as dicts."""
        self.assertFalse(text.startswith("#"), f"{context}: a comment line before the header")
        lines = list(csv.reader(io.StringIO(text)))
        self.assertGreater(len(lines), 0, context)
        header = lines[0]
        for h in header:
            self.assertRegex(h, SNAKE, f"{context}: header {h!r}")
        self.assertEqual(len(set(header)), len(header), f"{context}: a header twice: {header}")
        for row in lines[1:]:
            self.assertEqual(len(row), len(header), f"{context}: a row of another width: {row}")
            # A second table's header would be a row of names where numbers belong.
            self.assertNotEqual(row, header, f"{context}: two tables in one CSV")
            for name, cell in zip(header, row):
                self.assertNotIn(cell, NOT_MEASURED, f"{context}: {name} says {cell!r}, not empty")
        if rows is not None:
            self.assertEqual(len(lines) - 1, rows, context)
        dicts = [dict(zip(header, r)) for r in lines[1:]]
        for name in numeric:
            self.assertIn(name, header, context)
            for d in dicts:
                self.assertTrue(d[name] == "" or number(d[name]) is not None,
                                f"{context}: {name} = {d[name]!r} is not a number")
        return dicts

    def tables(self, text):
        """The Markdown's tables, each a list of rows of cell texts (header first); every table
        checked to have one width."""
        md = MarkdownIt("commonmark", {"html": True}).enable("table")
        out, row, table = [], None, None
        for t in md.parse(text):
            if t.type == "table_open":
                table = []
            elif t.type == "table_close":
                widths = {len(r) for r in table}
                self.assertEqual(len(widths), 1, f"a table of rows of several widths: {table}")
                out.append(table)
                table = None
            elif t.type == "tr_open":
                row = []
            elif t.type == "tr_close":
                table.append(row)
            elif t.type == "inline" and row is not None and table is not None:
                row.append(self.text(t))
        return out

    def text(self, inline):
        """An inline token as a reader sees it; raw HTML in it fails the test."""
        for c in inline.children or []:
            self.assertNotEqual(c.type, "html_inline", f"markup in {inline.content!r}")
        return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))

    def markdown_texts(self, text):
        md = MarkdownIt("commonmark", {"html": True}).enable("table")
        return [self.text(t) for t in md.parse(text) if t.type == "inline"]

    def needs_markdown(self):
        if MarkdownIt is None:
            if os.environ.get("CI"):
                self.fail("markdown-it-py is missing (scripts/setup.sh installs it into the venv)")
            self.skipTest("no markdown-it-py: run scripts/setup.sh")

    # ---- the benchmark -----------------------------------------------------------------------

    def test_bench(self):
        csv_text = run("bench", *TINY, "--label", LABEL, "--csv", db=self.db).stdout
        rows = self.read_csv(csv_text, rows=1, context="bench --csv",
                             numeric=("total_ms_mean", "total_ms_std", "tflops", "peak_memory_bytes",
                                      "compile_s", "context", "batch", "params"))
        self.assertEqual(rows[0]["peak_memory_bytes"], "", "the CPU measures no device memory")
        self.assertGreater(number(rows[0]["total_ms_mean"]), 0)
        run_id = self.last_run()
        exported = os.path.join(self.tmp.name, "bench.csv")
        run("runs", "export", run_id, "--format", "csv", "-o", exported, "--environment", db=self.db)
        with open(exported) as f:
            self.assertEqual(self.read_csv(f.read(), rows=1, context="runs export csv")[0]["total_ms_mean"],
                             rows[0]["total_ms_mean"])
        with open(os.path.join(self.tmp.name, "bench.environment.json")) as f:
            env = json.load(f)
        self.assertEqual(env["label"], LABEL)
        self.assertEqual(env["environment"]["torch_version"].split("+")[0][:4], "2.11")
        self.assertEqual(env["spec"]["context_lengths"], [16])
        # --format is the flags' spelling; two that differ are refused.
        self.assertEqual(run("bench", *TINY, "--format", "csv", "--no-store", db=self.db).stdout.splitlines()[0],
                         csv_text.splitlines()[0])
        bad = run("bench", *TINY, "--format", "csv", "--markdown", db=self.db, ok=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("two output formats", bad.stderr)
        # --batch is --batch-size.
        alias = run("bench", *TINY[:4], "--batch", "3", *TINY[6:], "--csv", "--no-store", db=self.db).stdout
        self.assertEqual(self.read_csv(alias, context="--batch")[0]["batch"], "3")

        self.needs_markdown()
        for md in (run("bench", *TINY, "--markdown", "--no-store", db=self.db).stdout,
                   run("runs", "show", run_id, "--format", "markdown", db=self.db).stdout):
            tables = self.tables(md)
            results = [t for t in tables if t[0][0] == "size"]
            self.assertEqual(len(results), 1, md)
            self.assertEqual(len(results[0]), 2, "the header and one point")
            # The settings the table leaves out, said above it.
            said = " ".join(self.markdown_texts(md))
            for setting in ("context length 16", "batch size 1", "precision fp32", "warm-up steps 0",
                            "measured steps 2", "device cpu"):
                self.assertIn(setting, said, md)
        shown = run("runs", "show", run_id, "--format", "markdown", db=self.db).stdout
        self.assertIn(f"TrainScope run {run_id} — {LABEL}", self.markdown_texts(shown), shown)

    # ---- the attention lab ---------------------------------------------------------------------

    def test_attention(self):
        args = ["attention", "--device", "cpu", "--impl", "naive,flash", "--seq", "16", "--head-dim", "16",
                "--batch", "1", "--heads", "1", "--warmup", "0", "--steps", "1", "--label", LABEL]
        rows = self.read_csv(run(*args, "--csv", db=self.db).stdout, rows=2, context="attention --csv",
                             numeric=("forward_ms", "backward_ms", "peak_memory_bytes",
                                      "memory_before_backward_bytes", "err_out", "first_call_ms"))
        naive, flash = rows
        self.assertGreater(number(naive["forward_ms"]), 0)
        self.assertEqual(naive["peak_memory_bytes"], "", "not measured on the CPU: empty, not 0")
        self.assertEqual(flash["status"], "unsupported")
        self.assertEqual(flash["forward_ms"], "")
        run_id = self.last_run()
        self.read_csv(run("runs", "show", run_id, "--format", "csv", db=self.db).stdout, rows=2,
                      context="runs show attention csv")
        self.needs_markdown()
        md = run("runs", "show", run_id, "--format", "markdown", db=self.db).stdout
        (table,) = self.tables(md)
        self.assertEqual(len(table), 3)
        self.assertEqual(table[0][:3], ["impl", "dtype", "causal"])
        said = self.markdown_texts(md)
        self.assertTrue(any(LABEL in t for t in said), md)
        self.assertTrue(any("1 measured step(s) after 0 warm-up, on cpu" in t for t in said), md)

    # ---- the precision lab: one table a CSV ---------------------------------------------------

    def test_precision(self):
        sums = self.read_csv(run("precision", "accumulate", "--count", "200", "--format", "csv", db=self.db).stdout,
                             rows=7, numeric=("value", "error", "first_stall_step", "torch_value"),
                             context="accumulate --csv")
        self.assertEqual({r["variant"] for r in sums} >= {"fp32 += fp32", "fp16 += fp16"}, True)
        cast = ["precision", "autocast", "--batch", "4", "--label", LABEL]
        tensors = self.read_csv(run(*cast, "--csv", db=self.db).stdout, context="autocast --csv")
        if MarkdownIt is not None:
            said = self.markdown_texts(run(*cast, "--markdown", "--no-store", db=self.db).stdout)
            self.assertIn("Settings: batch 4, context_length 16, device cpu, dtype bf16, in_features 16, "
                          "model toy, out_features 4, seed 0.", said)
        self.assertIn("ln", [r["tensor"] for r in tensors])
        ops = self.read_csv(run(*cast, "--csv", "--table", "ops", db=self.db).stdout,
                            numeric=("depth", "cast"), context="autocast --table ops")
        self.assertIn("aten::layer_norm", [r["op"] for r in ops])
        # The CPU's policy is said (see Note [autocast on the CPU]).
        table = run(*cast, db=self.db)
        self.assertIn("On the CPU, autocast follows the CPU's op lists", table.stdout)
        self.assertIn("layer_norm (ln) came out bf16", table.stdout)
        run_id = self.last_run()
        self.assertEqual(self.read_csv(run("runs", "export", run_id, "--format", "csv", db=self.db).stdout,
                                       context="runs export autocast")[0].keys(), tensors[0].keys())
        self.assertEqual(len(self.read_csv(run("runs", "export", run_id, "--format", "csv", "--table", "ops",
                                               db=self.db).stdout, context="runs export --table ops")), len(ops))
        bad = run("runs", "export", run_id, "--format", "csv", "--table", "steps", db=self.db, ok=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("it has: tensors, ops", bad.stderr)
        steps = self.read_csv(run("precision", "train", "--steps", "3", "--batch-size", "8", "--csv", db=self.db).stdout,
                              rows=9, numeric=("loss", "loss_scale", "fp16_underflow"), context="train --csv")
        self.assertEqual([r["loss_scale"] for r in steps if r["precision"] == "fp32"], ["", "", ""])
        self.needs_markdown()
        md = run("runs", "show", run_id, "--format", "markdown", db=self.db).stdout
        tensors_md, ops_md = self.tables(md)
        self.assertEqual(len(tensors_md) - 1, len(tensors))
        self.assertEqual(len(ops_md) - 1, len(ops))
        said = self.markdown_texts(md)
        self.assertTrue(any(LABEL in t for t in said), md)
        self.assertTrue(any("batch 4" in t for t in said), md)

    # ---- the memory, profiler and planner labs -----------------------------------------------

    def test_memory_profile_plan(self):
        point = ["--size", "tiny", "--context-length", "16", "--batch", "1", "--warmup", "0", "--device", "cpu", "-q"]
        # The CPU records no allocator history: each point "failed" (exit 3), its prediction stands.
        memory = run("memory", *point, "--context-length", "16,32", "--record-steps", "1", "--csv", db=self.db,
                     ok=False)
        self.assertEqual(memory.returncode, 3, memory.stderr)
        peaks = self.read_csv(memory.stdout, rows=2, numeric=("peak_bytes", "predicted_peak_bytes"),
                              context="memory --csv")
        self.assertEqual(peaks[0]["peak_bytes"], "", "the CPU records no allocator history")
        self.assertGreater(number(peaks[0]["predicted_peak_bytes"]), 0)
        self.read_csv(run("runs", "export", self.last_run(), "--format", "csv", db=self.db).stdout, rows=2,
                      context="runs export memory")
        ops = self.read_csv(run("profile", *point, "--profile-steps", "1", "--format", "csv", db=self.db).stdout,
                            numeric=("calls", "cpu_self_us", "cpu_total_us", "device_us", "flops"),
                            context="profile --csv")
        self.assertTrue(all(r["device_us"] == "" for r in ops), "no device time on the CPU")
        stored = self.read_csv(run("runs", "export", self.last_run(), "--format", "csv", db=self.db).stdout,
                               context="runs export profile")
        self.assertEqual(list(stored[0].keys())[0], "profile")
        plan = ["plan", "-C", "989e12", "-W", "450", "--batch-tokens", "8192", "--d-model", "1024", "--d-ff",
                "4096", "--dp", "2", "--tp", "2"]
        plans = self.read_csv(run(*plan, "--csv", db=self.db).stdout, rows=5,
                              numeric=("flops_per_s", "bandwidth_bytes_per_s", "batch_tokens", "step_s"),
                              context="plan --csv")
        self.assertEqual(number(plans[0]["flops_per_s"]), 989e12)
        self.needs_markdown()
        for t in self.tables(run(*plan, "--format", "markdown", "--no-store", db=self.db).stdout):
            self.assertGreater(len(t), 1)

    # ---- the distributed lab: a table a CSV, --steps and --iters -------------------------------

    def test_distributed(self):
        ar = ["distributed", "allreduce", "--world", "2", "--sizes", "64KiB", "--dtypes", "fp32", "--warmup", "0",
              "-q", "--timeout", "60"]
        rows = self.read_csv(run(*ar, "--iters", "2", "--csv", db=self.db).stdout, rows=1,
                             numeric=("bytes", "time_ms", "busbw_gbps", "ideal_ms"), context="allreduce --csv")
        self.assertEqual(rows[0]["iters"], "2")
        self.assertEqual(self.read_csv(run(*ar, "--steps", "3", "--format", "csv", "--no-store", db=self.db).stdout,
                                       context="allreduce --steps")[0]["iters"], "3")
        ddp = ["distributed", "ddp", "--world", "1", "--size", "tiny", "--context-length", "16", "--batch-size", "2",
               "--warmup", "0", "--steps", "1", "--strategy", "naive", "-q", "--timeout", "120"]
        strategies = self.read_csv(run(*ddp, "--format", "csv", db=self.db).stdout, rows=1,
                                   numeric=("step_ms", "hidden_share", "peak_memory_bytes", "final_loss"),
                                   context="ddp --csv")
        self.assertEqual(strategies[0]["peak_memory_bytes"], "", "no allocator on the CPU")
        self.assertEqual(strategies[0]["world_size"], "1")
        # Points count from 1 in every table, CSV and error message alike.
        self.assertEqual(strategies[0]["point"], "1")
        run_id = self.last_run()
        memory = self.read_csv(run("runs", "export", run_id, "--format", "csv", "--table", "memory",
                                   db=self.db).stdout, rows=1, numeric=("parameter_bytes",), context="ddp memory")
        self.assertGreater(number(memory[0]["parameter_bytes"]), 0)
        self.assertEqual(memory[0]["point"], "1")
        self.assertEqual(self.read_csv(run("runs", "export", run_id, "--format", "csv", db=self.db).stdout,
                                       context="runs export ddp")[0].keys(), strategies[0].keys())
        self.needs_markdown()
        md = run("runs", "show", run_id, "--format", "markdown", db=self.db).stdout
        self.assertGreaterEqual(len(self.tables(md)), 2, md)
        self.assertIn("Settings of every DDP point: size tiny, context length 16, batch per rank 2, "
                      "warm-up steps 0, measured steps 1, attention naive.", self.markdown_texts(md))


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    pythons = sys.argv.pop(1).split(":") if len(sys.argv) > 1 else []
    if MarkdownIt is None:
        for py in pythons:
            if py and os.path.exists(py) and os.path.abspath(py) != os.path.abspath(sys.executable) and \
                    subprocess.run([py, "-c", "import markdown_it"], capture_output=True).returncode == 0:
                os.execv(py, [py, os.path.abspath(__file__), CLI])
    unittest.main()
