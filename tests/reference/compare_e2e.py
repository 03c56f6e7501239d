#!/usr/bin/env python3
"""Joins the reference's and TrainScope's JSON lines into one Markdown table: mean step time
(ms) of each, and the ratio TrainScope / PyTorch (≤ 1.00: TrainScope is at least as fast).
Exit status 1 when any ratio is above 1.00 or a point is missing."""
import json
import sys


def load(path, key):
    out = {}
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        out[key(r)] = r
    return out


def ref_key(r):
    return (r["size"], r["context"], r["precision"], r["mode"])


def ts_key(r):
    c = r["config"]
    return (c["model"]["name"], c["model"]["context_length"], c["precision"], c["mode"])


def main(ref_path, ts_path):
    ref, ts = load(ref_path, ref_key), load(ts_path, ts_key)
    print("| size | ctx | precision | mode | PyTorch fwd | ours fwd | PyTorch bwd | ours bwd | PyTorch opt | ours opt | PyTorch step (ms) | TrainScope step (ms) | ratio |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst, bad = 0.0, False
    for k in sorted(ref.keys() | ts.keys(), key=lambda k: (list(ref).index(k) if k in ref else 1e9)):
        r, t = ref.get(k), ts.get(k)
        ok_r = r is not None and r.get("status") == "ok"
        ok_t = t is not None and t.get("status") == "ok"
        cell = lambda d, ph: f"{d[ph]['mean']:.2f}" if d else "-"
        if ok_r and ok_t:
            ratio = t["total"]["mean"] / r["total"]["mean"]
            worst = max(worst, ratio)
            bad |= ratio > 1.0
            rs = f"{ratio:.3f}"
        else:
            bad = True
            rs = "n/a"
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {cell(r if ok_r else None, 'forward')} | {cell(t if ok_t else None, 'forward')} "
              f"| {cell(r if ok_r else None, 'backward')} | {cell(t if ok_t else None, 'backward')} "
              f"| {cell(r if ok_r else None, 'optimizer')} | {cell(t if ok_t else None, 'optimizer')} "
              f"| {cell(r if ok_r else None, 'total') if ok_r else (r or {}).get('status', 'missing')} "
              f"| {cell(t if ok_t else None, 'total') if ok_t else (t or {}).get('status', 'missing')} | {rs} |")
    print(f"\nworst ratio: {worst:.3f} ({'all ≤ 1.00' if not bad else 'some point slower or missing'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
