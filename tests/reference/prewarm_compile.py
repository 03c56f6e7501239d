#!/usr/bin/env python3
"""Fill torch.compile's on-disk caches for many reference points at once, before they are timed.

torch.compile spends minutes compiling a large model, mostly on one CPU core; the timed runs
(scripts/compiled-evidence.sh) must run one at a time, but their compilations need not. This
runs `reference_bench.py --prewarm` (one untimed forward and backward) for every point side by
side, as many at once as the GPU memory budget allows, so that each timed run afterwards finds
its graphs in the caches (FX graph and AOTAutograd caches, Triton's kernels) and only traces.

  prewarm_compile.py --sizes medium,xl --precisions bf16 --attentions naive,sdpa \
      --modes default,reduce-overhead [--budget-gb 70] [--jobs 8] [--context-length 256]

Prints one JSON line per point (its status and how long its compilation took).
"""
import argparse
import json
import os
import subprocess
import sys
import time

from reference_bench import PRESETS

HERE = os.path.dirname(os.path.abspath(__file__))


def estimate_gb(size, precision, vocab):
    """What one compilation holds on the GPU: fp32 parameters and gradients (no optimizer state:
    no step runs), bf16 or fp32 activations of batch 4 and the CUDA context; somewhat generous:
    it only paces the pool."""
    d, f, layers, _ = PRESETS[size]
    params = layers * (4 * d * d + 3 * d * f) + 2 * vocab * d
    return (12 if precision == "fp32" else 9) * params / 1e9 + 4


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", required=True)
    p.add_argument("--precisions", default="bf16")
    p.add_argument("--attentions", default="sdpa")
    p.add_argument("--modes", default="default,reduce-overhead")
    p.add_argument("--context-length", default="256")
    p.add_argument("--vocab-size", type=int, default=10000)
    p.add_argument("--budget-gb", type=float, default=70)
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    points = [(s, pr, a, m) for s in args.sizes.split(",") for pr in args.precisions.split(",")
              for a in args.attentions.split(",") for m in args.modes.split(",")]
    for s, *_ in points:
        if s not in PRESETS:
            p.error(f"--sizes: '{s}' is not one of {', '.join(PRESETS)}")
    # Largest first: the big ones take longest, the small ones fill the gaps.
    points.sort(key=lambda pt: -estimate_gb(pt[0], pt[1], args.vocab_size))
    env = dict(os.environ, PYTHONWARNINGS="ignore",
               TORCHINDUCTOR_COMPILE_THREADS=os.environ.get("TORCHINDUCTOR_COMPILE_THREADS", "4"))
    running = []  # (process, point, gb, start)
    pending = list(points)
    failed = 0
    while pending or running:
        used = sum(gb for _, _, gb, _ in running)
        for pt in list(pending):
            gb = estimate_gb(pt[0], pt[1], args.vocab_size)
            if len(running) < args.jobs and (used + gb <= args.budget_gb or not running):
                size, precision, attention, mode = pt
                cmd = [args.python, os.path.join(HERE, "reference_bench.py"), "--prewarm", "--size", size,
                       "--precision", precision, "--attention", attention, "--compile", mode,
                       "--context-length", args.context_length, "--vocab-size", str(args.vocab_size), "--mode", "train"]
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                running.append((proc, pt, gb, time.perf_counter()))
                pending.remove(pt)
                used += gb
        time.sleep(0.5)
        for entry in list(running):
            proc, pt, _, start = entry
            if proc.poll() is None:
                continue
            running.remove(entry)
            out, err = proc.communicate()
            row = {"size": pt[0], "precision": pt[1], "attention": pt[2], "compile": pt[3],
                   "wall_s": round(time.perf_counter() - start, 1), "status": "ok" if proc.returncode == 0 else "failed"}
            if proc.returncode != 0:
                failed += 1
                row["error"] = (err.strip().splitlines() or ["?"])[-1][:300]
            else:
                for line in out.splitlines():
                    try:
                        row["status"] = json.loads(line).get("status", row["status"])
                    except ValueError:
                        pass
            print(json.dumps(row), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
