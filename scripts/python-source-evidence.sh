#!/usr/bin/env bash
# The user's own code on a GPU (the benchmark lab's Python source), for docs/BENCHMARKS.md and
# docs/YOUR-CODE.md: what --check finds in the example checkout; the runner's overhead against
# the course's plain timeit loop (tests/reference/python_source_overhead.py); the checkout beside
# TrainScope's model; the course's torch.compile table of the checkout.
#   scripts/python-source-evidence.sh path/to/trainscope-cli OUTDIR
#   OVERHEAD_SIZES (small,2.7B)  OVERHEAD_PRECISIONS (fp32,bf16)  COMPILE_SIZES (small)
set -uo pipefail
CLI=${1:?trainscope-cli}; OUT=${2:?output folder}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CODE="$ROOT/examples/course-checkout"
mkdir -p "$OUT"
status=0
echo "-- bench --code examples/course-checkout --check"
"$CLI" bench --code "$CODE" --check || status=1
echo
echo "-- the runner against the course's plain loop (same process order alternated, min of 2 rounds)"
python3 "$ROOT/tests/reference/python_source_overhead.py" "$CLI" --code "$CODE" \
    --sizes "${OVERHEAD_SIZES:-small,2.7B}" --precisions "${OVERHEAD_PRECISIONS:-fp32,bf16}" | tee "$OUT/python-overhead.md" \
    || status=1
echo
echo "-- the checkout beside TrainScope's model (train step, context 256, batch 4, 5 + 10 steps)"
"$CLI" bench --code "$CODE" --source trainscope,python --size small,medium --precision fp32,bf16 \
    --context-length 256 --warmup 5 --steps 10 --device cuda --no-store -q --markdown | tee "$OUT/python-vs-trainscope.md" \
    || status=1
echo
echo "-- torch.compile of the checkout (the course's compile table)"
"$CLI" bench --code "$CODE" --size "${COMPILE_SIZES:-small}" --mode forward,train \
    --exec eager,compiled,reduce-overhead --precision fp32 --context-length 256 --warmup 3 --steps 10 --device cuda \
    --no-store -q --markdown | tee "$OUT/python-compile.md" || status=1
exit $status
