#!/usr/bin/env bash
# Fully sharded data parallelism on GPUs (see Note [fully sharded units]; docs/DISTRIBUTED.md),
# the course's 2026 fsdp_accounting: the xl model (2560 wide, 32 layers) over the GPUs present
# (2 by default), a training step under bucketed DDP, our fsdp (bf16 parameters gathered, fp32
# masters) and PyTorch's FSDP2 (fully_shard, the Python runner) at the same settings in one run:
# memory per rank against DDP's, the step's time, and how long forward waited for all-gathers
# (whether the prefetched all-gather finishes in time), then fsdp without prefetch.
#   scripts/fsdp-evidence.sh <trainscope-cli> <outdir>
#   FSDP_SIZE (default xl), FSDP_CONTEXT (512), FSDP_BATCH (4 per rank), FSDP_WORLD (2),
#   FSDP_ATTENTION (sdpa), FSDP_STEPS (5), FSDP_PARAMS (bf16)
set -uo pipefail
CLI="${1:?usage: fsdp-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: fsdp-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
export TRAINSCOPE_DB="$OUTDIR/fsdp-evidence.db"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
POINT=(--backend nccl --world "${FSDP_WORLD:-2}" --size "${FSDP_SIZE:-xl}" --context-length "${FSDP_CONTEXT:-512}"
       --batch "${FSDP_BATCH:-4}" --attention "${FSDP_ATTENTION:-sdpa}" --precision bf16 --warmup 2
       --steps "${FSDP_STEPS:-5}" --timeout 600 -q)
status=0
step() {  # name, then the CLI's arguments after `distributed ddp`
    local name="$1"; shift
    local t; t=$(date +%s)
    echo "-- $name: distributed ddp ${POINT[*]} $*"
    "$CLI" distributed ddp "${POINT[@]}" "$@" --format markdown > "$OUTDIR/fsdp-$name.md" \
        2> "$OUTDIR/fsdp-$name.log"
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 3 ] && { echo "   exit $rc"; tail -5 "$OUTDIR/fsdp-$name.log"; status=1; }
    cat "$OUTDIR/fsdp-$name.md"
    echo "   $(( $(date +%s) - t )) s"
}
step strategies --strategy bucketed,fsdp,fsdp2 --param-dtype "${FSDP_PARAMS:-bf16}"
step prefetch0 --strategy fsdp --param-dtype "${FSDP_PARAMS:-bf16}" --prefetch 0
exit $status
