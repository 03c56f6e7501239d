#!/usr/bin/env bash
# The attention benchmark on a GPU, through the CLI's `attention` subcommand.
#   scripts/bench-attention.sh <trainscope-cli> <outdir>
# Sections (ATTN_SECTIONS, default "target a b"):
#   target  the issue's performance set-up: bf16, causal, d 64 and 128, seq 4096…16384, batch
#           4 × 1 head and 8 × 16 heads; ours vs LibTorch's flash and cuDNN SDPA backends and naive
#   a, b    the course's presets
# Full tables and CSV go to <outdir>; the last thing printed is a short markdown table:
# ours over SDPA flash (ratio ≥ 1 means ours is at least as fast) and the memory ratio.
set -uo pipefail
CLI="${1:?usage: bench-attention.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: bench-attention.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR"
SECTIONS="${ATTN_SECTIONS:-target a b}"
status=0

run() {  # name, then CLI arguments
    local name="$1"; shift
    echo "-- $name: $CLI attention $*"
    "$CLI" attention "$@" --csv > "$OUTDIR/attention-$name.csv" 2> "$OUTDIR/attention-$name.log"
    local rc=$?
    [ $rc -ne 0 ] && { echo "   exit $rc"; grep -E "failed|error" "$OUTDIR/attention-$name.log" | tail -5; status=1; }
    grep -c ',ok,' "$OUTDIR/attention-$name.csv" | sed 's/^/   cells ok: /'
}

for s in $SECTIONS; do
    case "$s" in
        target)
            run target --impl flash,sdpa-flash,sdpa-cudnn,naive --dtype bf16 --causal --head-dim 64,128 \
                --seq 4096,8192,16384 --batch 4 --heads 1 --pass forward,backward --warmup 3 --steps 10
            run target-b8h16 --impl flash,sdpa-flash,sdpa-cudnn,naive --dtype bf16 --causal --head-dim 64,128 \
                --seq 4096,8192,16384 --batch 8 --heads 16 --pass forward,backward --warmup 3 --steps 10 ;;
        a) run preset-a --preset a --steps "${ATTN_STEPS:-5}" ;;
        b) run preset-b --preset b --steps "${ATTN_STEPS:-5}" ;;
    esac
done

# The short table, from the target CSVs.
python3 - "$OUTDIR" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "attention-target*.csv"))):
    rows += list(csv.DictReader(open(f)))
if not rows:
    sys.exit(0)
cell = {(r["impl"], r["batch"], r["heads"], r["head_dim"], r["seq"]): r for r in rows}
keys = sorted({(int(r["batch"]), int(r["heads"]), int(r["head_dim"]), int(r["seq"])) for r in rows})
def ms(impl, k, col):
    r = cell.get((impl,) + tuple(map(str, k)))
    return float(r[col]) if r and r["status"] == "ok" and r[col] != "" else None  # empty: not measured
def show(x):
    return "-" if x is None else f"{x:.3f}"
def ratio(a, b):
    return "-" if a is None or b is None or a <= 0 else f"{b / a:.2f}"
def st(impl, k):
    r = cell.get((impl,) + tuple(map(str, k)))
    return r["status"] if r else "-"
print("\n| b×h | d | seq | fwd ours ms | fwd flash ms | fwd cudnn ms | fwd flash/ours | bwd ours ms | bwd flash ms | bwd cudnn ms | bwd flash/ours | peak naive/ours |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in keys:
    b, h, d, s = k
    fo, ff, fc = ms("flash", k, "forward_ms"), ms("sdpa-flash", k, "forward_ms"), ms("sdpa-cudnn", k, "forward_ms")
    bo, bf, bc = ms("flash", k, "backward_ms"), ms("sdpa-flash", k, "backward_ms"), ms("sdpa-cudnn", k, "backward_ms")
    po, pn = ms("flash", k, "peak_memory_bytes"), ms("naive", k, "peak_memory_bytes")
    mem = ratio(po, pn) if pn else st("naive", k)
    if fo is None: fo_s = st("flash", k)
    print(f"| {b}×{h} | {d} | {s} | {show(fo) if fo is not None else st('flash', k)} | {show(ff)} | {show(fc)} | {ratio(fo, ff)} | "
          f"{show(bo) if bo is not None else st('flash', k)} | {show(bf)} | {show(bc)} | {ratio(bo, bf)} | {mem} |")
PY
exit $status
