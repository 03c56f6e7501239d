#!/usr/bin/env bash
# TrainScope vs the plain PyTorch reference (tests/reference/reference_bench.py), side by side
# in one run: for each model size, the reference then TrainScope, at the same settings.
#   scripts/bench-e2e.sh [path/to/trainscope-cli] [outdir]
# Env: SIZES (default "small medium large xl-2025 2.7B"), CONTEXT (256), PRECISIONS (fp32,bf16),
#      MODES (forward,forward-backward,train), WARMUP (5), STEPS (10), ATTENTION (naive)
# Writes $outdir/e2e-{pytorch,trainscope}.jsonl and prints a Markdown comparison table.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${1:-$ROOT/build/default/app/trainscope-cli}"
OUTDIR="${2:-$ROOT/build/e2e}"
mkdir -p "$OUTDIR"
PY="${PYTHON:-python3}"
SIZES="${SIZES:-small medium large xl-2025 2.7B}"
common=(--context-length "${CONTEXT:-256}" --precision "${PRECISIONS:-fp32,bf16}"
        --mode "${MODES:-forward,forward-backward,train}" --warmup "${WARMUP:-5}" --steps "${STEPS:-10}"
        --attention "${ATTENTION:-naive}")
[ -n "${DEVICE:-}" ] && common+=(--device "$DEVICE")
: > "$OUTDIR/e2e-pytorch.jsonl"
: > "$OUTDIR/e2e-trainscope.jsonl"
for size in $SIZES; do
    echo "-- $size" >&2
    PYTHONWARNINGS=ignore "$PY" "$ROOT/tests/reference/reference_bench.py" --size "$size" "${common[@]}" \
        >> "$OUTDIR/e2e-pytorch.jsonl" 2>> "$OUTDIR/e2e-pytorch.err" || echo "reference failed for $size" >&2
    "$CLI" bench --size "$size" "${common[@]}" --jsonl --no-store -q 2>> "$OUTDIR/e2e-trainscope.err" \
        | grep '"type":"result"' >> "$OUTDIR/e2e-trainscope.jsonl" || echo "trainscope failed for $size" >&2
done
"$PY" "$ROOT/tests/reference/compare_e2e.py" "$OUTDIR/e2e-pytorch.jsonl" "$OUTDIR/e2e-trainscope.jsonl" | tee "$OUTDIR/e2e-table.md"
