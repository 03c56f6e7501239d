#!/usr/bin/env python3
"""The distributed lab on NCCL (label gpu; SKIPPED, exit 77, without a GPU): the all-reduce over
every GPU present (busbw = algbw·2(n−1)/n), and DDP, every strategy with and without a sharded
optimizer, training the global batch as one GPU does (the same losses); the communication hidden
behind backward is measured on NCCL (from its own CUDA events) for the overlapping strategies;
the compiled step (CUDA graphs holding the collectives) trains as the eager one does.
With one GPU the world is 1: NCCL's path (its communicators, events and timing) still runs.
Usage: test_distributed_gpu.py path/to/trainscope-cli"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77


def gpus(cli):
    info = subprocess.run([cli, "info"], capture_output=True, text=True, timeout=120).stdout
    return len(re.findall(r"^cuda:\d+", info, re.M))


def run(cli, *args, timeout=600):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p


def main():
    cli = sys.argv[1]
    n = gpus(cli)
    if n == 0:
        print("SKIPPED: no CUDA device")
        return SKIP
    world = min(n, 2)
    os.environ["TRAINSCOPE_DB"] = os.path.join(tempfile.mkdtemp(), "results.db")
    # All-reduce over the GPUs: the rows' arithmetic.
    p = run(cli, "distributed", "allreduce", "--backend", "nccl", "--world", str(world), "--sizes", "1MiB,64MiB",
            "--warmup", "2", "--iters", "5", "--format", "json", "--no-store")
    rows = json.loads(p.stdout)["rows"]
    assert len(rows) == 4, rows
    for r in rows:
        assert r["backend"] == "nccl" and r["world_size"] == world, r
        assert r["time_ms"] > 0, r
        assert abs(r["busbw_gbps"] - r["algbw_gbps"] * 2 * (world - 1) / world) <= 1e-9 * max(1.0, r["algbw_gbps"]), r
        print(f"allreduce {r['size']} {r['dtype']} × {world}: {r['time_ms']:.3f} ms, busbw {r['busbw_gbps']:.1f} GB/s")
    # DDP: the global batch of 4 rows, on one GPU and on `world` GPUs with every strategy.
    common = ["--backend", "nccl", "--size", "small", "--context-length", "128", "--warmup", "1", "--steps", "3",
              "--precision", "fp32", "--format", "json"]
    one = json.loads(run(cli, "distributed", "ddp", "--world", "1", "--batch", "4", "--strategy", "naive", *common,
                         "--no-store").stdout.splitlines()[0])
    reference = one["final_global_loss"]
    p = run(cli, "distributed", "ddp", "--world", str(world), "--batch", str(4 // world),
            "--strategy", "naive,flat,overlap,bucketed", "--shard", "both", *common)
    points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert len(points) == 8, points
    for x in points:
        assert x["status"] == "ok", x
        assert abs(x["final_global_loss"] - reference) <= 2e-4 * abs(reference), (x, reference)
        assert x["memory_peak"] > 0, x
        if world > 1 and x["strategy"] in ("overlap", "bucketed"):
            assert x["hidden_share"] is not None and x["hidden_share"] >= 0, x
        print(f"ddp {x['strategy']:9} sharded={x['sharded']!s:5} × {world}: {x['step_ms']:.2f} ms, "
              f"hidden {x['hidden_share']}, loss {x['final_global_loss']:.5f} (one GPU {reference:.5f})")
    # Each bucket's all-reduce on NCCL, from CUDA events (see Note [per-bucket timing]): a span a
    # bucket and step, in launch order, ready ≤ launched ≤ done, after backward began.
    spans = list(csv.DictReader(io.StringIO(run(cli, "runs", "show", "1", "--format", "csv", "--table",
                                                "buckets").stdout)))
    assert spans, "no bucket rows"
    steps = {}
    for b in spans:
        steps.setdefault((b["point"], b["rank"], b["step"]), []).append(b)
    for key, buckets in steps.items():
        assert [int(b["bucket"]) for b in buckets] == list(range(len(buckets))), (key, buckets)
        for k, b in enumerate(buckets):
            ready, launch, end = float(b["ready_ms"]), float(b["launch_ms"]), float(b["end_ms"])
            assert ready <= launch <= end, b
            assert launch >= float(b["backward_start_ms"]) - 0.05, b
            assert k == 0 or launch >= float(buckets[k - 1]["launch_ms"]), b
    print(f"buckets on NCCL: {len(spans)} spans over {len(steps)} rank-steps")
    # Fully sharded, ours and PyTorch's FSDP2 (the Python runner): the same losses as one GPU;
    # ours times its all-gathers and reduce-scatters on the device (NCCL's timing).
    p = run(cli, "distributed", "ddp", "--world", str(world), "--batch", str(4 // world),
            "--strategy", "fsdp,fsdp2", *common)
    points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert [x["strategy"] for x in points] == ["fsdp", "fsdp2"], points
    for x in points:
        assert x["status"] == "ok", x
        assert abs(x["final_global_loss"] - reference) <= 2e-4 * abs(reference), (x, reference)
        print(f"ddp {x['strategy']:9} × {world}: {x['step_ms']:.2f} ms, peak {x['memory_peak'] / 2**20:.0f} MiB, "
              f"parameters {x['parameter_bytes'] / 2**20:.1f} MiB, loss {x['final_global_loss']:.5f}")
    ours = points[0]
    assert ours["gather_ms"] > 0 and ours["reduce_scatter_ms"] > 0, ours
    assert 0 <= ours["gather_wait_forward_ms"] <= ours["forward_ms"], ours
    # bf16 parameters (fp32 masters) with checkpointing: it trains (bf16 roundings: a looser loss).
    p = run(cli, "distributed", "ddp", "--world", str(world), "--batch", str(4 // world), "--strategy", "fsdp,fsdp2",
            "--param-dtype", "bf16", "--checkpoint", "2", *[a if a != "fp32" else "bf16" for a in common])
    for line in p.stdout.splitlines():
        x = json.loads(line)
        assert x["status"] == "ok" and abs(x["final_global_loss"] - reference) <= 2e-2 * abs(reference), x
        print(f"ddp {x['strategy']:9} bf16 params, checkpoint 2 × {world}: {x['step_ms']:.2f} ms, "
              f"gathered {x['gather_bytes'] / 2**20:.1f} MiB")
    # Compiled (see Note [compiled data-parallel step]): the step and its collectives as CUDA
    # graphs; every step's global loss as the same strategy's eager step on the compiled mode's
    # model (--fused-kernels), the sync inside backward's graph for bucketed (comm wait "—").
    p = run(cli, "distributed", "ddp", "--world", str(world), "--batch", str(4 // world), "--strategy",
            "flat,bucketed,zero1", "--shard", "both", "--exec", "eager,compiled", "--fused-kernels", *common)
    points = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert [(x["strategy"], x["sharded"], x["exec"]) for x in points] == [
        (s, sh, e) for s, shs in (("flat", (False, True)), ("bucketed", (False, True)), ("zero1", (False,)))
        for sh in shs for e in ("eager", "compiled")], points
    stored = json.loads(run(cli, "runs", "show", re.search(r"stored as run (\d+)", p.stderr).group(1),
                            "--format", "json").stdout)
    losses = [[(s["rank"], s["step"], s["global_loss"]) for s in q["steps"]] for q in stored["points"]]
    for k in range(0, len(points), 2):
        eager, compiled = points[k], points[k + 1]
        assert eager["status"] == "ok" and compiled["status"] == "ok", (eager, compiled)
        assert len(losses[k]) == len(losses[k + 1]) == 4 * world, (losses[k], losses[k + 1])
        for (r, i, a), (r2, i2, b) in zip(sorted(losses[k]), sorted(losses[k + 1])):
            assert (r, i) == (r2, i2) and abs(a - b) <= 2e-4 * abs(a), (compiled["strategy"], r, i, a, b)
        if compiled["strategy"] == "bucketed":
            assert compiled["comm_wait_ms"] < 0 and compiled["hidden_share"] < 0, compiled
        else:
            assert compiled["comm_wait_ms"] > 0, compiled
        print(f"ddp {compiled['strategy']:9} sharded={compiled['sharded']!s:5} × {world}: eager "
              f"{eager['step_ms']:.2f} ms, compiled {compiled['step_ms']:.2f} ms, "
              f"loss {compiled['final_global_loss']:.5f}")
    table = run(cli, "runs", "show", re.search(r"stored as run (\d+)", p.stderr).group(1)).stdout
    assert "bucketed compiled" in table and "—" in table, table
    shown = run(cli, "runs", "show", "1")
    assert "DDP strategies" in shown.stdout, shown.stdout
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
