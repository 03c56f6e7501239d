#!/usr/bin/env python3
"""trainscope-cli against hostile or unlucky input: exports that fail half-way, files that are
the store, labels with invalid UTF-8 or terminal codes, a store that fails mid-run.
Usage: test_cli_hardening.py path/to/trainscope-cli"""
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from cli_process import CliRunner  # noqa: E402

CLI = None
RUNNER = None  # See Note [the CLI's fork server]; the tests about signals and limits start the CLI itself
TINY = ["--size", "tiny", "--device", "cpu", "--context-length", "8", "--batch-size", "1", "--steps", "1",
        "--warmup", "0", "-q"]


def run(*args, db=None, env_extra=None, timeout=300):
    env = dict(os.environ)
    if db:
        env["TRAINSCOPE_DB"] = db
    env.update(env_extra or {})
    return RUNNER.run(args, env=env, timeout=timeout)


def text(b):
    return b.decode("utf-8", "replace")


class Hardening(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def tiny_run(self, *extra):
        p = run("bench", *TINY, *extra, db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        return str(json.loads(run("runs", "list", "--json", db=self.db).stdout)[0]["id"])

    def run_count(self):
        if not os.path.exists(self.db):
            return 0
        with sqlite3.connect(self.db) as c:
            return c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def set_label(self, rid, label_bytes):
        with sqlite3.connect(self.db) as c:
            c.execute("UPDATE runs SET label = CAST(? AS TEXT) WHERE id = ?", (label_bytes, int(rid)))

    # Item 1: exports
    def test_export_of_a_missing_run_leaves_the_target_alone(self):
        self.tiny_run()
        keep = self.path("keep.md")
        with open(keep, "w") as f:
            f.write("notes\n")
        p = run("runs", "export", "999", "-o", keep, db=self.db)
        self.assertEqual(p.returncode, 2, text(p.stderr))
        self.assertIn("run 999 does not exist", text(p.stderr))
        self.assertNotIn("wrote", text(p.stderr))
        with open(keep) as f:
            self.assertEqual(f.read(), "notes\n")

    def test_export_refuses_to_overwrite_the_store(self):
        rid = self.tiny_run()
        for target in (self.db, os.path.join(self.tmp.name, ".", "results.db")):
            p = run("runs", "export", rid, "-o", target, db=self.db)
            self.assertEqual(p.returncode, 2, text(p.stderr))
            self.assertIn("results store", text(p.stderr))
        link = self.path("link.md")
        os.symlink(self.db, link)
        self.assertEqual(run("runs", "export", rid, "-o", link, db=self.db).returncode, 2)
        p = run("runs", "list", "--json", db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        self.assertEqual(len(json.loads(p.stdout)), 1, "the store survived")

    def test_export_write_errors_fail(self):
        rid = self.tiny_run()
        p = run("runs", "export", rid, "-o", "/dev/full", db=self.db)
        self.assertNotEqual(p.returncode, 0)
        self.assertNotIn("wrote", text(p.stderr))
        self.assertIn("/dev/full", text(p.stderr))
        self.assertGreater(p.returncode, 0, "an error exit, not a signal")
        with open("/dev/full", "w") as full:
            p = subprocess.run([CLI, "runs", "show", rid], stdout=full, stderr=subprocess.PIPE,
                               env=dict(os.environ, TRAINSCOPE_DB=self.db))
        self.assertEqual(p.returncode, 3, text(p.stderr))
        self.assertIn("standard output", text(p.stderr))

    def test_export_into_a_missing_folder_names_it(self):
        rid = self.tiny_run()
        target = self.path("no/such/dir/out.md")
        p = run("runs", "export", rid, "-o", target, db=self.db)
        self.assertEqual(p.returncode, 2, text(p.stderr))
        self.assertIn(target, text(p.stderr))

    def test_export_replaces_a_file_whole(self):
        rid = self.tiny_run()
        out = self.path("report.csv")
        with open(out, "w") as f:
            f.write("old " * 10000)
        p = run("runs", "export", rid, "--format", "csv", "-o", out, db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        self.assertIn("wrote", text(p.stderr))
        with open(out) as f:
            self.assertTrue(f.read().startswith("size,"))
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith(".report")], [], "no temporary left")

    # Item 2: a sweep file nested 100k levels deep
    def test_deeply_nested_sweep_is_refused(self):
        sweep = self.path("deep.json")
        with open(sweep, "w") as f:
            f.write('{"sizes":' + "[" * 200000 + "]" * 200000 + "}")
        p = run("bench", "--sweep", sweep, db=self.db)
        self.assertEqual(p.returncode, 2, text(p.stderr))
        self.assertIn("nested more than 64 levels", text(p.stderr))
        self.assertIn(sweep, text(p.stderr))
        self.assertEqual(self.run_count(), 0)

    # Item 13: a folder as the sweep file
    def test_sweep_folder_is_named(self):
        p = run("bench", "--sweep", self.tmp.name, db=self.db)
        self.assertEqual(p.returncode, 2, text(p.stderr))
        self.assertIn(self.tmp.name, text(p.stderr))

    # Item 3: a store that fails mid-run (the run is deleted under it) stops the run, exit 3
    def test_a_point_that_cannot_be_stored_fails_the_run(self):
        env = dict(os.environ, TRAINSCOPE_DB=self.db)
        proc = subprocess.Popen([CLI, "bench", "--size", "tiny", "--device", "cpu", "--context-length", "16,32,48,64",
                                 "--batch-size", "1", "--warmup", "0", "--steps", "300", "--jsonl", "-q"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        first = proc.stdout.readline()  # the first step: the run exists by now
        self.assertIn(b'"step"', first)
        rid = str(json.loads(run("runs", "list", "--json", db=self.db).stdout)[0]["id"])
        self.assertEqual(run("runs", "delete", rid, db=self.db).returncode, 0)
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 3, text(err))
        self.assertIn("could not store point 1 of 4", text(err))
        results = [json.loads(l) for l in (first + out).splitlines() if b'"result"' in l]
        self.assertEqual(len(results), 1, "the measurement is still shown, and the run stopped")
        self.assertEqual(results[0]["status"], "ok")

    # Item 14: a store that cannot take a new run is the same exit 3 for every command (it was
    # 2 for attention and precision): the input was fine, the store could not be written.
    def test_a_store_that_cannot_take_a_run_is_exit_3_for_every_command(self):
        self.tiny_run()
        with sqlite3.connect(self.db) as c:
            c.execute("CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'the disk is full'); END")
        for args in (["bench", *TINY], ["profile", "--size", "tiny", "--device", "cpu", "--context-length", "8",
                                        "--batch-size", "1", "--warmup", "0"],
                     ["memory", "--size", "tiny", "--device", "cpu", "--context-length", "8"],
                     ["attention", "--device", "cpu", "--preset", "a", "--seq", "16", "--steps", "1", "--warmup", "0"],
                     ["precision", "accumulate"], ["precision", "autocast", "--device", "cpu"],
                     ["distributed", "allreduce", "--backend", "gloo", "--world", "2", "--sizes", "1MB"]):
            p = run(*args, db=self.db)
            self.assertEqual(p.returncode, 3, f"{args[:2]}: {text(p.stderr)}")
            self.assertIn("the disk is full", text(p.stderr), args[:2])

    # Item 15: an option of one value given twice is the last one, in every command (attention,
    # precision and runs refused it; bench, profile, memory and distributed took the last).
    def test_an_option_given_twice_is_the_last_one_everywhere(self):
        self.tiny_run("--label", "kept")
        p = run("runs", "list", "--json", "--db", self.path("elsewhere.db"), "--db", self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        self.assertEqual(json.loads(p.stdout)[0]["label"], "kept")
        p = run("precision", "accumulate", "--count", "5", "--count", "10", "--no-store", "--jsonl")
        self.assertEqual(p.returncode, 0, text(p.stderr))
        p = run("attention", "--device", "cpu", "--preset", "a", "--preset", "b", "--impl", "naive", "--seq", "16",
                "--warmup", "0", "--steps", "1", "--no-store", "--jsonl")
        self.assertEqual(p.returncode, 0, text(p.stderr))

    # Item 13: -q still says why a point failed
    def test_quiet_still_names_a_point_that_ran_out_of_memory(self):
        # A vocabulary whose whole training point (embedding and LM head, their gradients and
        # AdamW's state: about 2,100 bytes a token at d_model 64) takes 30% of this machine's
        # memory passes the up-front check; a 6 GiB cap on the address space makes an
        # allocation fail, as a full machine would. That is a result (OOM, exit 0), said in
        # words, not LibTorch's "[enforce fail at alloc_cpu.cpp]".
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        vocab = str(int(0.3 * ram / 2100))
        cap = lambda: resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
        env = dict(os.environ, TRAINSCOPE_DB=self.db)
        p = subprocess.run([CLI, "bench", *TINY, "--vocab-size", vocab], capture_output=True, timeout=300,
                           env=env, preexec_fn=cap)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        self.assertIn("point 1: OOM: out of memory on the CPU: tried to allocate", text(p.stderr))
        self.assertNotIn("enforce fail", text(p.stderr))

    def test_a_point_bigger_than_the_machine_is_refused_before_it_runs(self):
        p = run("bench", *TINY, "--vocab-size", "2000000000", db=self.db)
        self.assertEqual(p.returncode, 2, text(p.stderr))
        self.assertIn("more than the", text(p.stderr))
        self.assertIn("this machine's memory", text(p.stderr))

    # Item 5: one label of invalid UTF-8 must not break listing or showing the store
    def test_invalid_utf8_label_is_listed_and_shown(self):
        self.tiny_run("--label", "fine")
        rid = self.tiny_run("--label", b"bad \xff\xfe label")
        p = run("runs", "list", "--json", db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        labels = [r["label"] for r in json.loads(p.stdout)]
        self.assertEqual(labels, ["bad \ufffd\ufffd label", "fine"])
        for args in (["runs", "show", rid, "--format", "json"], ["runs", "export", rid, "--format", "json"]):
            p = run(*args, db=self.db)
            self.assertEqual(p.returncode, 0, (args, text(p.stderr)))
            self.assertEqual(json.loads(p.stdout)["label"], "bad \ufffd\ufffd label")
        out = self.path("run.json")
        p = run("runs", "export", rid, "--format", "json", "-o", out, db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        with open(out) as f:
            self.assertEqual(json.load(f)["id"], int(rid))

    # Item 12: labels cannot forge rows or send terminal codes through `runs list`
    def test_labels_cannot_spoof_the_listing(self):
        self.tiny_run("--label", "real\n  999  2026-01-01T00:00:00Z  bench  fake")
        self.tiny_run("--label", "\x1b[2J\x1b]0;owned\x07 red\x9b")
        p = run("runs", "list", db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        lines = text(p.stdout).splitlines()
        self.assertEqual(len(lines), 3, lines)  # the header and two rows, nothing forged
        self.assertNotIn("\x1b", p.stdout.decode("utf-8", "replace"))
        self.assertNotIn(b"\x07", p.stdout)
        self.assertIn("\\n", lines[-1])
        self.assertIn("\\x1b[2J", lines[1] + lines[2])
        rid = str(json.loads(run("runs", "list", "--json", db=self.db).stdout)[0]["id"])
        p = run("runs", "show", rid, db=self.db)
        self.assertNotIn(b"\x1b", p.stdout)

    # Item 13: a damaged row leaves the good ones shown and is named; damage always exits 3
    def test_a_damaged_row_is_named_and_the_rest_shown(self):
        p = run("bench", *TINY, "--mode", "forward,train", db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        with sqlite3.connect(self.db) as c:
            c.execute("UPDATE points SET result_json = '{\"steps\": 5' WHERE idx = 1")
        for fmt in ("table", "csv", "json"):
            p = run("runs", "show", "1", "--format", fmt, db=self.db)
            self.assertEqual(p.returncode, 3, text(p.stderr))
            self.assertIn("run 1 point 2", text(p.stderr))
            self.assertIn("forward", text(p.stdout))
        self.assertEqual(len(json.loads(run("runs", "show", "1", "--format", "json", db=self.db).stdout)["results"]), 1)
        p = run("runs", "list", db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))

    def test_a_file_that_is_not_a_store_exits_3_everywhere(self):
        with open(self.db, "w") as f:
            f.write("this is not a database, just some text\n" * 200)
        for args in (["runs", "list"], ["runs", "show", "1"], ["runs", "export", "1"], ["runs", "delete", "1"],
                     ["bench", *TINY]):
            p = run(*args, db=self.db)
            self.assertEqual(p.returncode, 3, (args, text(p.stderr)))
            self.assertIn("not a database", text(p.stderr))
            self.assertIn(self.db, text(p.stderr))

    # Item 7: a store this build cannot write (here a newer schema) is listed and shown
    # read-only; a run or a delete says why it cannot write
    def test_a_store_that_cannot_be_written_is_read(self):
        rid = self.tiny_run("--label", "old run")
        with sqlite3.connect(self.db) as c:
            c.execute("PRAGMA user_version=4")  # newer than this build's schema 3
        p = run("runs", "list", "--json", db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        self.assertEqual(json.loads(p.stdout)[0]["label"], "old run")
        p = run("runs", "show", rid, db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        self.assertIn("old run", text(p.stdout))
        self.assertEqual(run("runs", "export", rid, "--format", "csv", db=self.db).returncode, 0)
        for args in (["bench", *TINY], ["runs", "delete", rid]):
            p = run(*args, db=self.db)
            self.assertEqual(p.returncode, 2, text(p.stderr))
            self.assertIn("can only be read here", text(p.stderr))
            self.assertIn("schema version 4 is newer", text(p.stderr))
        self.assertEqual(run("bench", *TINY, "--no-store", db=self.db).returncode, 0)

    # Item 12, the rest of a stored row: fields of a row edited in the file reach no terminal raw
    def test_stored_fields_cannot_send_terminal_codes(self):
        rid = self.tiny_run()
        with sqlite3.connect(self.db) as c:
            row = json.loads(c.execute("SELECT result_json FROM points").fetchone()[0])
            row["environment"]["hostname"] = "evil\x1b]0;owned\x07\x1b[2J"
            row["config"]["model"]["name"] = "tiny\x1b[31m"
            c.execute("UPDATE points SET result_json = ?", (json.dumps(row),))
        for fmt in ("table", "markdown", "csv"):
            p = run("runs", "show", rid, "--format", fmt, db=self.db)
            self.assertEqual(p.returncode, 0, text(p.stderr))
            self.assertNotIn(b"\x1b", p.stdout, fmt)
            self.assertNotIn(b"\x07", p.stdout, fmt)
        self.assertIn("evil\\x1b]0;owned", text(run("runs", "show", rid, db=self.db).stdout))

    def test_export_into_a_disk_that_fills_up_keeps_the_old_file(self):
        import resource
        import signal
        rid = self.tiny_run()
        out = self.path("report.json")
        with open(out, "w") as f:
            f.write("old\n")

        def small_disk():  # writes beyond 1 KiB fail with EFBIG, as on a full disk
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

        p = subprocess.run([CLI, "runs", "export", rid, "--format", "json", "-o", out], capture_output=True,
                           env=dict(os.environ, TRAINSCOPE_DB=self.db), preexec_fn=small_disk)
        self.assertEqual(p.returncode, 3, text(p.stderr))
        self.assertIn(out, text(p.stderr))
        self.assertNotIn("wrote", text(p.stderr))
        with open(out) as f:
            self.assertEqual(f.read(), "old\n")
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith(".report")], [])


class OutputsNeverDestroyTheStore(unittest.TestCase):
    """Every file a command writes goes through one guarded, atomic writer: never onto the
    store (or another SQLite database), refused up front with exit 2; written whole or not at
    all. A store deleted while a run writes fails the run loudly."""

    PROFILE = ["profile", "--size", "tiny", "--device", "cpu", "--context-length", "8", "--batch-size", "1",
               "--warmup", "0", "--profile-steps", "1", "-q"]
    MEMORY = ["memory", "--size", "tiny", "--device", "cpu", "--context-length", "8", "--batch-size", "1",
              "--warmup", "0", "-q"]

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "results.db")
        p = run("bench", *TINY, db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def store_intact(self):
        with sqlite3.connect(self.db) as c:
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            return c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def test_profile_trace_onto_the_store_is_refused(self):
        other = self.path("other.db")
        sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.close()
        link = self.path("link.json")
        os.symlink(self.db, link)
        for target in (self.db, self.db + "-wal", link, other):
            for db in (self.db, None):  # --db named, or the store found through TRAINSCOPE_DB
                args = [*self.PROFILE, "--trace", target] + (["--db", db] if db else [])
                p = run(*args, db=self.db)
                self.assertEqual(p.returncode, 2, (target, text(p.stderr)))
                self.assertIn("--trace", text(p.stderr))
        self.assertEqual(self.store_intact(), 1, "nothing ran, nothing was stored")

    def test_memory_snapshots_onto_the_store_are_refused(self):
        for flag in ("--snapshot", "--oom-snapshot"):
            extra = ["--frontier", "context"] if flag == "--oom-snapshot" else []
            p = run(*self.MEMORY, *extra, flag, self.db, db=self.db)
            self.assertEqual(p.returncode, 2, text(p.stderr))
            self.assertIn(flag, text(p.stderr))
            self.assertIn("results store", text(p.stderr))
        self.assertEqual(self.store_intact(), 1)

    def test_profile_trace_is_written_whole_or_not_at_all(self):
        import signal
        out = self.path("trace.json")
        with open(out, "w") as f:
            f.write("old\n")

        def small_disk():  # writes beyond 4 KiB fail with EFBIG, as on a full disk
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

        p = subprocess.run([CLI, *self.PROFILE, "--no-store", "--trace", out], capture_output=True,
                           env=dict(os.environ, TRAINSCOPE_DB=self.db), preexec_fn=small_disk, timeout=300)
        self.assertEqual(p.returncode, 3, text(p.stderr))
        self.assertIn("--trace", text(p.stderr))
        with open(out) as f:
            self.assertEqual(f.read(), "old\n", "the old trace is kept whole")
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith(".trace")], [])
        # And with room, the whole trace lands.
        p = run(*self.PROFILE, "--no-store", "--trace", out, db=self.db)
        self.assertEqual(p.returncode, 0, text(p.stderr))
        with open(out) as f:
            self.assertIn("traceEvents", json.load(f))

    def test_a_store_deleted_during_a_run_fails_it(self):
        proc = subprocess.Popen([CLI, "bench", "--size", "tiny", "--device", "cpu", "--context-length", "16,32,48",
                                 "--batch-size", "1", "--warmup", "0", "--steps", "200", "--jsonl", "-q"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(os.environ, TRAINSCOPE_DB=self.db))
        self.assertIn(b'"step"', proc.stdout.readline())  # the run exists by now
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.unlink(self.db + suffix)
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 3, text(err))
        self.assertIn("could not store point 1 of 3", text(err))
        self.assertIn("was deleted", text(err))
        results = [l for l in out.splitlines() if b'"result"' in l]
        self.assertEqual(len(results), 1, "the run stopped at the first point it could not store")


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    RUNNER = CliRunner(CLI)
    unittest.main(verbosity=2)
