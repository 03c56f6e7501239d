#!/usr/bin/env bash
# Issue 12's performance evidence: TrainScope's distributed lab beside the project's own plain
# PyTorch reference (tests/reference/distributed_reference.py), in one run, each experiment the
# reference first, then TrainScope, at the same settings:
#   all-reduce    dist.all_reduce                     | trainscope-cli distributed allreduce
#   ddp           DistributedDataParallel (default     | trainscope-cli distributed ddp
#                 buckets), and ZeroRedundancyOptimizer |   (naive, flat, overlap, bucketed; bucketed sharded)
#   single        the same step on one GPU, no DDP      | trainscope-cli bench --mode train
# then tests/reference/compare_distributed.py prints the Markdown tables and the targets.
#   scripts/distributed-evidence.sh <trainscope-cli> <outdir>
# Env: WORLD (default: the GPUs, `nvidia-smi -L | wc -l`; 2 without one), BACKEND (nccl with GPUs,
#      else gloo), SIZES (1MiB,16MiB,64MiB,256MiB,1GiB; on Gloo to 64MiB; MB = 10^6, MiB = 2^20,
#      as both sides parse them), DTYPES (fp32,bf16), ITERS (20), WARMUP (5), STEPS (10),
#      DDP_SIZE (xl-2025), CONTEXT (256), BATCH (4 per rank), PRECISIONS (fp32,bf16),
#      STRATEGIES (naive,flat,overlap,bucketed), BUCKET_MB (25; a comma list sweeps it),
#      SHARDED_STRATEGIES (bucketed: the strategies also run with ZeRO, and the reference with
#      ZeroRedundancyOptimizer; empty: neither),
#      PARTS ("allreduce ddp single torchrun": a subset runs only those, keeping the others'
#      files, so the evidence can be taken over several calls), PYTHON (python3),
#      EXEC (eager; "eager,compiled" or "compiled": TrainScope's DDP points also, or only, with
#      --exec compiled, the step and its collectives as CUDA graphs), COMPILE_MODES (with EXEC
#      compiled: default,reduce-overhead,max-autotune-no-cudagraphs; the reference's DDP also
#      under torch.compile at each mode, unsharded; empty: none). compare_distributed.py then
#      adds the table "compiled DDP vs PyTorch DDP + torch.compile (best mode)".
# The torchrun part: the same DDP point (bucketed, the first precision) with every rank started
# by `python -m torch.distributed.run --nnodes 1 --nproc-per-node $WORLD` instead of TrainScope's
# launcher, rank 0 gathering the rows through the agent's store and printing the tables
# (docs/DISTRIBUTED.md, "Past one machine"): $outdir/ts-torchrun.{txt,err}.
# The environment reaches every rank as it is (NCCL_NVLS_ENABLE=0 and the like on the GPU machine).
# Writes $outdir/{ref,ts}-{allreduce,ddp,single}.* and distributed-table.md.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${1:?usage: distributed-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: distributed-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
PY="${PYTHON:-python3}"
REF="$ROOT/tests/reference/distributed_reference.py"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${GPUS:-0}" -gt 0 ]; then BACKEND="${BACKEND:-nccl}"; else BACKEND="${BACKEND:-gloo}"; fi
if [ "$BACKEND" = nccl ]; then
    WORLD="${WORLD:-$GPUS}"; DEVICE=cuda; SIZES="${SIZES:-1MiB,16MiB,64MiB,256MiB,1GiB}"
else
    WORLD="${WORLD:-2}"; DEVICE=cpu; SIZES="${SIZES:-1MiB,16MiB,64MiB}"
fi
DTYPES="${DTYPES:-fp32,bf16}"; WARMUP="${WARMUP:-5}"; ITERS="${ITERS:-20}"; STEPS="${STEPS:-10}"
DDP_SIZE="${DDP_SIZE:-xl-2025}"; CONTEXT="${CONTEXT:-256}"; BATCH="${BATCH:-4}"; PRECISIONS="${PRECISIONS:-fp32,bf16}"
STRATEGIES="${STRATEGIES:-naive,flat,overlap,bucketed}"; BUCKET_MB="${BUCKET_MB:-25}"
SHARDED_STRATEGIES="${SHARDED_STRATEGIES-bucketed}"
EXEC="${EXEC:-eager}"
if [[ ",$EXEC," == *",compiled,"* ]]; then
    COMPILE_MODES="${COMPILE_MODES-default,reduce-overhead,max-autotune-no-cudagraphs}"
else
    COMPILE_MODES="${COMPILE_MODES-}"
fi
PARTS="${PARTS:-allreduce ddp single torchrun}"
part() { [[ " $PARTS " == *" $1 "* ]]; }
status=0
fail() { echo "   FAILED: $*" >&2; status=1; }
elapsed() { echo "   $(( $(date +%s) - $1 )) s"; }

{
    echo "date: $(date -u +%FT%TZ)"; echo "backend: $BACKEND  world: $WORLD  gpus: $GPUS"
    echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || cat "$ROOT/.deps/commit" 2>/dev/null)"
    "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else "-")' 2>&1
    env | grep -E '^(NCCL_|TORCH_|NVSHMEM_|CUDA_VISIBLE)' | sort
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null
    nvidia-smi topo -m 2>/dev/null
} > "$OUTDIR/environment.txt"
echo "distributed evidence: $BACKEND × $WORLD, $DDP_SIZE ctx=$CONTEXT b=$BATCH/rank, $PRECISIONS ($PARTS)"

# ---- all-reduce ----
if part allreduce; then
    t=$(date +%s)
    echo "-- all-reduce: torch.distributed ($SIZES × $DTYPES)"
    "$PY" "$REF" allreduce --backend "$BACKEND" --world "$WORLD" --sizes "$SIZES" --dtypes "$DTYPES" \
        --warmup "$WARMUP" --iters "$ITERS" > "$OUTDIR/ref-allreduce.jsonl" 2> "$OUTDIR/ref-allreduce.err" \
        || fail "reference all-reduce (ref-allreduce.err)"
    echo "-- all-reduce: TrainScope"
    "$CLI" distributed allreduce --backend "$BACKEND" --world "$WORLD" --sizes "$SIZES" --dtypes "$DTYPES" \
        --warmup "$WARMUP" --iters "$ITERS" --format json > "$OUTDIR/ts-allreduce.json" 2> "$OUTDIR/ts-allreduce.err" \
        || fail "trainscope all-reduce (ts-allreduce.err)"
    elapsed $t
fi

# ======================================================================================
# TrainScope's DDP — ADAPT HERE when `trainscope-cli distributed ddp` settles. Assumed flags:
#   --backend --world --size --context-length --batch (per rank) --precision (comma list)
#   --strategy (comma list) --bucket-mb (a list) --shard off|on|both --exec (a list) --warmup
#   --steps --format json --no-store
# and on stdout one JSON object per point (per line, or one document with a "rows" list):
# compare_distributed.py's normalize_trainscope_ddp() reads it. Appends stdout to $1.
# ======================================================================================
trainscope_ddp() {
    local out="$1" strategies="$2" shard="$3"
    "$CLI" distributed ddp --backend "$BACKEND" --world "$WORLD" --size "$DDP_SIZE" --context-length "$CONTEXT" \
        --batch "$BATCH" --precision "$PRECISIONS" --strategy "$strategies" --bucket-mb "$BUCKET_MB" \
        --shard "$shard" --exec "$EXEC" --warmup "$WARMUP" --steps "$STEPS" --format json --no-store \
        >> "$out" 2>> "${out%.*}.err"
}

# ---- data-parallel steps ----
if part ddp; then
    t=$(date +%s)
    : > "$OUTDIR/ref-ddp.jsonl"
    : > "$OUTDIR/ref-ddp.err"
    for prec in ${PRECISIONS//,/ }; do
        # ZeroRedundancyOptimizer is the reference of the sharded points: only when they run.
        for zero in "" ${SHARDED_STRATEGIES:+--zero}; do
            echo "-- ddp: PyTorch DDP ${zero:++ ZeroRedundancyOptimizer }$DDP_SIZE $prec"
            "$PY" "$REF" ddp --backend "$BACKEND" --world "$WORLD" --size "$DDP_SIZE" --context-length "$CONTEXT" \
                --batch "$BATCH" --precision "$prec" --warmup "$WARMUP" --steps "$STEPS" $zero \
                >> "$OUTDIR/ref-ddp.jsonl" 2>> "$OUTDIR/ref-ddp.err" || fail "reference ddp $prec $zero (ref-ddp.err)"
        done
        for mode in ${COMPILE_MODES//,/ }; do
            echo "-- ddp: PyTorch DDP + torch.compile($mode) $DDP_SIZE $prec"
            "$PY" "$REF" ddp --backend "$BACKEND" --world "$WORLD" --size "$DDP_SIZE" --context-length "$CONTEXT" \
                --batch "$BATCH" --precision "$prec" --warmup "$WARMUP" --steps "$STEPS" --compile "$mode" \
                >> "$OUTDIR/ref-ddp.jsonl" 2>> "$OUTDIR/ref-ddp.err" || fail "reference ddp $prec compile $mode (ref-ddp.err)"
        done
    done
    : > "$OUTDIR/ts-ddp.jsonl"
    : > "$OUTDIR/ts-ddp.err"
    echo "-- ddp: TrainScope $STRATEGIES (bucket $BUCKET_MB MB, $EXEC), unsharded"
    trainscope_ddp "$OUTDIR/ts-ddp.jsonl" "$STRATEGIES" off || fail "trainscope ddp (ts-ddp.err)"
    if [ -n "$SHARDED_STRATEGIES" ]; then
        echo "-- ddp: TrainScope $SHARDED_STRATEGIES, optimizer sharded"
        trainscope_ddp "$OUTDIR/ts-ddp.jsonl" "$SHARDED_STRATEGIES" on || fail "trainscope ddp sharded (ts-ddp.err)"
    fi
    elapsed $t
fi

# ---- one device: the overhead's baseline ----
if part single; then
    t=$(date +%s)
    : > "$OUTDIR/ref-single.jsonl"
    for prec in ${PRECISIONS//,/ }; do
        echo "-- one $DEVICE: the reference $DDP_SIZE $prec"
        "$PY" "$REF" single --backend "$BACKEND" --size "$DDP_SIZE" --context-length "$CONTEXT" --batch "$BATCH" \
            --precision "$prec" --warmup "$WARMUP" --steps "$STEPS" \
            >> "$OUTDIR/ref-single.jsonl" 2>> "$OUTDIR/ref-single.err" || fail "reference single $prec (ref-single.err)"
    done
    echo "-- one $DEVICE: TrainScope $DDP_SIZE $PRECISIONS"
    "$CLI" bench --size "$DDP_SIZE" --context-length "$CONTEXT" --batch-size "$BATCH" --precision "$PRECISIONS" \
        --mode train --warmup "$WARMUP" --steps "$STEPS" --device "$DEVICE" --jsonl --no-store -q \
        2> "$OUTDIR/ts-single.err" | grep '"type":"result"' > "$OUTDIR/ts-single.jsonl" || fail "trainscope bench (ts-single.err)"
    elapsed $t
fi

# ---- the same ranks started by torchrun ----
if part torchrun; then
    t=$(date +%s)
    echo "-- torchrun: $WORLD ranks of trainscope-cli distributed ddp, $BACKEND, rank 0 gathers"
    "$PY" -m torch.distributed.run --nnodes 1 --nproc-per-node "$WORLD" --master-addr 127.0.0.1 \
        --master-port "${TORCHRUN_PORT:-29531}" --no-python "$CLI" distributed ddp --backend "$BACKEND" \
        --size "$DDP_SIZE" --context-length "$CONTEXT" --batch "$BATCH" --precision "${PRECISIONS%%,*}" \
        --strategy bucketed --bucket-mb "${BUCKET_MB%%,*}" --warmup "$WARMUP" --steps "$STEPS" \
        --label "torchrun evidence" > "$OUTDIR/ts-torchrun.txt" 2> "$OUTDIR/ts-torchrun.err" \
        || fail "trainscope ddp under torchrun (ts-torchrun.err)"
    grep -q "DDP strategies" "$OUTDIR/ts-torchrun.txt" || fail "no DDP table from rank 0 (ts-torchrun.txt)"
    cat "$OUTDIR/ts-torchrun.txt"
    elapsed $t
fi

cat "$OUTDIR"/ref-allreduce.jsonl "$OUTDIR"/ref-ddp.jsonl "$OUTDIR"/ref-single.jsonl 2>/dev/null > "$OUTDIR/ref.jsonl"
"$PY" "$ROOT/tests/reference/compare_distributed.py" --ref "$OUTDIR/ref.jsonl" --ts-allreduce "$OUTDIR/ts-allreduce.json" \
    --ts-ddp "$OUTDIR/ts-ddp.jsonl" --ts-single "$OUTDIR/ts-single.jsonl" | tee "$OUTDIR/distributed-table.md"
[ "${PIPESTATUS[0]}" -ne 0 ] && echo "(some target missed or not measured: see the list above)"
exit $status
