#!/usr/bin/env python3
"""Sums one rank's GPU kernel time in a Chrome trace (a distributed run's merged trace, or any
torch.profiler / TrainScope Kineto trace) by family: GEMM, attention, NCCL, optimizer and the rest
(element-wise, norms, RoPE, SwiGLU, the loss, copies), and lists the rest's largest kernels. The
leaderboard script (LB_TRACE=1) runs it on each side's trace; `profile import --rank R` gives the
full tables.
Usage: trace-kernel-families.py TRACE.json [--rank R] [--top N]"""
import argparse
import collections
import json


def family(name):
    n = name.lower()
    if "nccl" in n:
        return "NCCL"
    if "nvjet" in n or "gemm" in n or "cutlass" in n or "xmma" in n:
        return "GEMM"
    if "flash" in n or "fmha" in n or "sdpa" in n:
        return "attention"
    if "multi_tensor_apply" in n or "adamw" in n:
        return "optimizer"
    return "rest"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    with open(a.trace) as f:
        doc = json.load(f)
    merged = isinstance(doc, dict) and "ranks" in doc
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kernels = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == "kernel"
               and (not merged or e.get("pid") == a.rank)]
    steps = len({e["name"] for e in events if isinstance(e, dict) and e.get("ph") == "X"
                 and str(e.get("name", "")).startswith("ProfilerStep#") and (not merged or e.get("pid") == a.rank)})
    per = max(steps, 1)
    total = collections.Counter()
    rest, calls = collections.Counter(), collections.Counter()
    for e in kernels:
        fam = family(e["name"])
        total[fam] += e["dur"] / 1000
        if fam == "rest":
            rest[e["name"][:100]] += e["dur"] / 1000
            calls[e["name"][:100]] += 1
    print(f"{a.trace}" + (f", rank {a.rank}" if merged else "") + f": {len(kernels)} kernels, {per} step(s)")
    print("| family | ms per step |\n|---|---:|")
    for fam in ("GEMM", "attention", "rest", "optimizer", "NCCL"):
        print(f"| {fam} | {total[fam] / per:.1f} |")
    print(f"| all (NCCL runs on its own stream, beside compute) | {sum(total.values()) / per:.1f} |")
    print(f"\nThe rest's largest kernels (ms per step, calls per step):")
    for name, ms in rest.most_common(a.top):
        print(f"  {ms / per:8.1f} {calls[name] // per:5d}  {name}")


if __name__ == "__main__":
    main()
