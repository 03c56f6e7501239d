#!/usr/bin/env bash
# Issue 13's evidence in one run: per size and precision, the train step of the plain PyTorch
# reference (eager, torch.compile default and reduce-overhead with fused AdamW) beside
# TrainScope's eager and compiled (CUDA graphs) modes, side by side at the same settings.
#   scripts/compiled-evidence.sh <trainscope-cli> <outdir>
# Env: SIZES (default "small medium large xl 2.7B"), PRECISIONS (bf16,fp32), CONTEXT (256),
#      ATTENTIONS (naive,sdpa,flash: TrainScope's; the reference runs naive for naive and SDPA for
#      sdpa and flash, since it has no kernels of ours), WARMUP (5), STEPS (20),
#      REFERENCE_MODES ("none default reduce-overhead"), PYTHON (python3).
#      Writes compiled-{pytorch,trainscope}.jsonl and compiled-table.md.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${1:?usage: compiled-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: compiled-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
PY="${PYTHON:-python3}"
ATTENTIONS="${ATTENTIONS:-naive,sdpa,flash}"
common=(--context-length "${CONTEXT:-256}" --mode train --warmup "${WARMUP:-5}" --steps "${STEPS:-20}")
: > "$OUTDIR/compiled-pytorch.jsonl"
: > "$OUTDIR/compiled-trainscope.jsonl"
# The reference's attention for each of ours, once each.
ref_attentions=$(echo "$ATTENTIONS" | tr ',' '\n' | sed 's/^flash$/sdpa/' | sort -u | tr '\n' ' ')
for size in ${SIZES:-small medium large xl 2.7B}; do
    for precision in $(echo "${PRECISIONS:-bf16,fp32}" | tr ',' ' '); do
        echo "-- $size $precision" >&2
        # TrainScope first: torch.compile's compilations are the long part of a call.
        "$CLI" bench --size "$size" --precision "$precision" "${common[@]}" --attention "$ATTENTIONS" \
            --exec eager,compiled --device cuda --jsonl --no-store -q 2>> "$OUTDIR/compiled-trainscope.err" \
            | grep '"type":"result"' >> "$OUTDIR/compiled-trainscope.jsonl" || echo "   trainscope failed" >&2
        for attention in $ref_attentions; do
            for mode in ${REFERENCE_MODES:-none default reduce-overhead}; do
                PYTHONWARNINGS=ignore "$PY" "$ROOT/tests/reference/reference_bench.py" --size "$size" --precision "$precision" \
                    "${common[@]}" --attention "$attention" --compile "$mode" >> "$OUTDIR/compiled-pytorch.jsonl" \
                    2>> "$OUTDIR/compiled-pytorch.err" || echo "   reference ($attention, $mode) failed" >&2
            done
        done
    done
done
"$PY" "$ROOT/tests/reference/compare_compiled.py" "$OUTDIR/compiled-pytorch.jsonl" "$OUTDIR/compiled-trainscope.jsonl" \
    | tee "$OUTDIR/compiled-table.md"
