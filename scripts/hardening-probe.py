#!/usr/bin/env python3
"""The hardening probe: TrainScope tried as a hostile or unlucky user would, on the CPU machine,
with a count of what held and a list of what fell short (docs/HARDENING.md records the counts).

  python3 scripts/hardening-probe.py [--build build/default] [--jobs 2] [--quick] [--json FILE]

Categories (each case is one process, timed out at 120 s):
  options     every option of every subcommand (read from its --help) given hostile values
              (-1, 0, 1e300, nan, inf, '', 'abc', 2^63, a 10,000-character string, a control
              byte): exit 0 (a value it can take) or exit 2 in one line naming the option; never
              a signal, a hang, exit 1, a C++ exception's or LibTorch's raw text
  outputs     every file a command writes (--trace, --snapshot, --oom-snapshot, runs export -o,
              the window's --screenshot and --report) aimed at the store, its -wal, a symbolic
              and a hard link to it: refused (exit 2) and the store intact
  kills       a sweep killed with SIGKILL at a random moment, again and again: the store passes
              integrity_check, every finished point is kept, the run lists as not finished
  writers     four commands storing into one store at once: no 'database is locked', all stored
  distributed a killed rank, a rank past the hang timeout, settings that can never meet, a port
              held by another program: named, exit 2 or 3 within bounds, no worker left behind
  limits      a file-size limit, /dev/full as output, a store on a read-only path, memory a
              point cannot get: exit 2 or 3 with a message, never a signal or an OOM kill
  window      the window's scripted invocations with bad values (offscreen)
  fuzz        the in-process fuzz targets, scaled up (tests/fuzz)
Exit status: 0 when nothing fell short, 1 otherwise."""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = ["-1", "0", "1e300", "nan", "inf", "", "abc", "9223372036854775808", "x" * 10000, "\x01"]
# What must never reach the user: a C++ exception escaping, LibTorch's backtrace, a sanitizer.
RAW = re.compile(r"terminate called|what\(\):|frame #\d+|Exception raised from|Segmentation|"
                 r"core dumped|AddressSanitizer|runtime error:")
# A quick point of each command, on the CPU: the hostile value replaces one option of these.
BASES = {
    ("bench",): ["--size", "tiny", "--context-length", "16", "--warmup", "0", "--steps", "1", "--device", "cpu"],
    ("profile",): ["--size", "tiny", "--context-length", "16", "--warmup", "0", "--profile-steps", "1",
                   "--device", "cpu"],
    ("memory",): ["--size", "tiny", "--context-length", "16", "--device", "cpu"],
    ("attention",): ["--device", "cpu", "--seq", "16", "--head-dim", "16", "--impl", "naive", "--warmup", "0",
                     "--steps", "1"],
    ("precision", "accumulate"): [],
    ("precision", "autocast"): [],
    ("precision", "train"): ["--steps", "2"],
    ("distributed", "allreduce"): ["--backend", "gloo", "--world", "2", "--sizes", "64KiB", "--warmup", "0",
                                   "--iters", "1", "--timeout", "30"],
    ("distributed", "ddp"): ["--backend", "gloo", "--world", "2", "--size", "tiny", "--context-length", "16",
                             "--warmup", "0", "--steps", "1", "--timeout", "30"],
    ("plan",): ["-C", "989e12", "-W", "450", "--size", "small", "--batch-size", "4"],
}
# Options that take paths or code, probed in their own categories; flags take no value.
SKIP = {"--db", "--help", "--python", "--code", "--sweep", "--trace", "--snapshot", "--oom-snapshot", "--label",
        "--measure"}


class Probe:
    def __init__(self, args):
        self.cli = os.path.join(args.build, "app", "trainscope-cli")
        self.gui = os.path.join(args.build, "app", "trainscope")
        self.jobs = args.jobs
        self.quick = args.quick
        self.tmp = tempfile.mkdtemp(prefix="trainscope-probe-")
        self.counts = {}
        self.short = []  # (category, what, why)
        self.marker = "TRAINSCOPE_PROBE_" + str(os.getpid())

    # ---- helpers
    def env(self, **extra):
        e = dict(os.environ)
        e.update({"TRAINSCOPE_DB": os.path.join(self.tmp, "default.db"), "QT_QPA_PLATFORM": "offscreen",
                  self.marker: "1", "XDG_CONFIG_HOME": os.path.join(self.tmp, "config")})
        e.update(extra)
        return e

    def run(self, argv, timeout=120, **extra):
        t0 = time.time()
        try:
            p = subprocess.run(argv, capture_output=True, timeout=timeout, env=self.env(**extra))
            return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), \
                time.time() - t0
        except subprocess.TimeoutExpired as e:
            return None, "", (e.stderr or b"").decode("utf-8", "replace"), time.time() - t0

    def tally(self, category, held, what="", why=""):
        c = self.counts.setdefault(category, {"cases": 0, "held": 0})
        c["cases"] += 1
        if held:
            c["held"] += 1
        else:
            self.short.append((category, what, why))

    def left_behind(self):
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if (self.marker + "=1").encode() in f.read().split(b"\0"):
                        out.append(int(pid))
            except OSError:
                pass
        return out

    def integrity(self, db):
        try:
            c = sqlite3.connect(db)
            ok = c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            c.close()
            return ok
        except sqlite3.Error:
            return False

    def make_store(self, name):
        db = os.path.join(self.tmp, name)
        rc, _, err, _ = self.run([self.cli, "bench", *BASES[("bench",)], "--db", db])
        assert rc == 0, err
        return db

    # ---- categories
    def options(self):
        cases = []
        for cmd, base in BASES.items():
            rc, out, _, _ = self.run([self.cli, *cmd, "--help"])
            opts = []
            for line in out.splitlines():
                m = re.match(r"\s+(?:-\w,)?(--[a-z][a-z0-9-]*)(?: TEXT| \[| INT| FLOAT)", line)
                if m and m.group(1) not in SKIP:
                    opts.append(m.group(1))
            values = HOSTILE[:4] + HOSTILE[6:7] if self.quick else HOSTILE
            for o in opts:
                for v in values:
                    argv = list(base)
                    if o in argv:
                        i = argv.index(o)
                        argv[i + 1] = v
                    else:
                        argv += [o, v]
                    cases.append((cmd, o, v, argv))

        def one(case):
            cmd, o, v, argv = case
            rc, _, err, secs = self.run([self.cli, *cmd, *argv, "--no-store"] if cmd != ("plan",)
                                        else [self.cli, *cmd, *argv])
            return case, rc, err, secs

        with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
            for (cmd, o, v, _), rc, err, secs in ex.map(one, cases):
                what = f"{' '.join(cmd)} {o} {v[:20]!r}"
                lines = [l for l in err.splitlines() if l.strip()]
                if rc is None:
                    self.tally("options", False, what, "hung past 120 s")
                elif rc < 0:
                    self.tally("options", False, what, f"killed by signal {-rc}")
                elif RAW.search(err):
                    self.tally("options", False, what, "raw exception text: " + RAW.search(err).group(0))
                elif rc == 2:
                    named = o in err or (v and v[:20] in err)
                    self.tally("options", named and len(lines) <= 3, what,
                               f"refused without naming {o}: {lines[-1][:120] if lines else ''}")
                    self.counts["options"]["refused"] = self.counts["options"].get("refused", 0) + 1
                elif rc == 0 or (rc == 3 and cmd == ("memory",) and "needs a CUDA device" in err):
                    # (The memory lab records the CUDA allocator: on a machine without a GPU a
                    # point it takes shows the analytic model and ends "failed", exit 3, by design.)
                    self.tally("options", True)
                    self.counts["options"]["accepted"] = self.counts["options"].get("accepted", 0) + 1
                else:
                    self.tally("options", False, what, f"exit {rc}: {lines[-1][:120] if lines else ''}")

    def outputs(self):
        db = self.make_store("outputs.db")
        os.symlink(db, os.path.join(self.tmp, "outputs-link.db"))
        os.link(db, os.path.join(self.tmp, "outputs-hard.db"))
        targets = [db, db + "-wal", os.path.join(self.tmp, "outputs-link.db"), os.path.join(self.tmp, "outputs-hard.db")]
        writers = [
            lambda t: [self.cli, "profile", *BASES[("profile",)], "--db", db, "--trace", t],
            lambda t: [self.cli, "memory", *BASES[("memory",)], "--db", db, "--snapshot", t],
            lambda t: [self.cli, "memory", *BASES[("memory",)], "--db", db, "--oom-snapshot", t],
            lambda t: [self.cli, "runs", "export", "1", "--db", db, "-o", t],
        ]
        if os.path.exists(self.gui):
            writers += [lambda t: [self.gui, "--db", db, "--open", "1", "--screenshot", "steps=" + t],
                        lambda t: [self.gui, "--db", db, "--open", "1", "--report", t]]
        for w in writers:
            for t in targets:
                before = os.path.getsize(db)
                rc, _, err, _ = self.run(w(t), timeout=180)
                held = rc == 2 and self.integrity(db) and os.path.getsize(db) >= before
                self.tally("outputs", held, " ".join(os.path.basename(a) for a in w(t)[:2]) + " → " +
                           os.path.basename(t), f"exit {rc}, store intact: {self.integrity(db)}")

    def kills(self, n):
        db = os.path.join(self.tmp, "kills.db")
        rng = random.Random(1)
        known = 0
        for i in range(n):
            p = subprocess.Popen([self.cli, "bench", "--size", "tiny", "--context-length", "16,32,64,128",
                                  "--warmup", "0", "--steps", "3", "--device", "cpu", "--db", db],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env())
            time.sleep(rng.uniform(0.3, 4.0))
            p.send_signal(signal.SIGKILL)
            p.wait()
            if not os.path.exists(db):
                self.tally("kills", True)  # killed before it opened the store
                continue
            rc, out, _, _ = self.run([self.cli, "runs", "list", "--json", "--db", db])
            runs = json.loads(out) if rc == 0 and out.strip() else []
            held = rc == 0 and self.integrity(db)
            why = f"runs list exit {rc}, integrity {self.integrity(db)}"
            if len(runs) > known:  # its run was created: a cut one must not read as finished
                run = runs[0]
                if run["points"] < 4 and run.get("finished"):
                    held, why = False, f"run {run['id']} of {run['points']}/4 points lists as finished"
                if run.get("planned") != 4:
                    held, why = False, f"run {run['id']} planned {run.get('planned')}, not 4"
            known = len(runs)
            self.tally("kills", held, f"kill {i + 1}", why)

    def writers(self):
        db = os.path.join(self.tmp, "writers.db")
        procs = [subprocess.Popen([self.cli, "bench", *BASES[("bench",)], "--context-length", "16,32", "--db", db],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env())
                 for _ in range(4)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            err = err.decode("utf-8", "replace")
            self.tally("writers", p.returncode == 0 and "locked" not in err, "concurrent bench",
                       f"exit {p.returncode}: {err.strip()[-120:]}")
        rc, out, _, _ = self.run([self.cli, "runs", "list", "--json", "--db", db])
        runs = json.loads(out) if rc == 0 else []
        self.tally("writers", len(runs) == 4 and all(r["points"] == 2 for r in runs), "four runs stored",
                   f"{len(runs)} runs")

    def distributed(self):
        ddp = [self.cli, "distributed", "ddp", *BASES[("distributed", "ddp")], "--no-store"]
        cases = [
            ("a killed rank", ddp[:-1] + ["--steps", "5", "--no-store"], {"TRAINSCOPE_TEST_KILL_RANK": "1"}, (3,),
             "rank 1 was killed"),
            ("world above the limit", [self.cli, "distributed", "allreduce", "--backend", "gloo", "--world", "100000"],
             {}, (2,), "--world"),
            ("nccl without a GPU", [self.cli, "distributed", "allreduce", "--backend", "nccl", "--world", "2"], {},
             (2,), "nccl"),
            ("worker: MASTER_ADDR that does not resolve", [self.cli, "worker", "--experiment", "allreduce", "--backend", "gloo"],
             {"MASTER_ADDR": "256.256.256.256", "MASTER_PORT": "29500", "RANK": "0", "WORLD_SIZE": "2"}, (2,),
             "does not resolve"),
            ("worker: WORLD_SIZE 100000", [self.cli, "worker", "--experiment", "allreduce", "--backend", "gloo"],
             {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "RANK": "0", "WORLD_SIZE": "100000"}, (2,),
             "WORLD_SIZE"),
            ("worker: NCCL without a GPU", [self.cli, "worker", "--experiment", "allreduce", "--backend", "nccl"],
             {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "RANK": "0", "WORLD_SIZE": "1",
              "LOCAL_RANK": "0"}, (2,), "GPU"),
        ]
        for what, argv, env, codes, needle in cases:
            rc, _, err, secs = self.run(argv, timeout=150, **env)
            self.tally("distributed", rc in codes and needle.lower() in err.lower() and not RAW.search(err),
                       what, f"exit {rc} after {secs:.0f} s: {err.strip()[-160:]}")
        # A port another program holds and never answers: rank 1 gives up at the rendezvous limit.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(8)
            port = s.getsockname()[1]
            rc, _, err, secs = self.run([self.cli, "worker", "--experiment", "allreduce", "--backend", "gloo"], timeout=60,
                                        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="1", WORLD_SIZE="2",
                                        TRAINSCOPE_RENDEZVOUS_TIMEOUT="3")
        self.tally("distributed", rc == 3 and "rendezvous" in err and secs < 30, "a port held by another program",
                   f"exit {rc} after {secs:.0f} s")
        time.sleep(1)
        left = self.left_behind()
        self.tally("distributed", not left, "no worker left behind", f"pids {left}")

    def limits(self):
        db = self.make_store("limits.db")
        cases = [
            ("output into /dev/full", ["sh", "-c", f"'{self.cli}' bench --size tiny --context-length 16 --warmup 0 "
                                                   f"--steps 1 --device cpu --no-store > /dev/full"], (3,)),
            ("a file-size limit", ["sh", "-c", f"ulimit -f 8; '{self.cli}' bench --size tiny --context-length 16 "
                                               f"--warmup 0 --steps 1 --device cpu --jsonl --no-store "
                                               f"> {self.tmp}/big.jsonl; "
                                               f"'{self.cli}' runs export 1 --db {db} -o {self.tmp}/x.json"], (0, 3)),
            ("a store on a read-only path", [self.cli, "bench", *BASES[("bench",)], "--db", "/proc/trainscope.db"],
             (2, 3)),
            ("a point the host cannot hold", [self.cli, "bench", "--size", "2.7B", "--device", "cpu", "--no-store"],
             (2,)),
            ("an attention cell the host cannot hold", [self.cli, "attention", "--device", "cpu", "--seq", "200000",
                                                        "--head-dim", "16", "--impl", "naive", "--no-store"], (0,)),
            ("an LM the host cannot hold under autocast", [self.cli, "precision", "autocast", "--model", "small",
                                                           "--batch", "65536", "--context-length", "65536",
                                                           "--no-store"], (2,)),
            ("a sweep file that never ends", [self.cli, "bench", "--sweep", "/dev/zero"], (2,)),
        ]
        for what, argv, codes in cases:
            rc, _, err, secs = self.run(argv, timeout=120)
            self.tally("limits", rc in codes and not RAW.search(err) and (rc == 0 or err.strip()),
                       what, f"exit {rc} after {secs:.0f} s: {err.strip()[-160:]}")

    def window(self):
        if not os.path.exists(self.gui):
            return
        db = self.make_store("window.db")
        shot = os.path.join(self.tmp, "shot.png")
        cases = [
            ("--size 99999x99999", ["--size", "99999x99999", "--screenshot", "steps=" + shot], (2,)),
            ("--size 0x0", ["--size", "0x0", "--screenshot", "steps=" + shot], (2,)),
            ("--open 999", ["--db", db, "--open", "999"], (1, 2)),
            ("--compare 1,999", ["--db", db, "--compare", "1,999"], (1, 2)),
            ("--open abc", ["--db", db, "--open", "abc"], (1, 2)),
            ("--preset that is not one", ["--preset", "no-such-preset", "--screenshot", "steps=" + shot], (1, 2)),
            ("--screenshot of a tab that is not one", ["--db", db, "--open", "1", "--screenshot", "nope=" + shot],
             (1, 2)),
            ("--report where nothing can be written", ["--db", db, "--open", "1", "--report", "/proc/r.md"],
             (1, 2, 3)),
            ("a store that is not SQLite", ["--db", "/etc/passwd", "--open", "1", "--screenshot", "steps=" + shot],
             (1, 2, 3)),
        ]
        for what, argv, codes in cases:
            rc, _, err, secs = self.run([self.gui, *argv], timeout=90)
            self.tally("window", rc in codes and not RAW.search(err), what,
                       f"exit {rc} after {secs:.0f} s: {err.strip()[-160:]}")

    def fuzz(self, scale):
        folder = os.path.join(os.path.dirname(self.cli), "..", "tests", "fuzz")
        seeds = os.path.join(ROOT, "tests", "fuzz", "seeds")
        res = os.path.join(ROOT, "resources")
        targets = {"fuzz_sweep": (25000, [f"{res}/sweeps", f"{res}/presets", f"{seeds}/sweep"]),
                   "fuzz_result": (15000, [f"{seeds}/result"]),
                   "fuzz_attention": (20000, [f"{seeds}/attention"]),
                   "fuzz_cli_lists": (50000, [f"{seeds}/cli"]),
                   "fuzz_stored_run": (1000, [f"{seeds}/stored-inputs"])}
        total = 0
        for name, (runs, dirs) in targets.items():
            exe = os.path.join(folder, name)
            if not os.path.exists(exe):
                continue
            n = runs * scale
            rc, out, err, secs = self.run([exe, "--seed", str(random.randrange(1 << 30)), "--runs", str(n), *dirs],
                                          timeout=3600, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
                                          UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1", MALLOC_CHECK_="3")
            total += n if rc == 0 else 0
            self.tally("fuzz", rc == 0, name, f"exit {rc}: {err.strip()[-200:]}")
        self.counts["fuzz"]["inputs"] = total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "default"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer values, kills and fuzz inputs")
    ap.add_argument("--only", help="categories, comma-separated")
    ap.add_argument("--json", help="write the counts and shortfalls here")
    args = ap.parse_args()
    p = Probe(args)
    t0 = time.time()
    order = ["options", "outputs", "kills", "writers", "distributed", "limits", "window", "fuzz"]
    chosen = args.only.split(",") if args.only else order
    try:
        for name in order:
            if name not in chosen:
                continue
            t = time.time()
            if name == "kills":
                p.kills(8 if args.quick else 30)
            elif name == "fuzz":
                p.fuzz(1 if args.quick else 4)
            else:
                getattr(p, name)()
            c = p.counts.get(name, {"cases": 0, "held": 0})
            print(f"{name:12} {c['held']:5} of {c['cases']:5} held  ({time.time() - t:.0f} s)", flush=True)
    finally:
        shutil.rmtree(p.tmp, ignore_errors=True)
    print(f"\n{sum(c['cases'] for c in p.counts.values())} cases in {time.time() - t0:.0f} s; "
          f"{len(p.short)} fell short")
    for cat, what, why in p.short:
        print(f"  {cat}: {what}: {why}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"counts": p.counts, "short": p.short}, f, indent=1)
    return 1 if p.short else 0


if __name__ == "__main__":
    sys.exit(main())
