#!/usr/bin/env bash
# Why bf16 data-parallel steps vary by ± 10–40 ms where fp32's vary by ± 0.3 ms (issue 31 item 2):
# the same xl step on one GPU and on two (bucketed DDP, NCCL), fp32 and bf16, each run with
# nvidia-smi sampling every GPU's SM clock, power draw, temperature and the reasons the clock was
# held back (the power cap, thermal, hardware slowdown) every 50 ms; then a table of each run's
# step mean ± std beside its clock and power distribution.
#   scripts/ddp-variance-evidence.sh <trainscope-cli> <outdir>
# Env: SIZE (xl-2025), CONTEXT (256), BATCH (4), WARMUP (3), STEPS (15), BUCKET_MB (100).
set -uo pipefail
CLI="${1:?usage: ddp-variance-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: ddp-variance-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
SIZE="${SIZE:-xl-2025}"; CONTEXT="${CONTEXT:-256}"; BATCH="${BATCH:-4}"
WARMUP="${WARMUP:-3}"; STEPS="${STEPS:-15}"; BUCKET_MB="${BUCKET_MB:-100}"
command -v nvidia-smi > /dev/null || { echo "ddp-variance-evidence: needs nvidia-smi (a GPU machine)"; exit 2; }
FIELDS="timestamp,index,clocks.sm,power.draw,power.limit,temperature.gpu"
REASONS="clocks_event_reasons.sw_power_cap,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_slowdown"
nvidia-smi --query-gpu="$FIELDS,$REASONS" --format=csv,noheader > /dev/null 2>&1 \
    || REASONS="clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.sw_thermal_slowdown,clocks_throttle_reasons.hw_slowdown"
status=0
sampled() {  # sampled LABEL command...: runs the command while nvidia-smi samples into clocks-LABEL.csv
    local label="$1"; shift
    nvidia-smi --query-gpu="$FIELDS,$REASONS" --format=csv,noheader,nounits -lms 50 > "$OUTDIR/clocks-$label.csv" 2> /dev/null &
    local smi=$!
    "$@" > "$OUTDIR/run-$label.jsonl" 2> "$OUTDIR/run-$label.err" || { echo "   FAILED: $label (run-$label.err)"; status=1; }
    kill "$smi" 2> /dev/null; wait "$smi" 2> /dev/null
}
for prec in fp32 bf16; do
    echo "-- one GPU, $SIZE $prec"
    sampled "single-$prec" "$CLI" bench --size "$SIZE" --context-length "$CONTEXT" --batch-size "$BATCH" --precision "$prec" \
        --mode train --warmup "$WARMUP" --steps "$STEPS" --device cuda --jsonl --no-store -q
    echo "-- two GPUs, bucketed $BUCKET_MB MiB, $SIZE $prec"
    sampled "ddp-$prec" "$CLI" distributed ddp --backend nccl --world 2 --size "$SIZE" --context-length "$CONTEXT" \
        --batch "$BATCH" --precision "$prec" --strategy bucketed --bucket-mb "$BUCKET_MB" --warmup "$WARMUP" \
        --steps "$STEPS" --format json --no-store
done
python3 - "$OUTDIR" <<'PY' | tee "$OUTDIR/ddp-variance.md"
import csv, json, statistics, sys, os
out = sys.argv[1]
print("| run | step ms (mean ± std) | SM clock MHz per GPU (min / median / max) | power W (median / max) of limit | samples at the power cap | thermal or hardware slowdown |")
print("|---|---:|---|---|---:|---:|")
for label in ("single-fp32", "ddp-fp32", "single-bf16", "ddp-bf16"):
    step = "-"
    try:
        for line in open(os.path.join(out, f"run-{label}.jsonl")):
            try: r = json.loads(line)
            except ValueError: continue
            if "step_ms" in r: step = f"{r['step_ms']:.1f} ± {r['step_std_ms']:.1f}"
            elif r.get("type") == "result": step = f"{r['total']['mean']:.1f} ± {r['total']['std']:.1f}"
    except OSError: pass
    rows = [[c.strip() for c in row] for row in csv.reader(open(os.path.join(out, f"clocks-{label}.csv"))) if len(row) >= 9]
    gpus = sorted({r[1] for r in rows})
    want = gpus if label.startswith("ddp") else gpus[:1]
    clocks, power, limit, cap, slow = [], [], [], 0, 0
    for g in want:
        mine = [r for r in rows if r[1] == g]
        # only the samples while the GPU worked (above 150 W; building the model draws less)
        busy = [r for r in mine if r[2].replace('.', '', 1).isdigit() and float(r[3]) > 150]
        c = [float(r[2]) for r in busy]
        clocks.append(f"{min(c):.0f} / {statistics.median(c):.0f} / {max(c):.0f}" if c else "-")
        power += [float(r[3]) for r in busy]; limit += [float(r[4]) for r in busy]
        cap += sum(r[6] == "Active" for r in busy); slow += sum(r[7] == "Active" or r[8] == "Active" for r in busy)
    n = sum(1 for g in want for r in rows if r[1] == g and r[2].replace('.', '', 1).isdigit() and float(r[3]) > 150)
    pw = f"{statistics.median(power):.0f} / {max(power):.0f} of {max(limit):.0f}" if power else "-"
    print(f"| {label} | {step} | {' · '.join(clocks)} | {pw} | {cap}/{n} | {slow}/{n} |")
PY
exit $status
