#!/usr/bin/env bash
# The compiled step profiled kernel by kernel (See Note [a graph's kernels named by its capture]
# in engine/src/profiler/profiler.h), as a user sees it: `profile --exec compiled` on the GPU
# into a fresh store, its report (and with --range attention), then the stored run opened in the
# window at 1920x1080 on its Kernels, Timeline and Call Tree panes. Needs the window's Qt: run it
# as `scripts/gpu-window.sh evidence:profile-compiled`.
#   scripts/profile-compiled-evidence.sh <trainscope-cli> <outdir>
# Env: SIZE (small), PRECISION (bf16), ATTENTION (flash).
set -uo pipefail
CLI="${1:?usage: profile-compiled-evidence.sh <trainscope-cli> <outdir>}"
OUTDIR="${2:?usage: profile-compiled-evidence.sh <trainscope-cli> <outdir>}"
GUI="$(dirname "$CLI")/trainscope"
mkdir -p "$OUTDIR"
export TRAINSCOPE_DB="$OUTDIR/profile-compiled.db" XDG_CONFIG_HOME="$OUTDIR/config"
ARGS=(--size "${SIZE:-small}" --context-length 256 --precision "${PRECISION:-bf16}"
      --attention "${ATTENTION:-flash}" --exec compiled --warmup 2 --profile-steps 2 --device cuda --top 10)
status=0
"$CLI" profile "${ARGS[@]}" > "$OUTDIR/profile-compiled.txt" 2>&1 || status=1
"$CLI" profile "${ARGS[@]}" --range attention --no-store > "$OUTDIR/profile-compiled-attention.txt" 2>&1 || status=1
grep -h "compiled mode" "$OUTDIR"/profile-compiled*.txt
id=$("$CLI" runs list --json | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['id'])")
for tab in kernels timeline calltree; do
    timeout 120 "$GUI" --no-restore --size 1920x1080 --theme light --open "$id" \
        --screenshot "$tab=$OUTDIR/profile-compiled-$tab.png" > "$OUTDIR/window-$tab.log" 2>&1
    echo "window $tab: exit $?"
done
exit $status
