#!/usr/bin/env bash
# The user's attention and DDP classes on the GPU machine, for docs/BENCHMARKS.md and
# docs/YOUR-CODE.md (run by `gpu-window.sh evidence:your-code`): the example checkout's PyTorch
# and Triton FlashAttention and torch.compile of the naive attention beside ours and cuDNN's in
# the course's sweep; on 2 GPUs its DDP classes (with and without its sharded optimizer) beside
# PyTorch's DDP / ZeroRedundancyOptimizer and TrainScope's bucketed strategy; the runner's own
# overhead on a DDP step against the same class in a plain torch.multiprocessing script.
#   scripts/your-code-evidence.sh path/to/trainscope-cli OUTDIR
#   ATTN_SEQ (1024,4096,16384)  ATTN_STEPS (10)  DDP_SIZE (small)  DDP_CONTEXT (512)
#   OVERHEAD_ONLY (1: the overhead rounds alone)  OVERHEAD_SIZE (DDP_SIZE)  ROUNDS (3)
#   OVERHEAD_PRECISIONS (fp32 bf16)  OVERHEAD_STEPS (30)
set -uo pipefail
CLI=${1:?trainscope-cli}; OUT=${2:?output folder}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CODE="$ROOT/examples/course-checkout"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$OUT"
status=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "${OVERHEAD_ONLY:-0}" != 1 ]; then
echo "-- attention: the checkout's PyTorch and Triton FlashAttention, torch.compile, ours and cuDNN (batch 8, d 64 and 128, causal, bf16)"
"$CLI" attention --code "$CODE" --impl naive,sdpa-cudnn,flash,torch-compile --device cuda --batch 8 --heads 1 \
    --seq "${ATTN_SEQ:-1024,4096,16384}" --head-dim 64,128 --dtype bf16 --causal \
    --pass forward,backward,forward-backward --warmup 2 --steps ${ATTN_STEPS:-10} --no-store --markdown \
    | tee "$OUT/your-attention.md" || status=1
fi
if [ "$gpus" -lt 2 ]; then
    echo "one GPU: the DDP part needs 2"
    exit $status
fi
S=${DDP_SIZE:-small}; C=${DDP_CONTEXT:-512}
if [ "${OVERHEAD_ONLY:-0}" != 1 ]; then
echo
echo "-- DDP on 2 GPUs: the checkout's classes and sharded optimizer beside PyTorch's and ours ($S, context $C, batch 4 a rank, bf16)"
"$CLI" distributed ddp --code "$CODE" --backend nccl --world 2 --size "$S" --context-length "$C" --batch 4 \
    --precision bf16 --strategy yours-individual,yours-bucketed,torch-ddp,bucketed --shard both --warmup 3 \
    --steps 10 --no-store --format markdown | tee "$OUT/your-ddp.md" || status=1
fi
echo
echo "-- the runner's overhead: yours-bucketed through TrainScope against a plain torch.multiprocessing script, alternated"
S=${OVERHEAD_SIZE:-$S}
: > "$OUT/your-ddp-overhead.jsonl"
for precision in ${OVERHEAD_PRECISIONS:-fp32 bf16}; do
    for round in $(seq "${ROUNDS:-3}"); do
        "$CLI" distributed ddp --code "$CODE" --backend nccl --world 2 --size "$S" --context-length "$C" --batch 4 \
            --precision "$precision" --strategy yours-bucketed --warmup 5 --steps "${OVERHEAD_STEPS:-30}" --no-store \
            --format json -q | sed "s/^{/{\"who\":\"trainscope\",\"round\":$round,/" \
            | tee -a "$OUT/your-ddp-overhead.jsonl" || status=1
        python3 "$ROOT/scripts/plain-ddp-step.py" --code "$CODE" --strategy bucketed --size "$S" --context-length "$C" \
            --batch 4 --precision "$precision" --warmup 5 --steps "${OVERHEAD_STEPS:-30}" \
            | sed "s/^{/{\"who\":\"plain\",\"round\":$round,/" | tee -a "$OUT/your-ddp-overhead.jsonl" || status=1
    done
done
# Per precision and round the median step (the slowest rank's) of each; then the mean of the
# rounds' medians and their ratio.
python3 - "$OUT/your-ddp-overhead.jsonl" <<'PY' | tee "$OUT/your-ddp-overhead.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("| precision | round | TrainScope median ms | plain median ms | TrainScope mean ± std | plain mean ± std |")
print("|---|---:|---:|---:|---:|---:|")
for prec in dict.fromkeys(r["precision"] for r in rows):
    ours = {r["round"]: r for r in rows if r["who"] == "trainscope" and r["precision"] == prec}
    plain = {r["round"]: r for r in rows if r["who"] == "plain" and r["precision"] == prec}
    for k in sorted(set(ours) & set(plain)):
        o, p = ours[k], plain[k]
        print(f"| {prec} | {k} | {o['step_median_ms']:.2f} | {p['median_ms']:.2f} | "
              f"{o['step_ms']:.2f} ± {o['step_std_ms']:.2f} | {p['step_ms']:.2f} ± {p['std_ms']:.2f} |")
    both = sorted(set(ours) & set(plain))
    if both:
        a = statistics.mean(ours[k]["step_median_ms"] for k in both)
        b = statistics.mean(plain[k]["median_ms"] for k in both)
        print(f"| {prec} | mean of medians | {a:.2f} | {b:.2f} | TrainScope / plain = {a / b:.4f} | |")
PY
exit $status
