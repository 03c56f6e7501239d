#!/usr/bin/env bash
# The memory lab's evidence on a GPU, through the CLI (docs/MEMORY.md):
#   - the peak-memory table: small…2.7B at context 128/256/512, fp32 and bf16, forward-only
#     and a full training step, with the analytic model beside the measured peak;
#   - measured against predicted per category, for small and 2.7B;
#   - the OOM frontier of 2.7B bf16 (training step) with naive, LibTorch's fused (SDPA) and
#     our FlashAttention kernels;
#   - the snapshot of a small step loaded by PyTorch's torch.cuda._memory_viz, and each
#     frontier's picture of its failing step (the allocation that failed) loaded there too.
#   scripts/memory-evidence.sh <trainscope-cli> <outdir>
#   MEMORY_PEAKS=0 skips the peak tables (the frontiers only); MEMORY_FRONTIER_ATTENTIONS picks
#   the attentions of the frontiers (default "naive sdpa flash").
set -uo pipefail
CLI="${1:?usage: memory-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: memory-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
export TRAINSCOPE_DB="$OUTDIR/memory-evidence.db"
status=0
t=$(date +%s)
SIZES="${MEMORY_SIZES:-small,medium,large,xl-2025,2.7B}"
if [ "${MEMORY_PEAKS:-1}" != 0 ]; then
# MEMORY_FRONTIER_SIZES: the sizes whose frontier is searched (default "2.7B xl-2025"; empty: none)
echo "-- peak table: $SIZES × 128,256,512 × fp32,bf16 × forward,train"
"$CLI" memory --size "$SIZES" --context-length 128,256,512 --precision fp32,bf16 --mode forward,train \
    --warmup 2 --record-steps 1 --device cuda -q --markdown > "$OUTDIR/memory-peaks.md" 2> "$OUTDIR/memory-peaks.log"
rc=$?; [ $rc -ne 0 ] && [ $rc -ne 3 ] && { echo "   exit $rc"; tail -5 "$OUTDIR/memory-peaks.log"; status=1; }
echo "   $(( $(date +%s) - t )) s"
for size in small 2.7B; do
    "$CLI" memory --size $size --context-length 256 --precision bf16 --mode train --warmup 2 --record-steps 2 \
        --device cuda -q --markdown --top 8 > "$OUTDIR/memory-$size-bf16-train.md" 2>> "$OUTDIR/memory-peaks.log" || status=1
done
"$CLI" memory --size small --context-length 256 --precision fp32 --mode train --warmup 2 --record-steps 2 \
    --device cuda -q --no-store --snapshot "$OUTDIR/small-train.pickle" > /dev/null 2>> "$OUTDIR/memory-peaks.log" || status=1
python3 - "$OUTDIR/small-train.pickle" <<'PY' || status=1
import pickle, sys
from torch.cuda import _memory_viz as mv
snap = pickle.load(open(sys.argv[1], "rb"))
html = mv.trace_plot(snap)
print(f"   memory_viz: snapshot with {len(snap['segments'])} segments, "
      f"{sum(len(t) for t in snap['device_traces'])} trace entries -> trace_plot {len(html)} bytes of HTML; "
      f"segment_plot {len(mv.segment_plot(snap))} bytes")
PY
fi
t=$(date +%s)
# 2.7B has 80-dimensional heads (our kernels run them padded to 128); xl-2025 has 64-dimensional ones.
for size in ${MEMORY_FRONTIER_SIZES-2.7B xl-2025}; do
    for attn in ${MEMORY_FRONTIER_ATTENTIONS:-naive sdpa flash}; do
        "$CLI" memory --size $size --precision bf16 --mode train --attention $attn --frontier context \
            --frontier-max 65536 --warmup 1 --record-steps 1 --device cuda --markdown \
            --oom-snapshot "$OUTDIR/oom-$size-$attn.pickle" \
            > "$OUTDIR/memory-frontier-$size-$attn.md" 2> "$OUTDIR/memory-frontier-$size-$attn.log"
        echo "   frontier $size bf16 train $attn: $(grep -E '^#+ OOM frontier' "$OUTDIR/memory-frontier-$size-$attn.md" | sed 's/^#* //')"
        echo "     $(grep -E '^The allocation that failed' "$OUTDIR/memory-frontier-$size-$attn.md")"
        python3 - "$OUTDIR/oom-$size-$attn.pickle" <<'PY' || status=1
import pickle, sys
from torch.cuda import _memory_viz as mv
snap = pickle.load(open(sys.argv[1], "rb"))
trace = snap["device_traces"][0]
assert trace[-1]["action"] == "oom", trace[-1]
html = mv.trace_plot(snap)
print(f"     memory_viz: the failing step's snapshot, {len(trace)} entries ending in an oom of "
      f"{trace[-1]['size']} bytes; {len(snap['segments'])} segments held "
      f"{sum(b['requested_size'] for s in snap['segments'] for b in s['blocks'] if b['state'] == 'active_allocated')} bytes; "
      f"trace_plot {len(html)} bytes of HTML")
PY
    done
done
echo "   $(( $(date +%s) - t )) s"
exit $status
