#!/usr/bin/env python3
"""The Python runner's overhead on the user's model: the same course checkout timed by a plain
loop (the course's method: `timeit.default_timer` around each whole step, with
`torch.cuda.synchronize()`), then by `trainscope-cli bench --code`, one after the other in one
call on the same GPU, per size and precision. Prints a Markdown table for docs/BENCHMARKS.md:
the mean step of each, the runner's overhead in percent, and what starting a point cost
beyond the user's own import and model construction.

    python3 tests/reference/python_source_overhead.py build/gpu/app/trainscope-cli \
        --code examples/course-checkout --sizes small,2.7B --precisions fp32,bf16
"""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import timeit

SIZES = {"small": (768, 3072, 12, 12), "medium": (1024, 4096, 24, 16), "large": (1280, 5120, 36, 20),
         "xl": (2560, 10240, 32, 32), "10B": (4608, 12288, 50, 36), "xl-2025": (1600, 6400, 48, 25),
         "2.7B": (2560, 10240, 32, 32)}


SETUP = """
import sys, time
t0 = time.perf_counter()
import torch
sys.path[:0] = [{code!r}, {code!r} + "/cs336-basics"]
from cs336_basics.model import BasicsTransformerLM
from cs336_basics.optimizer import AdamW
torch.manual_seed(0)
with torch.device("cuda"):
    model = BasicsTransformerLM(10000, {context}, {d}, {layers}, {heads}, {f}, 10000.0)
opt = AdamW(model.parameters(), lr=1e-4)
torch.cuda.synchronize()
print(time.perf_counter() - t0)
"""


def user_setup_s(code, size, context):
    """The user's own cost of a point, in a fresh interpreter: import torch and the model, build
    it on the GPU (CUDA's start included)."""
    d, f, layers, heads = SIZES[size]
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SETUP.format(code=code, context=context, d=d, f=f, layers=layers,
                                                             heads=heads)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1]), time.perf_counter() - start


def plain(code, size, precision, context, batch, warmup, steps):
    """The course's loop, in this process; returns (mean ms, step times)."""
    import torch
    import torch.nn.functional as F
    for p in (code, os.path.join(code, "cs336-basics")):
        if p not in sys.path:
            sys.path.insert(0, p)
    from cs336_basics.model import BasicsTransformerLM
    from cs336_basics.optimizer import AdamW
    d, f, layers, heads = SIZES[size]
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = BasicsTransformerLM(10000, context, d, layers, heads, f, 10000.0)
    opt = AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(10000, (batch, context), device="cuda")
    y = torch.randint(10000, (batch, context), device="cuda")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    ctx = (lambda: torch.autocast("cuda", dtype=dtype)) if dtype else contextlib.nullcontext
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        start = timeit.default_timer()
        model.zero_grad(set_to_none=True)
        with ctx():
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1))
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(1000.0 * (timeit.default_timer() - start))
    del model, opt, x, y, logits, loss
    torch.cuda.empty_cache()
    return statistics.mean(times), times


def runner(cli, code, size, precision, context, batch, warmup, steps):
    """trainscope-cli bench --code; returns (mean ms, CV, seconds from launch to the first step)."""
    args = [cli, "bench", "--code", code, "--size", size, "--precision", precision, "--context-length", str(context),
            "--batch-size", str(batch), "--warmup", str(warmup), "--steps", str(steps), "--device", "cuda",
            "--no-store", "--jsonl"]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first_step_at, result = None, None
    for line in proc.stdout:
        j = json.loads(line)
        if j.get("type") == "step" and first_step_at is None:
            first_step_at = time.perf_counter() - start - j["total_ms"] / 1000.0
        if j.get("type") == "result":
            result = j
    err = proc.stderr.read()
    proc.wait()
    if proc.returncode != 0 or not result or result["status"] != "ok":
        raise SystemExit(f"trainscope-cli failed ({proc.returncode}): {err}\n{result}")
    t = result["total"]
    return t["mean"], t["std"] / t["mean"], first_step_at


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--code", default="examples/course-checkout")
    ap.add_argument("--sizes", default="small,2.7B")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2, help="plain and runner alternate this many times")
    a = ap.parse_args()
    code = os.path.abspath(a.code)
    print("| size | precision | plain loop (ms) | TrainScope runner (ms) | overhead | point start beyond import + build |")
    print("|---|---|---:|---:|---:|---:|")
    for size in a.sizes.split(","):
        for precision in a.precisions.split(","):
            plains, runs, starts = [], [], []
            # The user's import and build, as a process of its own (interpreter start included).
            _, setup = user_setup_s(code, size, a.context)
            for _ in range(a.rounds):  # alternated, so that drift hits both
                p_ms, _ = plain(code, size, precision, a.context, a.batch, a.warmup, a.steps)
                r_ms, cv, first = runner(a.cli, code, size, precision, a.context, a.batch, a.warmup, a.steps)
                plains.append(p_ms)
                runs.append(r_ms)
                starts.append(first - setup)
            p, r = min(plains), min(runs)
            print(f"| {size} | {precision} | {p:.2f} | {r:.2f} | {100.0 * (r - p) / p:+.2f}% | {min(starts):.2f} s |",
                  flush=True)


if __name__ == "__main__":
    main()
