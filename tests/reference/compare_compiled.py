#!/usr/bin/env python3
"""Issue 13's table: per size, precision and attention, the train step (ms, mean ± std, and CV) of the plain
PyTorch reference eager, torch.compile default and reduce-overhead (AdamW fused), and
TrainScope eager and compiled, with compiled's ratio to torch.compile's best mode (< 1.00:
TrainScope's compiled mode is faster) and the % of the GPU's dense peak TrainScope reports.
TrainScope's own attention kernels ("flash") are set beside the reference's SDPA, the fastest
attention PyTorch has (it has no kernels of ours).
Usage: compare_compiled.py reference.jsonl trainscope.jsonl"""
import json
import sys


def lines(path):
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            yield json.loads(line)


def main(ref_path, ts_path):
    ref, ts = {}, {}
    for r in lines(ref_path):
        ref[(r["size"], r["precision"], r.get("attention", "naive"), r["impl"])] = r
    for r in lines(ts_path):
        c = r["config"]
        ts[(c["model"]["name"], c["precision"], c.get("attention", "naive"), c.get("exec", "eager"))] = r
    keys = []  # TrainScope's rows, in run order (the reference's alone where TrainScope has none)
    for size, precision, attention, _ in list(ts) or list(ref):
        if (size, precision, attention) not in keys:
            keys.append((size, precision, attention))

    def cell(r):
        if r is None:
            return "-"
        if r.get("status") != "ok":
            return r.get("status", "?")
        t = r["total"]
        cv = t["std"] / t["mean"] if t["mean"] else 0
        return f"{t['mean']:.2f} ± {t['std']:.2f} (CV {100 * cv:.1f}%)"

    print("| size | precision | attention (reference's) | PyTorch eager | torch.compile default | torch.compile reduce-overhead | TrainScope eager | TrainScope compiled | compiled / best torch.compile | % peak (compiled) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    missed = False
    for size, precision, attention in keys:
        ref_attention = "sdpa" if attention == "flash" else attention
        e = ref.get((size, precision, ref_attention, "pytorch"))
        d = ref.get((size, precision, ref_attention, "torch.compile default"))
        o = ref.get((size, precision, ref_attention, "torch.compile reduce-overhead"))
        te = ts.get((size, precision, attention, "eager"))
        tc = ts.get((size, precision, attention, "compiled"))
        measured = {name: x["total"]["mean"] for name, x in (("default", d), ("reduce-overhead", o))
                    if x and x.get("status") == "ok"}
        ratio = "-"
        if measured and tc and tc.get("status") == "ok":
            q = tc["total"]["mean"] / min(measured.values())
            ratio = f"{q:.3f}" + (" **missed**" if q >= 1 else "")
            if len(measured) == 1:
                ratio += f" ({next(iter(measured))} only)"
            missed |= q >= 1
        peak = f"{100 * tc['peak_share']:.0f}%" if tc and tc.get("peak_share") is not None else "-"
        label = attention if attention == ref_attention else f"{attention} ({ref_attention})"
        print(f"| {size} | {precision} | {label} | {cell(e)} | {cell(d)} | {cell(o)} | {cell(te)} | {cell(tc)} | {ratio} | {peak} |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
