#!/usr/bin/env bash
# Activation checkpointing on a GPU (see Note [activation checkpointing]; docs/MEMORY.md), the
# course's 2026 question (b): the xl model (2560 wide, 32 layers) at batch 4 and context 2048,
# a training step with no checkpoints and with a checkpoint every 1, 2, 4, 8 blocks, ⌈√N⌉ and
# nested; the peak memory and the step's time per policy (the benchmark), then the memory lab's
# measured peak beside the analytic model for the one-level policies around the best.
#   scripts/checkpointing-evidence.sh <trainscope-cli> <outdir>
#   CKPT_SIZE (default xl), CKPT_CONTEXT (2048), CKPT_BATCH (4), CKPT_PRECISION (fp32),
#   CKPT_ATTENTION (sdpa), CKPT_POLICIES (none,1,2,4,8,sqrt,nested), CKPT_MEMORY (1,2,4)
set -uo pipefail
CLI="${1:?usage: checkpointing-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: checkpointing-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
export TRAINSCOPE_DB="$OUTDIR/checkpointing-evidence.db"
POINT=(--size "${CKPT_SIZE:-xl}" --context-length "${CKPT_CONTEXT:-2048}" --batch-size "${CKPT_BATCH:-4}"
       --precision "${CKPT_PRECISION:-fp32}" --attention "${CKPT_ATTENTION:-sdpa}" --mode train --device cuda)
status=0
t=$(date +%s)
echo "-- benchmark: ${POINT[*]} --checkpoint ${CKPT_POLICIES:-none,1,2,4,8,sqrt,nested}"
"$CLI" bench "${POINT[@]}" --checkpoint "${CKPT_POLICIES:-none,1,2,4,8,sqrt,nested}" --warmup 1 --steps 3 \
    -q --markdown > "$OUTDIR/checkpointing-bench.md" 2> "$OUTDIR/checkpointing-bench.log"
rc=$?; [ $rc -ne 0 ] && [ $rc -ne 3 ] && { echo "   exit $rc"; tail -5 "$OUTDIR/checkpointing-bench.log"; status=1; }
cat "$OUTDIR/checkpointing-bench.md"
echo "   $(( $(date +%s) - t )) s"
t=$(date +%s)
echo "-- memory lab: measured peak beside the analytic model, --checkpoint ${CKPT_MEMORY:-1,2,4}"
"$CLI" memory "${POINT[@]}" --checkpoint "${CKPT_MEMORY:-1,2,4}" --warmup 1 --record-steps 1 -q --markdown \
    --top 3 > "$OUTDIR/checkpointing-memory.md" 2> "$OUTDIR/checkpointing-memory.log"
rc=$?; [ $rc -ne 0 ] && [ $rc -ne 3 ] && { echo "   exit $rc"; tail -5 "$OUTDIR/checkpointing-memory.log"; status=1; }
sed -n '/Peak memory by point/,$p' "$OUTDIR/checkpointing-memory.md"
echo "   $(( $(date +%s) - t )) s"
exit $status
