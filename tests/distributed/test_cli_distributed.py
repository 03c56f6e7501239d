#!/usr/bin/env python3
"""trainscope-cli distributed allreduce|ddp end to end on Gloo: 2 and 4 local ranks finish with
consistent numbers (busbw = algbw·2(n−1)/n, time = the slowest rank's mean), every format
prints, bad settings exit 2 before any worker starts, a rank killed mid-run is named (exit 3),
Ctrl-C stops every rank (exit 130), and no worker is ever left behind. DDP: every strategy, with
and without a sharded optimizer, on 2 and 4 processes trains the global batch exactly as one
process does (the same losses, step by step); the run is stored and reopens with `runs show`.
Workers are recognised by a marker in their environment (the launcher passes the whole
environment on), so workers of other checkouts on this machine are not counted.
Usage: test_cli_distributed.py path/to/trainscope-cli"""
import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

CLI = None
SMALL = ["--sizes", "64KiB,256KiB", "--warmup", "1", "--iters", "3", "--timeout", "60"]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from marked_processes import marked_env, processes_with  # noqa: E402
from cli_process import CliRunner  # noqa: E402
from runner_server import share_runner_server  # noqa: E402

# See Note [the CLI's fork server]: the commands start from a child of the fork server, without
# LibTorch's start-up; the ranks they launch are real processes (the CLI re-executed). The tests
# about a rank's death start the real binary.
RUNNER = None


class Distributed(unittest.TestCase):
    def setUp(self):
        self.marker = uuid.uuid4().hex
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.assertEqual(processes_with(self.marker), [], "a worker was left running")
        self.tmp.cleanup()

    def run_cli(self, *args, timeout=240, real=False, **extra_env):
        # A store of the test's own: runs are stored by default.
        extra_env.setdefault("TRAINSCOPE_DB", os.path.join(self.tmp.name, "results.db"))
        env = marked_env(self.marker, **extra_env)
        if real:
            return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)
        return RUNNER.run(list(args), env=env, timeout=timeout, text=True)

    def check_rows(self, rows, world, sizes, dtypes):
        self.assertEqual(len(rows), len(sizes) * len(dtypes))
        self.assertEqual(sorted({r["bytes"] for r in rows}), sizes)
        self.assertEqual(sorted({r["dtype"] for r in rows}), sorted(dtypes))
        factor = 2 * (world - 1) / world
        for r in rows:
            self.assertEqual(r["world_size"], world)
            self.assertEqual(r["backend"], "gloo")
            self.assertEqual(len(r["ranks"]), world)
            self.assertGreater(r["busbw_gbps"], 0)
            self.assertAlmostEqual(r["busbw_gbps"], r["algbw_gbps"] * factor, delta=1e-9 * r["busbw_gbps"])
            self.assertAlmostEqual(r["algbw_gbps"], r["bytes"] / (r["time_ms"] * 1e-3) / 1e9,
                                   delta=1e-9 * r["algbw_gbps"])
            self.assertEqual(r["time_ms"], max(x["mean_ms"] for x in r["ranks"]))
            self.assertEqual(r["rank_mean_min_ms"], min(x["mean_ms"] for x in r["ranks"]))
            self.assertLessEqual(r["fastest_ms"], r["rank_mean_min_ms"])
            self.assertGreaterEqual(r["slowest_ms"], r["time_ms"])
            self.assertEqual(r["elements"] * (2 if r["dtype"] == "bf16" else 4), r["bytes"])

    def test_two_and_four_ranks(self):
        for world in (2, 4):
            p = self.run_cli("distributed", "allreduce", "--backend", "gloo", "--world", str(world), *SMALL,
                             "--format", "json", "--link-gbps", "10")
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = json.loads(p.stdout)["rows"]
            self.check_rows(rows, world, [65536, 262144], ["bf16", "fp32"])
            for r in rows:  # bytes·2(n−1)/n at 10 GB/s
                self.assertAlmostEqual(r["ideal_ms"], r["bytes"] * 2 * (world - 1) / world / 10e9 * 1e3)
            self.assertIn(f"{world} ranks ready", p.stderr)
            self.assertIn("[4/4]", p.stderr)

    def test_formats(self):
        args = ["distributed", "allreduce", "--world", "2", "--sizes", "1MB", "--dtypes", "fp32", "--warmup", "0",
                "--iters", "2", "-q"]
        table = self.run_cli(*args)
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("All-reduce, 2 × gloo", table.stdout)
        self.assertIn("busbw GB/s", table.stdout)
        self.assertIn("1 MB", table.stdout)
        self.assertEqual(table.stderr, "")
        md = self.run_cli(*args, "--format", "markdown")
        self.assertEqual(md.returncode, 0, md.stderr)
        self.assertIn("| size", md.stdout)
        csv = self.run_cli(*args, "--format", "csv")
        self.assertEqual(csv.returncode, 0, csv.stderr)
        lines = csv.stdout.strip().splitlines()
        self.assertTrue(lines[0].startswith("bytes,dtype,backend,world_size,iters,time_ms"), lines[0])
        self.assertTrue(lines[1].startswith("1000000,fp32,gloo,2,2,"), lines[1])

    def test_bad_settings_exit_2_before_anything_starts(self):
        cases = [
            (["--world", "0"], "--world: 0 is out of range (at least 1)"),
            (["--world", "two"], "--world: 'two' is not a whole number"),
            (["--backend", "mpi"], "--backend: 'mpi' is not one of gloo, nccl"),
            (["--backend", "nccl", "--world", "64"], "64"),
            (["--sizes", "0"], "--sizes: '0' is not more than 0 bytes"),
            (["--sizes", "1MB,-4MB"], "--sizes: '-4MB' is not a size"),
            (["--sizes", "12XB"], "--sizes: '12XB' is not a size"),
            (["--sizes", "8GiB"], "more than 4 GiB"),
            (["--dtypes", "fp32,fp8"], "--dtypes: 'fp8' is not one of fp32, bf16"),
            (["--iters", "0"], "--steps"),  # the old spelling, named as --steps
            (["--timeout", "0"], "--timeout"),
            (["--format", "xml"], "--format"),
        ]
        for extra, needle in cases:
            p = self.run_cli("distributed", "allreduce", *extra, timeout=60)
            self.assertEqual(p.returncode, 2, (extra, p.stdout, p.stderr))
            self.assertIn(needle, p.stderr, extra)
            self.assertNotIn("ready", p.stderr, extra)
            self.assertEqual(p.stdout, "", extra)
        nccl = self.run_cli("distributed", "allreduce", "--backend", "nccl", "--world", "64", timeout=60)
        self.assertTrue(" present (NCCL runs one rank per GPU)" in nccl.stderr or "without NCCL" in nccl.stderr,
                        nccl.stderr)
        # The worker's own checks: a DDP rank without its spec, and no torchrun environment.
        ddp = self.run_cli("worker", "--experiment", "ddp", timeout=60)
        self.assertEqual(ddp.returncode, 2, ddp.stderr)
        self.assertEqual(json.loads(ddp.stdout)["event"], "error")
        self.assertIn("needs --spec", ddp.stderr)
        # DDP's settings, refused before anything starts.
        for extra, needle in ((["--strategy", "fast"], "not one of naive, flat, overlap, bucketed"),
                              (["--bucket-mb", "0"], "not more than 0 MiB"),
                              (["--bucket-mb", "-5"], "not more than 0 MiB"),
                              (["--bucket-mb", "25 bytes"], "not a bucket size"),
                              (["--shard", "half"], "not one of off, on, both"),
                              (["--size", "huge"], "--size"),
                              (["--world", "0"], "--world"),
                              (["--backend", "nccl", "--world", "64"], "GPU"),
                              # The compiled step captures NCCL's collectives: never on Gloo.
                              (["--exec", "compiled"], "needs the nccl backend"),
                              (["--exec", "eager,reduce-overhead"], "not one of eager, compiled")):
            p = self.run_cli("distributed", "ddp", *extra, timeout=60)
            self.assertEqual(p.returncode, 2, (extra, p.stderr))
            self.assertIn(needle, p.stderr, extra)
            self.assertEqual(p.stdout, "", extra)
        alone = self.run_cli("worker", "--experiment", "allreduce", timeout=60)
        self.assertEqual(alone.returncode, 2, alone.stderr)
        self.assertIn("RANK is not set", json.loads(alone.stdout)["message"])

    def worker(self, timeout=60, **env):
        # A worker as torchrun would start it, outside the launcher.
        base = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": "29599"}
        base.update(env)
        return self.run_cli("worker", "--experiment", "allreduce", "--sizes", "64KiB", "--iters", "1",
                            timeout=timeout, **base)

    def test_torchrun_style_workers_do_not_hang(self):
        # Settings that can never meet are refused at once (exit 2, one line, no backtrace).
        for env, needle in (({"MASTER_ADDR": "256.256.256.256"}, "MASTER_ADDR '256.256.256.256' does not resolve"),
                            ({"WORLD_SIZE": "100000"}, "WORLD_SIZE 100000 is more than the 4096"),
                            ({"MASTER_PORT": "70000"}, "MASTER_PORT 70000 is not a TCP port"),
                            ({"TRAINSCOPE_RENDEZVOUS_TIMEOUT": "soon"}, "TRAINSCOPE_RENDEZVOUS_TIMEOUT='soon'"),
                            ({"RANK": "64", "WORLD_SIZE": "65", "LOCAL_RANK": "64", "--backend": "nccl"},
                             "NCCL runs one rank per GPU")):
            args = dict(env)
            backend = args.pop("--backend", None)
            if backend:
                base = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": "29599", **args}
                p = self.run_cli("worker", "--experiment", "allreduce", "--backend", backend, timeout=60, **base)
            else:
                p = self.worker(**args)
            self.assertEqual(p.returncode, 2, (env, p.stderr))
            self.assertIn(needle, p.stderr, env)
            self.assertNotIn("frame #", p.stdout + p.stderr, env)
            self.assertEqual(json.loads(p.stdout.splitlines()[0])["event"], "error")
        # A port held by a program that accepts and never answers, and a world whose other ranks
        # never come: each ends at the rendezvous's limit, named (exit 3), not hung.
        import socket
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen(8)
        port = str(holder.getsockname()[1])
        try:
            start = time.monotonic()
            p = self.worker(timeout=60, RANK="1", WORLD_SIZE="2", MASTER_PORT=port, TRAINSCOPE_RENDEZVOUS_TIMEOUT="3")
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("did not complete in 3 s", p.stderr)
            self.assertLess(time.monotonic() - start, 30)
        finally:
            holder.close()
        start = time.monotonic()
        p = self.worker(timeout=60, RANK="0", WORLD_SIZE="3", MASTER_PORT="0", TRAINSCOPE_RENDEZVOUS_TIMEOUT="3")
        self.assertEqual(p.returncode, 2, p.stderr)  # port 0: no rendezvous port, refused
        free = socket.socket()
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
        free.close()
        p = self.worker(timeout=60, RANK="0", WORLD_SIZE="3", MASTER_PORT=port, TRAINSCOPE_RENDEZVOUS_TIMEOUT="3")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertTrue("did not complete in 3 s" in p.stderr or "arrived" in p.stderr, p.stderr)
        self.assertLess(time.monotonic() - start, 30)

    def test_a_killed_rank_is_named_and_no_worker_is_left(self):
        p = self.run_cli("distributed", "allreduce", "--world", "3", *SMALL, real=True, TRAINSCOPE_TEST_KILL_RANK="1")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("rank 1 was killed by signal 9 (SIGKILL)", p.stderr)
        # Rows measured before rank 1 went may be printed; never the last one.
        self.assertNotIn("[4/4]", p.stderr)
        self.assertNotIn("256 KiB  bf16", p.stdout)

    def test_ddp_matches_one_process_on_the_global_batch(self):
        tiny = ["--size", "tiny", "--context-length", "32", "--warmup", "0", "--steps", "3", "--timeout", "120",
                "--format", "json"]
        one = self.run_cli("distributed", "ddp", "--world", "1", "--batch", "4", "--strategy", "naive", *tiny,
                           "--no-store")
        self.assertEqual(one.returncode, 0, one.stderr)
        reference = json.loads(one.stdout.splitlines()[0])["final_global_loss"]
        for world, batch in ((2, "2"), (4, "1")):
            p = self.run_cli("distributed", "ddp", "--world", str(world), "--batch", batch,
                             "--strategy", "naive,flat,overlap,bucketed", "--shard", "both", *tiny, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"{world} ranks ready", p.stderr)
            points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
            self.assertEqual(len(points), 8)
            self.assertEqual({(x["strategy"], x["sharded"]) for x in points},
                             {(s, h) for s in ("naive", "flat", "overlap", "bucketed") for h in (False, True)})
            for x in points:
                self.assertEqual((x["status"], x["world_size"], x["steps"]), ("ok", world, 3), x)
                self.assertAlmostEqual(x["final_global_loss"], reference, delta=1e-4 * abs(reference), msg=x)
                # Sharded AdamW keeps this rank's part of the state: about 1/world of the whole.
                whole = 2 * x["parameter_bytes"]
                if x["sharded"]:
                    self.assertLess(x["optimizer_state_bytes"], whole)
                else:
                    self.assertGreaterEqual(x["optimizer_state_bytes"], whole)
        # Stored: one row per rank and step (and one closing row per point), shown again.
        runs = json.loads(self.run_cli("runs", "list", "--json").stdout)
        self.assertEqual([r["kind"] for r in runs], ["distributed", "distributed"])
        # The listing counts points, not rows: 4 strategies × sharded or not, all ok.
        self.assertEqual((runs[0]["points"], runs[0]["ok"]), (8, 8))
        shown = self.run_cli("runs", "show", str(runs[0]["id"]), "--format", "json")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        doc = json.loads(shown.stdout)
        self.assertEqual(len(doc["points"]), 8)
        self.assertIn(len(doc["points"][0]["steps"]), (2 * 3, 4 * 3))
        table = self.run_cli("runs", "show", str(runs[0]["id"]))
        self.assertIn("DDP strategies", table.stdout)
        self.assertIn("Memory per rank", table.stdout)

    def test_zero1_beside_the_courses_sharding(self):
        # Issue item 5c: the course's sharding (all-reduce, step, broadcast) beside ZeRO stage 1
        # (reduce-scatter, step, all-gather): both the one-process loss, and the bytes each sends.
        tiny = ["--size", "tiny", "--context-length", "32", "--warmup", "0", "--steps", "2", "--timeout", "120",
                "--format", "json", "--no-store"]
        one = self.run_cli("distributed", "ddp", "--world", "1", "--batch", "4", "--strategy", "naive", *tiny)
        self.assertEqual(one.returncode, 0, one.stderr)
        reference = json.loads(one.stdout.splitlines()[0])["final_global_loss"]
        p = self.run_cli("distributed", "ddp", "--world", "2", "--batch", "2", "--strategy", "flat,zero1",
                         "--shard", "on", *tiny, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        self.assertEqual([(x["strategy"], x["sharding"]) for x in points],
                         [("flat", "all-reduce + broadcast"), ("zero1", "reduce-scatter + all-gather")])
        for x in points:
            self.assertEqual(x["status"], "ok", x)
            self.assertAlmostEqual(x["final_global_loss"], reference, delta=1e-4 * abs(reference), msg=x)
            self.assertLess(x["optimizer_state_bytes"], 2 * x["parameter_bytes"])
        course, zero1 = points
        grads = course["parameter_bytes"]
        self.assertEqual(course["sent_bytes"], grads + grads // 2)
        self.assertAlmostEqual(zero1["sent_bytes"], grads, delta=8)
        self.assertEqual(zero1["broadcast_bytes"], 0)
        # The table names both schemes and says what each sent.
        csv = self.run_cli("distributed", "ddp", "--world", "2", "--batch", "2", "--strategy", "zero1",
                           *tiny[:-3], "--no-store", "--format", "csv")
        self.assertEqual(csv.returncode, 0, csv.stderr)
        header, row = csv.stdout.splitlines()[:2]
        cells = dict(zip(header.split(","), row.split(",")))
        self.assertEqual(cells["sharded"], "reduce-scatter")
        self.assertEqual(int(cells["sent_bytes"]), zero1["sent_bytes"])

    def test_fsdp_and_pytorchs_fsdp2_match_one_process(self):
        # Fully sharded, ours and PyTorch's (the Python runner, the same model and initialisation):
        # the global batch's losses are one process's; each rank holds about half the weights.
        tiny = ["--size", "tiny", "--context-length", "32", "--warmup", "0", "--steps", "3", "--timeout", "120",
                "--format", "json", "--no-store"]
        one = self.run_cli("distributed", "ddp", "--world", "1", "--batch", "4", "--strategy", "naive", *tiny)
        self.assertEqual(one.returncode, 0, one.stderr)
        reference = json.loads(one.stdout.splitlines()[0])
        for extra in ([], ["--checkpoint", "1", "--prefetch", "0"]):
            p = self.run_cli("distributed", "ddp", "--world", "2", "--batch", "2", "--strategy", "fsdp,fsdp2",
                             "--shard", "both", *extra, *tiny, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
            # --shard both makes no second point of a strategy that shards everything.
            self.assertEqual([x["strategy"] for x in points], ["fsdp", "fsdp2"], extra)
            for x in points:
                self.assertEqual((x["status"], x["steps"]), ("ok", 3), x)
                self.assertAlmostEqual(x["final_global_loss"], reference["final_global_loss"],
                                       delta=1e-4 * abs(reference["final_global_loss"]), msg=(extra, x))
                self.assertLess(x["parameter_bytes"], 0.6 * reference["parameter_bytes"], x)
                self.assertLess(x["optimizer_state_bytes"], 0.6 * reference["optimizer_state_bytes"], x)
            ours = points[0]
            self.assertGreater(ours["gather_bytes"], ours["reduce_scatter_bytes"])
            self.assertGreaterEqual(ours["gather_wait_forward_ms"], 0)
            # Forward with prefetch 2: the block running and the next one's gather in flight;
            # backward: the block and the one before it. Prefetch 0 still gathers ahead in backward.
            self.assertEqual(ours["units_gathered"], 2, ours)
        # The leaderboard's settings at tiny size: ours with the fused loss, the reference compiled;
        # the base's flags go each to its side (no point is refused for the other's flag).
        p = self.run_cli("distributed", "ddp", "--world", "2", "--batch", "1", "--strategy", "fsdp,fsdp2",
                         "--fused-loss", "--compile", "--checkpoint", "1", "--param-dtype", "bf16",
                         "--precision", "bf16", "--vocab-size", "1000", *tiny, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        self.assertEqual([(x["strategy"], x["status"]) for x in points], [("fsdp", "ok"), ("fsdp2", "ok")])
        self.assertAlmostEqual(points[0]["final_global_loss"], points[1]["final_global_loss"], delta=2e-2)
        # The table names the all-gathers against the forward pass.
        table = self.run_cli("distributed", "ddp", "--world", "2", "--batch", "2", "--strategy", "fsdp",
                             *tiny[:-3], "--no-store")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("Fully sharded: the all-gathers against the forward pass", table.stdout)
        for extra, needle in ((["--param-dtype", "fp8"], "--param-dtype: 'fp8' is not one of fp32, bf16"),
                              (["--prefetch", "-1"], "--prefetch"),
                              (["--checkpoint", "0"], "--checkpoint: '0' is not none"),
                              (["--param-dtype", "bf16", "--precision", "fp32"], "bf16 parameters need bf16")):
            p = self.run_cli("distributed", "ddp", "--strategy", "fsdp", *extra, timeout=60)
            self.assertEqual(p.returncode, 2, (extra, p.stderr))
            self.assertIn(needle, p.stderr, extra)
            self.assertNotIn("ranks ready", p.stderr, extra)

    def test_buckets_timed_and_the_bucket_size_model(self):
        # Issue 31 items 5a and 5b on 2 Gloo processes: bucketed DDP at four bucket sizes; each
        # bucket's all-reduce is a row (ordered, inside its step), and the bucket-size model is
        # fitted and set against every point, stored with the run.
        sizes = ["0.25", "1", "10", "1000"]
        p = self.run_cli("distributed", "ddp", "--world", "2", "--size", "tiny", "--context-length", "32",
                         "--batch", "2", "--warmup", "1", "--steps", "2", "--strategy", "bucketed",
                         "--bucket-mb", ",".join(sizes), "--timeout", "120", "--format", "csv",
                         "--table", "buckets", timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        self.assertTrue(rows, p.stdout)
        steps = {}
        for r in rows:
            steps.setdefault((r["point"], r["rank"], r["step"]), []).append(r)
        # Four points × two ranks × three steps (one warm-up), each with all its buckets.
        self.assertEqual(len(steps), 4 * 2 * 3)
        counts = {}
        for (point, rank, step), buckets in steps.items():
            counts.setdefault(point, set()).add(len(buckets))
            self.assertEqual([int(b["bucket"]) for b in buckets], list(range(len(buckets))))
            for k, b in enumerate(buckets):
                launch, end = float(b["launch_ms"]), float(b["end_ms"])
                self.assertLessEqual(float(b["ready_ms"]), launch, b)
                self.assertLessEqual(launch, end, b)
                self.assertGreaterEqual(float(b["ready_ms"]), float(b["backward_start_ms"]) - 0.1, b)
                self.assertGreater(int(b["bytes"]), 0)
                if k:
                    self.assertGreaterEqual(launch, float(buckets[k - 1]["launch_ms"]), b)
        # A bucket count a point (the same every step and rank); smaller buckets, more of them.
        self.assertTrue(all(len(c) == 1 for c in counts.values()), counts)
        per_point = [counts[str(i)].pop() for i in range(1, 5)]
        self.assertGreater(per_point[0], per_point[-1])
        self.assertGreaterEqual(per_point[-1], 2)  # the 1 MiB first bucket, then the rest
        # The model, from the stored run: one configuration, each point predicted and measured.
        rid = str(json.loads(self.run_cli("runs", "list", "--json").stdout)[0]["id"])
        shown = self.run_cli("runs", "show", rid, "--format", "csv", "--table", "bucket-model")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        model = list(csv.DictReader(io.StringIO(shown.stdout)))
        measured = [r for r in model if r["row"] == "measured"]
        self.assertEqual([float(r["bucket_mb"]) for r in measured], [float(x) for x in sizes])
        self.assertEqual([int(r["measured_buckets"]) for r in measured], per_point)
        self.assertEqual([int(r["buckets"]) for r in measured], per_point)  # the model's buckets
        for r in measured:
            self.assertEqual((r["backend"], r["world_size"], r["fit_source"]), ("gloo", "2", "the run's buckets"))
            self.assertGreater(float(r["beta_gbps"]), 0)
            self.assertGreaterEqual(float(r["alpha_ms"]), 0)
            self.assertGreaterEqual(float(r["fit_rms_ms"]), 0)
            self.assertGreaterEqual(float(r["predicted_ms"]), 0)
            self.assertGreaterEqual(float(r["measured_ms"]), 0)
        best = [r for r in model if r["row"] == "optimal"]
        curve = [float(r["predicted_ms"]) for r in model if r["row"] == "curve"]
        self.assertEqual(len(best), 1)
        self.assertGreater(len(curve), 10)
        self.assertAlmostEqual(float(best[0]["predicted_ms"]), min(curve), delta=1e-9)
        text = self.run_cli("runs", "show", rid)
        self.assertIn("Bucket-size model, tiny ctx=32 b=2/rank fp32 × 2 gloo", text.stdout)
        self.assertIn("Buckets (ms from the step's start", text.stdout)
        doc = json.loads(self.run_cli("runs", "show", rid, "--format", "json").stdout)
        self.assertEqual(len(doc["bucket_models"]), 1)
        self.assertEqual(len(doc["bucket_models"][0]["measured"]), 4)
        self.assertIn("buckets", doc["points"][0]["steps"][0])

    def test_allreduce_fitted_as_latency_and_bandwidth(self):
        # Issue 31 item 5a: the all-reduce sweep fitted as t(n) = α + n/β per backend, world and dtype.
        ar = ["distributed", "allreduce", "--world", "2", "--sizes", "64KiB,256KiB,1MiB", "--warmup", "1",
              "--iters", "3", "--timeout", "60", "-q"]
        p = self.run_cli(*ar, "--format", "csv", "--table", "allreduce-fit")
        self.assertEqual(p.returncode, 0, p.stderr)
        fits = list(csv.DictReader(io.StringIO(p.stdout)))
        self.assertEqual([(f["backend"], f["world_size"], f["dtype"], f["points"]) for f in fits],
                         [("gloo", "2", "fp32", "3"), ("gloo", "2", "bf16", "3")])
        for f in fits:
            self.assertGreater(float(f["beta_gbps"]), 0, f)
            self.assertGreaterEqual(float(f["alpha_ms"]), 0, f)
            self.assertGreaterEqual(float(f["fit_rms_ms"]), 0, f)
            self.assertIn(f["fit_through_origin"], ("0", "1"))
        # The text report has the fit under the rows; the stored run gives the same table.
        rid = str(json.loads(self.run_cli("runs", "list", "--json").stdout)[0]["id"])
        shown = self.run_cli("runs", "show", rid, "--format", "csv", "--table", "allreduce-fit")
        self.assertEqual(shown.stdout, p.stdout)
        self.assertIn("All-reduce fitted as t(n) = α + n/β", self.run_cli("runs", "show", rid).stdout)

    def test_a_killed_ddp_rank_is_named(self):
        p = self.run_cli("distributed", "ddp", "--world", "2", "--size", "tiny", "--context-length", "32",
                         "--warmup", "0", "--steps", "5", "--no-store", real=True, TRAINSCOPE_TEST_KILL_RANK="1")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("rank 1 was killed by signal 9 (SIGKILL)", p.stderr)

    def test_a_rank_killed_in_a_kept_world_fails_its_point_and_the_next_starts_again(self):
        # See Note [a world kept across points]: the sweep's two points share one launch; rank 1
        # dies in the first, which fails naming it, and the second starts in a world of its own
        # (where the test's hook kills rank 1 again: it is named there too).
        p = self.run_cli("distributed", "ddp", "--world", "2", "--size", "tiny", "--context-length", "32",
                         "--warmup", "0", "--steps", "3", "--strategy", "naive,flat", "--no-store", "--format", "json",
                         real=True, TRAINSCOPE_TEST_KILL_RANK="1")
        self.assertEqual(p.returncode, 3, p.stderr)
        points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        self.assertEqual([(x["strategy"], x["status"]) for x in points], [("naive", "failed"), ("flat", "failed")])
        for x in points:
            self.assertIn("rank 1 was killed by signal 9 (SIGKILL)", x["error"])
        self.assertEqual(p.stderr.count("2 ranks ready"), 2, p.stderr)

    def test_a_row_that_cannot_be_stored_stops_the_run(self):
        # The run is deleted from the store while its ranks step: the next row fails (a foreign
        # key), every rank is ended, the run says so and exits 3 (not "stored as run N", 0).
        db = os.path.join(self.tmp.name, "results.db")
        proc = subprocess.Popen([CLI, "distributed", "ddp", "--world", "2", "--size", "tiny", "--context-length", "32",
                                 "--batch", "2", "--warmup", "0", "--steps", "100000", "--timeout", "120",
                                 "--strategy", "naive,flat"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=marked_env(self.marker, TRAINSCOPE_DB=db))
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "step 1" in line:
                break
        self.assertTrue(any("step 1" in l for l in seen), "".join(seen))
        rid = str(json.loads(self.run_cli("runs", "list", "--json").stdout)[0]["id"])
        self.assertEqual(self.run_cli("runs", "delete", rid).returncode, 0)
        out, err = proc.communicate(timeout=120)
        err = "".join(seen) + err
        self.assertEqual(proc.returncode, 3, err)
        self.assertIn("could not store point 1 of 2", err)
        self.assertIn("is incomplete", err)
        self.assertNotIn("stored as run", err)
        self.assertNotIn("point 2 of 2", err, "no point starts after a row was lost")

    def test_ctrl_c_stops_every_rank(self):
        proc = subprocess.Popen([CLI, "distributed", "allreduce", "--world", "2", "--sizes", "16MiB",
                                 "--warmup", "0", "--iters", "100000"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=marked_env(self.marker))
        deadline = time.time() + 120
        while time.time() < deadline and len(processes_with(self.marker)) < 3:
            time.sleep(0.1)
        self.assertEqual(len(processes_with(self.marker)), 3, "the CLI and its two workers")
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("stopped", err)


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    RUNNER = CliRunner(CLI)
    share_runner_server(CLI)  # See Note [the runner server]: fsdp2's ranks fork from one server
    unittest.main()
