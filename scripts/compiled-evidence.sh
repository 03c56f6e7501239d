#!/usr/bin/env bash
# Issue 13's evidence in one run: per size and precision, the train step of the plain PyTorch
# reference (eager, torch.compile default and reduce-overhead with fused AdamW) beside
# TrainScope's eager and compiled (CUDA graphs) modes, side by side at the same settings.
#   scripts/compiled-evidence.sh <trainscope-cli> <outdir>
# Env: SIZES (default "small medium large xl-2025 2.7B"), PRECISIONS (bf16,fp32), CONTEXT (256),
#      ATTENTIONS (naive,sdpa,flash: TrainScope's; the reference runs naive for naive and SDPA for
#      sdpa and flash, since it has no kernels of ours), WARMUP (5), STEPS (20),
#      REFERENCE_MODES ("none default reduce-overhead"), PYTHON (python3),
#      PREWARM_GB (when set: first compile every torch.compile point side by side within that
#      many GB of GPU memory, tests/reference/prewarm_compile.py, so that the timed runs find
#      their graphs compiled; log in prewarm.jsonl), PREWARM_ONLY=1 (that compilation alone, no
#      timed run: gpu-window.sh runs it beside the build; <trainscope-cli> may then be "-"),
#      REF_TIMEOUT (seconds a reference run may take; default none).
#      Writes compiled-{pytorch,trainscope}.jsonl and compiled-table.md.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${1:?usage: compiled-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: compiled-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
PY="${PYTHON:-python3}"
ATTENTIONS="${ATTENTIONS:-naive,sdpa,flash}"
common=(--context-length "${CONTEXT:-256}" --mode train --warmup "${WARMUP:-5}" --steps "${STEPS:-20}")
# The reference's attention for each of ours, once each.
ref_attentions=$(echo "$ATTENTIONS" | tr ',' '\n' | sed 's/^flash$/sdpa/' | sort -u | tr '\n' ' ')
compile_modes=$(for m in ${REFERENCE_MODES:-none default reduce-overhead}; do [ "$m" != none ] && echo "$m"; done | paste -sd, -)
if [ -n "${PREWARM_GB:-}" ] && [ -n "$compile_modes" ]; then
    echo "-- compiling torch.compile's points side by side (budget ${PREWARM_GB} GB)" >&2
    t0=$(date +%s)
    "$PY" "$ROOT/tests/reference/prewarm_compile.py" --sizes "$(echo ${SIZES:-small medium large xl-2025 2.7B} | tr ' ' ',')" \
        --precisions "${PRECISIONS:-bf16,fp32}" --attentions "$(echo $ref_attentions | tr ' ' ',')" \
        --modes "$compile_modes" --context-length "${CONTEXT:-256}" --budget-gb "$PREWARM_GB" \
        >> "$OUTDIR/prewarm.jsonl" 2>> "$OUTDIR/compiled-pytorch.err" || echo "   a prewarm failed (prewarm.jsonl)" >&2
    echo "   compiled in $(( $(date +%s) - t0 )) s" >&2
fi
[ "${PREWARM_ONLY:-}" = 1 ] && exit 0
: > "$OUTDIR/compiled-pytorch.jsonl"
: > "$OUTDIR/compiled-trainscope.jsonl"
for size in ${SIZES:-small medium large xl-2025 2.7B}; do
    for precision in $(echo "${PRECISIONS:-bf16,fp32}" | tr ',' ' '); do
        echo "-- $size $precision" >&2
        # TrainScope first: torch.compile's compilations are the long part of a call.
        "$CLI" bench --size "$size" --precision "$precision" "${common[@]}" --attention "$ATTENTIONS" \
            --exec eager,compiled --device cuda --jsonl --no-store -q 2>> "$OUTDIR/compiled-trainscope.err" \
            | grep '"type":"result"' >> "$OUTDIR/compiled-trainscope.jsonl" || echo "   trainscope failed" >&2
        for attention in $ref_attentions; do
            for mode in ${REFERENCE_MODES:-none default reduce-overhead}; do
                PYTHONWARNINGS=ignore ${REF_TIMEOUT:+timeout "$REF_TIMEOUT"} "$PY" "$ROOT/tests/reference/reference_bench.py" --size "$size" --precision "$precision" \
                    "${common[@]}" --attention "$attention" --compile "$mode" >> "$OUTDIR/compiled-pytorch.jsonl" \
                    2>> "$OUTDIR/compiled-pytorch.err" || echo "   reference ($attention, $mode) failed" >&2
            done
        done
    done
done
"$PY" "$ROOT/tests/reference/compare_compiled.py" "$OUTDIR/compiled-pytorch.jsonl" "$OUTDIR/compiled-trainscope.jsonl" \
    | tee "$OUTDIR/compiled-table.md"
