#!/usr/bin/env bash
# The profiler lab's evidence on a GPU, through the CLI (docs/PROFILING.md):
#   - the course's questions for small and large at context 256, fp32 and bf16: top kernels
#     of a forward pass (one profiled step, so instances are per forward pass), the matmul
#     share of the forward pass against a full training step, softmax against the matmuls;
#   - the profiler's overhead: a step's time unprofiled (bench) against profiled;
#   - the NVTX ranges as Nsight Compute sees them (`ncu --nvtx --nvtx-include`).
#   scripts/profile-evidence.sh <trainscope-cli> <outdir>
# Full Markdown reports go to <outdir>; a short table is printed.
set -uo pipefail
CLI="${1:?usage: profile-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: profile-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
export TRAINSCOPE_DB="$OUTDIR/profile-evidence.db"
status=0
SIZES="${PROFILE_SIZES:-small large}"
PRECS="${PROFILE_PRECISIONS:-fp32 bf16}"

# The share of GEMM kernels in a phase, from the JSON summary's category roll-up.
summary() {  # jsonl file, phase
    python3 - "$1" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
summ = [r for r in rows if "categories" in r]
if not summ: print("-"); sys.exit()
cats = [c for c in summ[-1]["categories"] if c["phase"] == sys.argv[2]]
total = sum(c["time_us"] for c in cats)
gemm = sum(c["time_us"] for c in cats if c["category"] == "GEMM")
print(f"{100*gemm/total:.0f}%" if total else "-")
PY
}
steptime() {  # jsonl file: mean total_ms of the non-warm-up steps
    python3 -c "
import json,sys
s=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
t=[r['total_ms'] for r in s if r.get('type')=='step' and not r['warmup']]
print(f'{sum(t)/len(t):.2f}' if t else '-')" "$1"
}

printf '\n| size | precision | GEMM share fwd | GEMM share train fwd+bwd | step unprofiled (ms) | step profiled (ms) | overhead |\n|---|---|---:|---:|---:|---:|---:|\n' > "$OUTDIR/profile-summary.md"
for size in $SIZES; do
    for prec in $PRECS; do
        base="--size $size --context-length 256 --batch-size 4 --precision $prec --device cuda -q"
        echo "-- $size $prec"
        # One profiled forward step: instances are per forward pass.
        "$CLI" profile $base --mode forward --warmup 5 --profile-steps 1 --top 12 --markdown \
            > "$OUTDIR/profile-$size-$prec-forward.md" 2> "$OUTDIR/profile-$size-$prec-forward.log" || status=1
        "$CLI" profile $base --mode forward --warmup 5 --profile-steps 1 --no-store --jsonl \
            > "$OUTDIR/profile-$size-$prec-forward.jsonl" 2>/dev/null || status=1
        "$CLI" profile $base --mode train --warmup 5 --profile-steps 5 --top 12 --markdown \
            > "$OUTDIR/profile-$size-$prec-train.md" 2> "$OUTDIR/profile-$size-$prec-train.log" || status=1
        "$CLI" profile $base --mode train --warmup 5 --profile-steps 5 --no-store --jsonl \
            > "$OUTDIR/profile-$size-$prec-train.jsonl" 2>/dev/null || status=1
        "$CLI" bench $base --mode train --warmup 5 --steps 10 --no-store --jsonl \
            > "$OUTDIR/bench-$size-$prec-train.jsonl" 2>/dev/null || status=1
        fwd=$(summary "$OUTDIR/profile-$size-$prec-forward.jsonl" forward)
        trf=$(python3 - "$OUTDIR/profile-$size-$prec-train.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
summ = [r for r in rows if "categories" in r]
cats = [c for c in summ[-1]["categories"] if c["phase"] in ("forward", "backward")] if summ else []
total = sum(c["time_us"] for c in cats); gemm = sum(c["time_us"] for c in cats if c["category"] == "GEMM")
print(f"{100*gemm/total:.0f}%" if total else "-")
PY
)
        un=$(steptime "$OUTDIR/bench-$size-$prec-train.jsonl"); pr=$(steptime "$OUTDIR/profile-$size-$prec-train.jsonl")
        ov=$(python3 -c "import sys; a,b=sys.argv[1:]; print(f'{100*(float(b)/float(a)-1):+.0f}%' if a!='-' and b!='-' else '-')" "$un" "$pr")
        echo "| $size | $prec | $fwd | $trf | $un | $pr | $ov |" >> "$OUTDIR/profile-summary.md"
    done
done
cat "$OUTDIR/profile-summary.md"

if command -v ncu > /dev/null; then
    echo; echo "-- NVTX ranges under Nsight Compute (kernels profiled inside each range, tiny model, 1 step)"
    for range in "forward/" "backward/" "optimizer/" "forward/layer.0/attention/softmax/"; do
        n=$(ncu --nvtx --nvtx-include "$range" --metrics gpu__time_duration.sum --csv \
                "$CLI" bench --size tiny --context-length 64 --batch-size 2 --warmup 0 --steps 1 --device cuda \
                --no-store -q 2> "$OUTDIR/ncu.log" | grep -c 'gpu__time_duration')
        echo "   ncu --nvtx --nvtx-include '$range': $n kernels"
    done
fi
exit $status
