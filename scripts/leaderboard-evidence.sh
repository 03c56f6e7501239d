#!/usr/bin/env bash
# The course's 2026 leaderboard step on two GPUs (docs/DISTRIBUTED.md, "The leaderboard step"):
# one full training step (forward, loss, backward, AdamW) of the 8B model (vocabulary 151,936,
# d_model 4096, d_ff 11,008, 34 layers, 32 heads), bf16, causal, batch 2 (1 per rank) at
# sequence 32,768. TrainScope's fsdp (bf16 weights gathered, fp32 masters, a checkpoint every
# block, its FlashAttention-2 kernels at head dim 128, the fused LM head + loss) beside PyTorch's
# FSDP2 with torch.compile and the same checkpointing (the reference), in one run.
#   scripts/leaderboard-evidence.sh <trainscope-cli> <outdir>
#   LB_CONTEXT (32768), LB_SIZE (8B), LB_STEPS (2), LB_WARMUP (1), LB_STRATEGIES (fsdp,fsdp2),
#   LB_ATTENTION (flash)
#   LB_TRACE=1: also trace the first measured step on every rank (--trace-steps 1), import each
#   point's rank 0 as a profile and compare the first two kernel by kernel
#   (leaderboard-kernels.md), and sum each side's kernels by family (leaderboard-families.md,
#   scripts/trace-kernel-families.py): where each side's step goes.
set -uo pipefail
CLI="${1:?usage: leaderboard-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: leaderboard-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
export TRAINSCOPE_DB="$OUTDIR/leaderboard-evidence.db"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
t=$(date +%s)
ARGS=(distributed ddp --backend nccl --world 2 --size "${LB_SIZE:-8B}" --vocab-size 151936
      --context-length "${LB_CONTEXT:-32768}" --batch 1 --precision bf16 --attention "${LB_ATTENTION:-flash}"
      --strategy "${LB_STRATEGIES:-fsdp,fsdp2}" --param-dtype bf16 --checkpoint 1 --fused-loss --fused-kernels ${LB_KEEP---keep-attention} --compile
      --warmup "${LB_WARMUP:-1}" --steps "${LB_STEPS:-2}" --timeout 480)
[ "${LB_TRACE:-0}" = 1 ] && ARGS+=(--trace-steps 1 --trace-dir "$OUTDIR/traces")
echo "-- ${ARGS[*]}"
"$CLI" "${ARGS[@]}" --format markdown > "$OUTDIR/leaderboard.md" 2> "$OUTDIR/leaderboard.log"
rc=$?
cat "$OUTDIR/leaderboard.md"
grep -E "failed|error|Error" "$OUTDIR/leaderboard.log" | head -5
echo "   exit $rc, $(( $(date +%s) - t )) s"
if [ "${LB_TRACE:-0}" = 1 ]; then
    # Each point's rank 0 as a stored profile, then the two compared kernel by kernel.
    ids=()
    for f in "$OUTDIR"/traces/*.json; do
        [ -f "$f" ] || continue
        echo "-- profile import $f --rank 0 ($(du -h "$f" | cut -f1))"
        python3 "$(dirname "${BASH_SOURCE[0]}")/trace-kernel-families.py" "$f" --rank 0 |
            tee -a "$OUTDIR/leaderboard-families.md"
        "$CLI" profile import "$f" --rank 0 --format markdown >> "$OUTDIR/leaderboard-kernels.md" 2>> "$OUTDIR/leaderboard.log" &&
            ids+=("$("$CLI" runs list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')")
    done
    if [ ${#ids[@]} -ge 2 ]; then
        { echo; echo "## Compared: run ${ids[0]} (A) against run ${ids[1]} (B)"; echo
          "$CLI" profile --compare "${ids[0]},${ids[1]}" --format markdown --top 60; } >> "$OUTDIR/leaderboard-kernels.md"
    fi
    grep -E "^## |^\| (gemm|attention|nccl|elementwise|norm|other|copy|optimizer|reduction)" "$OUTDIR/leaderboard-kernels.md" | head -60
    tar -C "$OUTDIR" -czf "$OUTDIR/leaderboard-traces.tgz" traces 2>/dev/null && rm -rf "$OUTDIR/traces"
fi
[ $rc -eq 0 ] || [ $rc -eq 3 ]
