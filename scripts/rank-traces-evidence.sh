#!/usr/bin/env bash
# Every rank's kernels on one timeline, on NCCL: a traced data-parallel run (naive, overlap and
# bucketed on two GPUs), then, from each point's merged trace, per rank: the GPU kernels, the
# NCCL kernels, on which streams, and how much of the NCCL kernels' time ran while a compute
# kernel of the same rank ran (the overlap the lanes show, measured on the kernels themselves).
#   scripts/rank-traces-evidence.sh <trainscope-cli> <outdir>
# Env: SIZE (small), CONTEXT (256), BATCH (4), STRATEGIES (naive,overlap,bucketed), TRACE_STEPS (2)
set -uo pipefail
CLI="${1:?usage: rank-traces-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: rank-traces-evidence.sh <trainscope-cli> <outdir>}"
mkdir -p "$OUTDIR/rank-traces"
SIZE="${SIZE:-small}"; CONTEXT="${CONTEXT:-256}"; BATCH="${BATCH:-4}"
STRATEGIES="${STRATEGIES:-naive,overlap,bucketed}"; TRACE_STEPS="${TRACE_STEPS:-2}"
WORLD=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "${WORLD:-0}" -ge 2 ] || { echo "rank-traces-evidence: needs 2 GPUs"; exit 2; }
echo "-- traced DDP on NCCL: $SIZE ctx=$CONTEXT b=$BATCH/rank, $STRATEGIES, $TRACE_STEPS traced steps"
"$CLI" distributed ddp --backend nccl --world 2 --size "$SIZE" --context-length "$CONTEXT" --batch "$BATCH" \
    --strategy "$STRATEGIES" --warmup 3 --steps "$TRACE_STEPS" --trace-steps "$TRACE_STEPS" \
    --db "$OUTDIR/rank-traces/results.db" > "$OUTDIR/rank-traces/run.txt" 2> "$OUTDIR/rank-traces/run.err" \
    || { echo "   FAILED (rank-traces/run.err)"; tail -5 "$OUTDIR/rank-traces/run.err"; exit 1; }
python3 - "$OUTDIR/rank-traces" <<'PY' | tee "$OUTDIR/rank-traces.md"
import glob, json, os, sys
folder = sys.argv[1]
print("| trace | rank | GPU kernels | NCCL kernels | their streams | NCCL kernel ms | of it while a compute kernel ran |")
print("|---|---|---:|---:|---|---:|---:|")
for path in sorted(glob.glob(os.path.join(folder, "results.traces", "*.json"))):
    events = json.load(open(path))
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    for pid in sorted(procs):
        kernels = [e for e in events if e.get("pid") == pid and e.get("ph") == "X" and e.get("cat") == "kernel"]
        nccl = [e for e in kernels if "nccl" in e["name"].lower()]
        compute = sorted((e["ts"], e["ts"] + e["dur"]) for e in kernels if "nccl" not in e["name"].lower())
        overlap = 0.0
        for k in nccl:
            a, b = k["ts"], k["ts"] + k["dur"]
            cur = a  # the union of compute intervals inside [a, b]
            for s, t in compute:
                if t <= cur or s >= b: continue
                overlap += min(t, b) - max(s, cur); cur = min(t, b)
        streams = sorted({names.get((pid, e.get("tid")), str(e.get("tid"))) for e in nccl})
        total = sum(k["dur"] for k in nccl)
        share = f"{100 * overlap / total:.0f}%" if total else "-"
        print(f"| {os.path.basename(path)} | {procs[pid]} | {len(kernels)} | {len(nccl)} | {', '.join(streams)} | {total / 1000:.2f} | {share} |")
PY
head -3 "$OUTDIR/rank-traces/run.err"; grep -i "trace" "$OUTDIR/rank-traces/run.err" | head -5
