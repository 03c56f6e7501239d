#!/usr/bin/env bash
# Data parallelism's overhead over one GPU when the one-GPU step itself moves from run to run
# (the eager bf16 step of xl waits on the host: docs/BENCHMARKS.md, "where the eager bf16 DDP
# step's extra time goes"). One-GPU runs and two-GPU runs interleaved, REPS times, so that each
# DDP run has a one-GPU run just before and just after it; each run's median step; each DDP run's
# overhead against the mean of its two neighbours; then, per fill and bucket size, the median of
# those overheads. FILLS are the ways bucketed DDP fills its buckets (See Note [a bucket's
# gradients in one copy] in distributed/src/ddp.cpp): `copy` (the default) and `add` (the old way,
# TRAINSCOPE_DDP_FILL=add), timed by one build in one call.
#   scripts/ddp-overhead-evidence.sh <trainscope-cli> <outdir>
# Env: SIZE (xl-2025), PRECISION (bf16), CONTEXT (256), BATCH (4), BUCKETS (25,100), FILLS
# ("copy add"), REPS (3), WARMUP (3), STEPS (20), EXEC (eager); DEVICE (cuda) and BACKEND (nccl):
# `DEVICE=cpu BACKEND=gloo SIZE=tiny` tries the script where there is no GPU.
set -uo pipefail
CLI="${1:?usage: ddp-overhead-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: ddp-overhead-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
SIZE="${SIZE:-xl-2025}"; PRECISION="${PRECISION:-bf16}"; CONTEXT="${CONTEXT:-256}"; BATCH="${BATCH:-4}"
BUCKETS="${BUCKETS:-25,100}"; FILLS="${FILLS:-copy add}"; REPS="${REPS:-3}"
WARMUP="${WARMUP:-3}"; STEPS="${STEPS:-20}"; EXEC="${EXEC:-eager}"
DEVICE="${DEVICE:-cuda}"; BACKEND="${BACKEND:-nccl}"
status=0
n=0
single() {
    n=$((n + 1))
    echo "-- $n: one GPU"
    "$CLI" bench --size "$SIZE" --context-length "$CONTEXT" --batch-size "$BATCH" --precision "$PRECISION" \
        --mode train --exec "$EXEC" --warmup "$WARMUP" --steps "$STEPS" --device "$DEVICE" --jsonl --no-store -q \
        > "$OUTDIR/$(printf %02d $n)-single.jsonl" 2> "$OUTDIR/$(printf %02d $n)-single.err" \
        || { echo "   FAILED (see $(printf %02d $n)-single.err)"; status=1; }
}
ddp() {  # ddp FILL
    n=$((n + 1))
    echo "-- $n: two GPUs, bucketed $BUCKETS MiB, fill $1"
    TRAINSCOPE_DDP_FILL="$1" "$CLI" distributed ddp --backend "$BACKEND" --world 2 --size "$SIZE" \
        --context-length "$CONTEXT" --batch "$BATCH" --precision "$PRECISION" --strategy bucketed \
        --bucket-mb "$BUCKETS" --exec "$EXEC" --warmup "$WARMUP" --steps "$STEPS" --format json --no-store \
        > "$OUTDIR/$(printf %02d $n)-ddp-$1.json" 2> "$OUTDIR/$(printf %02d $n)-ddp-$1.err" \
        || { echo "   FAILED (see $(printf %02d $n)-ddp-$1.err)"; status=1; }
}
single
for _ in $(seq "$REPS"); do
    for fill in $FILLS; do
        ddp "$fill"
        single
    done
done
python3 - "$OUTDIR" <<'PY' | tee "$OUTDIR/ddp-overhead.md"
import glob, json, os, statistics, sys
out = sys.argv[1]
runs = []  # (order, kind, fill, {bucket: median}) ; kind single|ddp
for path in sorted(glob.glob(os.path.join(out, "[0-9][0-9]-*"))):
    name = os.path.basename(path)
    if name.endswith(".err"):
        continue
    order = int(name[:2])
    if "-single" in name:
        steps = []
        for line in open(path):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if "total_ms" in r and not r.get("warmup"):
                steps.append(r["total_ms"])
        runs.append((order, "single", "", {"": statistics.median(steps)} if steps else {}))
    else:
        fill = name.split("-ddp-")[1].split(".")[0]
        meds = {}
        for line in open(path):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("type") == "ddp" and r.get("status") == "ok":
                meds[f"{r['bucket_mb']:g}"] = r["step_median_ms"]
        runs.append((order, "ddp", fill, meds))
runs.sort()
print("| order | run | median step ms | overhead over its neighbours' one GPU |")
print("|---:|---|---|---|")
overheads = {}
for k, (order, kind, fill, meds) in enumerate(runs):
    if kind == "single":
        print(f"| {order} | one GPU | {meds.get('', float('nan')):.1f} | |")
        continue
    near = [runs[j][3].get("") for j in (k - 1, k + 1) if 0 <= j < len(runs) and runs[j][1] == "single"]
    near = [x for x in near if x]
    base = sum(near) / len(near) if near else None
    cells, over = [], []
    for b, m in meds.items():
        cells.append(f"{b} MiB {m:.1f}")
        if base:
            o = 100 * (m / base - 1)
            over.append(f"{b} MiB {o:+.1f}%")
            overheads.setdefault((fill, b), []).append(o)
    print(f"| {order} | two GPUs, fill {fill} | {' · '.join(cells)} | {' · '.join(over)} (one GPU {base:.1f}) |" if base
          else f"| {order} | two GPUs, fill {fill} | {' · '.join(cells)} | — |")
print()
print("| fill | bucket | overheads | median |")
print("|---|---:|---|---:|")
for (fill, b), v in sorted(overheads.items()):
    print(f"| {fill} | {b} MiB | {', '.join(f'{x:+.1f}%' for x in v)} | **{statistics.median(v):+.1f}%** |")
PY
exit $status
