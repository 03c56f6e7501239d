#!/usr/bin/env python3
"""A table of bad invocations of every trainscope-cli command. Each must exit 2, say on stderr
what was wrong by naming the bad value, never crash, and leave the results store as it was.
Usage: test_bad_input.py path/to/trainscope-cli"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from cli_process import CliRunner  # noqa: E402

CLI = None
RUNNER = None  # See Note [the CLI's fork server]: the table starts the CLI about 140 times
TINY = ["--size", "tiny", "--device", "cpu", "--context-length", "8", "--batch-size", "1", "--steps", "1",
        "--warmup", "0", "-q"]


def write(path, content):
    with open(path, "w") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return path


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.db = os.path.join(d, "results.db")
        p = cls.cli("bench", *TINY, "--label", "the only run")
        assert p.returncode == 0, p.stderr
        base = {"size": "tiny", "device": "cpu", "context_length": 8, "batch_size": 1, "steps": 1, "warmup": 0}
        cls.files = {
            "good": write(os.path.join(d, "good.json"), {"base": base}),
            "syntax": write(os.path.join(d, "syntax.json"), '{"base": {"size": "tiny",}'),
            "deep": write(os.path.join(d, "deep.json"), '{"sizes":' + "[" * 100000 + "]" * 100000 + "}"),
            "typo": write(os.path.join(d, "typo.json"), {"base": base, "precisionz": ["fp32"]}),
            "size": write(os.path.join(d, "size.json"), {"base": base, "sizes": ["enormous"]}),
            "big": write(os.path.join(d, "big.json"), {"base": base, "context_lengths": [8] * 1000,
                                                      "batch_sizes": [1] * 1000, "warmups": [0] * 63}),
            "lr": write(os.path.join(d, "lr.json"), {"base": dict(base, learning_rate="Infinity")}),
            "rope": write(os.path.join(d, "rope.json"), {"base": dict(base, rope_theta="Infinity")}),
            "array": write(os.path.join(d, "array.json"), [1, 2, 3]),
            "steps": write(os.path.join(d, "steps.json"), {"base": dict(base, steps=2147483647)}),
            "seed": write(os.path.join(d, "seed.json"), {"base": dict(base, seed=-1)}),
            "ctx": write(os.path.join(d, "ctx.json"), {"base": base, "context_lengths": [99999999999999]}),
            "exec": write(os.path.join(d, "exec.json"), {"base": base, "execs": ["eager", "compiled"]}),
            # The second probe's accepted-invalid inputs and unbounded reads.
            "dupkey": write(os.path.join(d, "dupkey.json"),
                            '{"base": {"size": "tiny", "device": "cpu", "steps": 1, "steps": 2}}'),
            "nul": write(os.path.join(d, "nul.json"), json.dumps({"base": base}) + "\0{garbage"),
            "huge": write(os.path.join(d, "huge.json"), " " * (17 << 20) + json.dumps({"base": base})),
        }
        os.mkfifo(os.path.join(d, "fifo.json"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def cli(cls, *args, env=None):
        e = dict(os.environ, TRAINSCOPE_DB=cls.db) if env is None else env
        return RUNNER.run(args, env=e, timeout=120)

    def stored(self):
        with sqlite3.connect(self.db) as c:
            return (c.execute("SELECT COUNT(*) FROM runs").fetchone()[0],
                    c.execute("SELECT COUNT(*) FROM points").fetchone()[0])

    def cases(self):
        f, d = self.files, self.tmp.name
        rid = "1"
        return [
            # bench: values
            (["bench", *TINY, "--size", "huge"], "huge"),
            (["bench", *TINY, "--size", ","], "--size: no value given"),
            (["bench", *TINY, "--size", ""], "--size: no value given"),
            (["bench", *TINY, "--precision", "fp8"], "fp8"),
            (["bench", *TINY, "--precision", ","], "--precision: no value given"),
            (["bench", *TINY, "--mode", "sideways"], "sideways"),
            (["bench", *TINY, "--attention", "fastest"], "fastest"),
            (["bench", *TINY, "--device", "tpu"], "tpu"),
            (["bench", *TINY, "--device", ","], "--device: no value given"),
            (["bench", *TINY, "--device", "cuda:x"], "cuda:x"),
            (["bench", *TINY, "--context-length", "abc"], "abc"),
            (["bench", *TINY, "--context-length", "0"], "context_length must be positive (got 0)"),
            (["bench", *TINY, "--context-length", ","], "--context-length: no value given"),
            (["bench", *TINY, "--context-length", "99999999999999"], "context 99999999999999"),
            (["bench", *TINY, "--context-length", "99999999999999999999"], "99999999999999999999"),
            (["bench", *TINY, "--batch-size", "-1"], "batch_size must be positive (got -1)"),
            (["bench", *TINY, "--batch-size", ","], "--batch-size: no value given"),
            (["bench", *TINY, "--batch-size", "100000000"], "batch 100000000"),
            (["bench", *TINY, "--warmup", "-1"], "--warmup: -1"),
            (["bench", *TINY, "--warmup", "4294967297"], "4294967297"),
            (["bench", *TINY, "--warmup", "x1"], "x1"),
            (["bench", *TINY, "--steps", "0"], "--steps: 0"),
            (["bench", *TINY, "--warmup", "1", "--steps", "2147483647"], "2147483647"),
            (["bench", *TINY, "--steps", "-5"], "-5"),
            (["bench", *TINY, "--steps", "1.5"], "1.5"),
            (["bench", *TINY, "--seed", "-1"], "--seed: -1"),
            (["bench", *TINY, "--seed", "abc"], "abc"),
            (["bench", *TINY, "--seed", "18446744073709551616"], "18446744073709551616"),
            (["bench", *TINY, "--lr", "-1"], "(got -1)"),
            (["bench", *TINY, "--learning-rate", "0"], "(got 0)"),
            (["bench", *TINY, "--lr", "inf"], "inf"),
            (["bench", *TINY, "--lr", "nan"], "nan"),
            (["bench", *TINY, "--lr", "1e999"], "1e999"),
            (["bench", *TINY, "--num-heads", "7"], "not divisible by num_heads 7"),
            (["bench", *TINY, "--d-model", "-5"], "-5"),
            (["bench", *TINY, "--d-model", "0"], "--d-model: 0"),
            (["bench", *TINY, "--num-layers", "abc"], "abc"),
            (["bench", *TINY, "--vocab-size", "0"], "--vocab-size: 0"),
            (["bench", *TINY, "--d-ff", "99999999999999"], "d_ff 99999999999999"),
            (["bench", *TINY, "--d-model", "128", "--size", "tiny,mini"], "single --size"),
            (["bench", *TINY, "--no-such-flag"], "--no-such-flag"),
            (["bench", *TINY, "--markdown", "--csv"], "--csv"),
            # bench: the execution mode (eager / compiled), refused where it cannot capture
            (["bench", *TINY, "--exec", "fast"], "--exec: 'fast' is not one of eager, compiled"),
            (["bench", *TINY, "--exec", ","], "--exec: no value given"),
            (["bench", *TINY, "--compile"], "compiled mode captures CUDA graphs: it needs a CUDA device"),
            (["bench", *TINY, "--exec", "eager,compiled"], "it needs a CUDA device"),
            (["bench", *TINY, "--compile", "--exec", "eager"], "--compile means --exec compiled"),
            # bench: sweep files
            (["bench", "--sweep", "/nonexistent.json"], "/nonexistent.json"),
            (["bench", "--sweep", d], d),
            (["bench", "--sweep", ""], "--sweep: no file given"),
            (["bench", "--sweep", f["syntax"]], f["syntax"]),
            (["bench", "--sweep", f["deep"]], "nested more than 64 levels"),
            (["bench", "--sweep", f["typo"]], "precisionz"),
            (["bench", "--sweep", f["size"]], "enormous"),
            (["bench", "--sweep", f["big"]], "63000000 points"),
            (["bench", "--sweep", f["lr"]], "learning_rate must be a positive finite number (got inf)"),
            (["bench", "--sweep", f["rope"]], "rope_theta must be a positive finite number (got inf)"),
            (["bench", "--sweep", f["array"]], "(top level)"),
            (["bench", "--sweep", f["steps"]], "steps 2147483647"),
            (["bench", "--sweep", f["seed"]], "-1"),
            (["bench", "--sweep", f["ctx"]], "context 99999999999999"),
            (["bench", "--sweep", f["good"], "--size", "bogus"], "--size cannot be given with --sweep"),
            (["bench", "--sweep", f["good"], "--steps", "-5"], "--steps cannot be given with --sweep"),
            (["bench", "--sweep", f["good"], "--lr", "1"], "--lr cannot be given with --sweep"),
            (["bench", "--sweep", f["exec"]], "compiled mode captures CUDA graphs"),
            (["bench", "--sweep", f["good"], "--compile"], "--compile cannot be given with --sweep"),
            (["bench", "--sweep", f["good"], "--checkpoint", "2"], "--checkpoint cannot be given with --sweep"),
            (["bench", "--size", "tiny", "--checkpoint", "0"], "--checkpoint: '0' is not none, a number of blocks"),
            (["bench", "--size", "tiny", "--checkpoint", "2", "--code", "examples/course-checkout"], "checkpointing applies to TrainScope's model"),
            # attention
            (["attention", "--device", "cpu", "--impl", "fastest"], "fastest"),
            (["attention", "--device", "cpu", "--seq", "128,abc"], "abc"),
            (["attention", "--device", "cpu", "--seq", ","], "--seq: no value given"),
            (["attention", "--device", "cpu", "--seq", "0"], "'0'"),
            (["attention", "--device", "cpu", "--head-dim", "-4"], "-4"),
            (["attention", "--device", "cpu", "--dtype", "fp8"], "fp8"),
            (["attention", "--device", "cpu", "--pass", "sideways"], "sideways"),
            (["attention", "--device", "cpu", "--preset", "c"], "'c'"),
            (["attention", "--device", "tpu"], "tpu"),
            (["attention", "--device", "cpu", "--steps", "0"], "--steps: 0"),
            (["attention", "--device", "cpu", "--warmup", "-1"], "--warmup: -1"),
            (["attention", "--device", "cpu", "--seed", "-1"], "--seed: -1"),
            (["attention", "--device", "cpu", "--steps", "99999999999"], "99999999999"),
            (["attention", "--device", "cpu", "--seq", "1099511627776"], "seq 1099511627776"),
            (["attention", "--device", "cpu", "--markdown", "--csv"], "--csv"),
            (["attention", "--device", "cpu", "--bogus"], "--bogus"),
            # runs
            (["runs", "frob"], "frob"),
            (["runs"], "runs: no command given"),
            (["runs", "list", "--bogus"], "--bogus"),
            (["runs", "list", "extra"], "extra"),
            (["runs", "show", "999"], "run 999 does not exist"),
            (["runs", "show", "abc"], "abc"),
            (["runs", "show", "0"], "run id: 0"),
            (["runs", "show", "-1"], "-1"),
            (["runs", "show", "99999999999999999999"], "99999999999999999999"),
            (["runs", "show", rid, "--format", "yaml"], "yaml"),
            (["runs", "show"], "id"),
            (["runs", "export", "999", "-o", os.path.join(d, "out.md")], "run 999 does not exist"),
            (["runs", "export", rid, "--format", "table"], "table"),
            (["runs", "export", rid, "-o", self.db], "results store"),
            (["runs", "export", rid, "-o", self.db + "-wal"], "results store"),
            (["runs", "export", rid, "-o", d], d),
            (["runs", "export", rid, "-o", "/no/such/dir/x.md"], "/no/such/dir/x.md"),
            (["runs", "delete", "999"], "run 999 does not exist"),
            (["runs", "delete", "abc"], "abc"),
            (["runs", "delete", "1.5"], "1.5"),
            (["runs", "list", "--db", d], d),
            (["runs", "show", rid, "--db", "/no/such/dir/x.db"], "/no/such/dir/x.db"),
            # the second probe: limits up front, accepted-invalid input, unbounded reads
            (["bench", *TINY, "--lr", "1e300"], "learning_rate 1e+300 is more than the limit of 10"),
            (["bench", "--sweep", f["dupkey"]], 'the key "steps" is given twice'),
            (["bench", "--sweep", f["nul"]], "a NUL byte"),
            (["bench", "--sweep", f["huge"]], "more than a sweep file's limit of 16 MiB"),
            (["bench", "--sweep", "/dev/zero"], "not a regular file"),
            (["bench", "--sweep", os.path.join(d, "fifo.json")], "not a regular file"),
            (["attention", "--device", "cpu", "--preset", ""], "--preset: no preset given"),
            (["distributed", "ddp", "--backend", "gloo", "--world", "2", "--size", "tiny", "--bucket-mb", "1e300"],
             "--bucket-mb: 1e300 is more than the limit"),
            (["distributed", "allreduce", "--backend", "gloo", "--world", "2", "--timeout", "1e300"],
             "--timeout: 1e300 is more than the limit of 86400"),
            (["distributed", "ddp", "--backend", "gloo", "--world", "1", "--size", "tiny", "--attention", "flash"],
             "attention 'flash' runs on CUDA GPUs, and gloo's ranks run on the CPU"),
            # a point the host cannot hold is refused with its estimate, not left to the OOM killer
            (["bench", "--size", "small", "--num-layers", "100000", "--device", "cpu"],
             "on the CPU needs at least"),
            (["profile", "--size", "small", "--num-layers", "100000", "--device", "cpu"],
             "on the CPU needs at least"),
            (["memory", "--size", "small", "--num-layers", "100000", "--device", "cpu"],
             "on the CPU needs at least"),
            (["precision", "autocast", "--model", "small", "--batch", "65536", "--context-length", "65536",
              "--device", "cpu"], "attention scores (batch 65536 × heads 12 × context 65536²) would take"),
            # the model tables: an edition that is not one, and sizes given to it by mistake
            (["bench", *TINY, "--model-table", "2024"], "--model-table: '2024' is not 2026 or 2025"),
            (["bench", *TINY, "--sizes", "small,xl"], "the sizes themselves go to --size"),
            # the distributed lab gets the benchmark's limits, and Gloo's ranks are counted whole
            (["distributed", "ddp", "--backend", "gloo", "--world", "2", "--size", "tiny", "--context-length",
              "1048576", "--batch", "1048576"], "would take 1.84e+19 bytes, more than the 2^40 bytes"),
            (["distributed", "ddp", "--backend", "gloo", "--world", "256", "--size", "large"],
             "gloo ranks of large need at least"),
            (["precision", "sum"], "precision: 'sum' is not a command (one of: "),
            # the flag named, not only the engine's field
            (["precision", "train", "--lr", "1e300"], "--lr: the learning rate '1e300' is not in (0, 10)"),
            (["precision", "train", "--init-scale", "1e300"], "--init-scale: the initial loss scale '1e300' is not in 1..1e30"),
            (["precision", "autocast", "--device", ""], "--device: device '' is not one of cpu, cuda, cuda:N"),
            (["precision", "train", "--device", "cuda:x"], "--device: device 'cuda:x' is not one of cpu, cuda"),
            (["plan", "-C", "989e12", "-W", "1e300", "--size", "small", "--batch-size", "4"],
             "-W/--bandwidth: '1e300' is more than the limit of 1e30"),
            (["distributed", "bogus"], "distributed: 'bogus' is not a command (one of: "),
            (["distributed"], "distributed: no command given (one of: "),
            # info and the top level
            (["info", "extra"], "extra"),
            (["info", "--bogus"], "--bogus"),
            (["frob"], "frob"),
        ]

    def test_every_bad_invocation_exits_2_names_the_value_and_stores_nothing(self):
        cases = self.cases()
        self.assertGreaterEqual(len(cases), 60)
        before = self.stored()
        commands = set()
        for args, needle in cases:
            commands.add(tuple(a for a in args[:2] if not a.startswith("-")))
            with self.subTest(args=args):
                p = self.cli(*args)
                err = p.stderr.decode("utf-8", "replace")
                self.assertEqual(p.returncode, 2, err)
                self.assertIn(needle, err)
                for crash in ("terminate", "Segmentation", "what():", "enforce fail"):
                    self.assertNotIn(crash, err)
                self.assertEqual(self.stored(), before, "the store changed")
        for c in ("bench", "attention", "info"):
            self.assertIn((c,), {k[:1] for k in commands})
        for sub in ("list", "show", "export", "delete"):
            self.assertIn(("runs", sub), commands)

    def test_a_reader_that_goes_away_is_exit_3_not_a_signal(self):
        # `bench --jsonl | head -c1`: the pipe closes after one byte.
        env = dict(os.environ, TRAINSCOPE_DB=self.db)
        proc = subprocess.Popen([CLI, "bench", *TINY, "--steps", "200", "--jsonl", "--no-store"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        proc.stdout.read(1)
        proc.stdout.close()
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.wait(timeout=120)
        self.assertEqual(proc.returncode, 3, err)
        self.assertIn("cannot write to standard output", err)

    def test_without_a_store_location_every_command_exits_2(self):
        env = {k: v for k, v in os.environ.items() if k not in ("HOME", "TRAINSCOPE_DB", "XDG_DATA_HOME")}
        for args in (["bench", *TINY], ["runs", "list"], ["runs", "show", "1"],
                     ["attention", "--device", "cpu", "--seq", "16", "--head-dim", "16", "--impl", "naive",
                      "--steps", "1", "--warmup", "0"]):
            with self.subTest(args=args):
                p = self.cli(*args, env=env)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("neither TRAINSCOPE_DB nor HOME", p.stderr.decode())


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    RUNNER = CliRunner(CLI)
    unittest.main(verbosity=2)
