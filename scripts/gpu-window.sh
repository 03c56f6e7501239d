#!/usr/bin/env bash
# The whole app, window included, on a GPU machine that has PyTorch 2.11 but no Qt and no
# network, in one call: unpacks the Qt packages carried in .deps/window (made here by
# `scripts/gpu-deps.sh --window`; carry `.deps`), builds everything against that machine's
# LibTorch, runs the window's tests offscreen (the `ui` label, the GPU window test among them)
# and leaves their log and the GPU screenshots in $OUT (or build/gpu-out).
#   Arguments: `tests` (the window's tests), `live` (scripted sessions of the real app on the
#   GPU: presets run, screenshots and a report into $OUT); default both. Only when named:
#   `gpu-tests` (the GPU tests, ctest -L gpu, GPU_TESTS a -R regex) and `compiled`
#   (scripts/compiled-evidence.sh, its SIZES etc.; with PREWARM_GB, torch.compile compiles its
#   points during the build), `python-source` (scripts/python-source-evidence.sh: the user's
#   code), `evidence:NAME` (scripts/NAME-evidence.sh <trainscope-cli> <outdir>), in the same
#   build; `build`: the build alone.
#   The build is kept, so a second call on a warm machine only rebuilds what changed.
#   GPU_ARCHS  CUDA architectures (default 90);  UI_TESTS  a ctest -R regex (default: all `ui`)
#   LIVE_ONLY  a regex of the live sessions to run (default: all)
set -uo pipefail
ARGS=("$@")
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUTDIR="${OUT:-$ROOT/build/gpu-out}"
mkdir -p "$OUTDIR"
[ -d .deps/window ] || { echo "no .deps/window: run scripts/gpu-deps.sh --window where apt works, and carry .deps"; exit 2; }
say() { printf '\n== %s\n' "$*"; }

# Debian's packages into a prefix of their own: nothing of the machine's is replaced.
QT="$ROOT/.deps/window-root"
DEPS="$ROOT/.deps/root"
mkdir -p "$QT" "$DEPS"
for d in .deps/window/*.deb; do dpkg -x "$d" "$QT"; done
for d in .deps/debs/*.deb; do dpkg -x "$d" "$DEPS"; done
# Debian 12 still ships some libraries under /lib (libdbus, libexpat): both folders.
export LD_LIBRARY_PATH="$QT/usr/lib/x86_64-linux-gnu:$QT/lib/x86_64-linux-gnu:$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export QT_PLUGIN_PATH="$QT/usr/lib/x86_64-linux-gnu/qt6/plugins"
export QT_QPA_PLATFORM=offscreen
# Text needs fonts and a fontconfig file that names them.
cat > "$QT/fonts.conf" <<CONF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>$QT/usr/share/fonts</dir>
  <cachedir>/tmp/trainscope-fontconfig</cachedir>
</fontconfig>
CONF
export FONTCONFIG_FILE="$QT/fonts.conf"
# The commit gpu-deps.sh recorded where the tree was copied from (a copied .git may be stale).
if [ -z "${TRAINSCOPE_GIT_COMMIT:-}" ] && [ -f .deps/commit ]; then
    export TRAINSCOPE_GIT_COMMIT="$(cat .deps/commit)"
fi

# `compiled` with PREWARM_GB: torch.compile's points compile beside the build (each on one CPU
# core, minutes apiece at the larger sizes); the GPU work after the build waits for them.
PREWARM_PID=""
if [[ " ${ARGS[*]:-} " == *" compiled "* ]] && [ -n "${PREWARM_GB:-}" ]; then
    PREWARM_ONLY=1 bash scripts/compiled-evidence.sh - "$OUTDIR" > "$OUTDIR/prewarm.log" 2>&1 &
    PREWARM_PID=$!
fi

say "build with the window ($(nproc) cores)"
BUILD="$ROOT/build/gpu-window"
TORCH="$(bash scripts/find-libtorch.sh --no-install)" || exit 1
t0=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${GPU_ARCHS:-90}" \
    -DCMAKE_PREFIX_PATH="$TORCH;$DEPS/usr;$QT/usr" \
    > "$OUTDIR/window-configure.log" 2>&1 || { tail -40 "$OUTDIR/window-configure.log"; exit 1; }
grep -E "window|Qt 6|QCustomPlot" "$OUTDIR/window-configure.log" | head -5
if ! cmake --build "$BUILD" --parallel "$(nproc)" -- -k 0 > "$OUTDIR/window-build.log" 2>&1; then
    echo "BUILD ERRORS:"; grep -E 'error|FAILED' "$OUTDIR/window-build.log" | head -30
    [ -x "$BUILD/app/trainscope" ] || exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"
if [ -n "$PREWARM_PID" ]; then
    wait "$PREWARM_PID"
    echo "torch.compile's points compiled $(( $(date +%s) - t0 )) s after the build began:"
    cat "$OUTDIR/prewarm.log" "$OUTDIR/prewarm.jsonl" 2>/dev/null
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$BUILD/app/trainscope" --version

want() {  # no arguments: everything
    [ ${#ARGS[@]} -eq 0 ] && return 0
    for a in "${ARGS[@]}"; do [ "$a" = "$1" ] && return 0; done
    return 1
}
named() { for a in "${ARGS[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }  # only when named
status=0
if named gpu-tests; then
    say "GPU tests (ctest -L gpu) in the same build"
    ctest --test-dir "$BUILD" -L gpu ${GPU_TESTS:+-R "$GPU_TESTS"} --output-on-failure --timeout 600 \
        > "$OUTDIR/ctest-gpu.log" 2>&1 || status=1
    grep -E 'Test +#|tests passed|tests failed' "$OUTDIR/ctest-gpu.log" | tail -30
fi
if named compiled-ab; then
    # What each part of the compiled mode adds, TrainScope alone (no reference): eager; graphs
    # alone (TRAINSCOPE_FUSED=0); graphs and fused kernels without the weight copies
    # (TRAINSCOPE_WEIGHT_COPIES=0); all of it. AB_SIZES, AB_ATTENTIONS, AB_PRECISIONS, AB_VARIANTS.
    say "compiled mode, part by part (train step, context 256, 10 steps after 3 warm-up)"
    ab() {  # label, exec mode, then environment assignments
        local label=$1 exec=$2; shift 2
        env "$@" "$BUILD/app/trainscope-cli" bench --size "${AB_SIZES:-small,large}" --precision "${AB_PRECISIONS:-bf16}" \
            --attention "${AB_ATTENTIONS:-naive,flash}" --context-length 256 --mode train --warmup 3 --steps 10 \
            --exec "$exec" --device cuda --no-store -q --csv 2> "$OUTDIR/ab-$label.err" | sed "s/^/$label,/" >> "$OUTDIR/compiled-ab.csv"
    }
    : > "$OUTDIR/compiled-ab.csv"
    variant() { [[ " ${AB_VARIANTS:-eager graphs fused-no-copies compiled} " == *" $1 "* ]]; }
    variant eager && ab eager eager
    variant graphs && ab graphs compiled TRAINSCOPE_FUSED=0
    variant fused-no-copies && ab fused-no-copies compiled TRAINSCOPE_WEIGHT_COPIES=0
    variant compiled && ab compiled compiled
    python3 - "$OUTDIR/compiled-ab.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((r[1:] for r in rows if len(r) > 1 and r[1] == "size"), None)
if head is None:
    sys.exit("no results")
col = {name: i for i, name in enumerate(head)}
print("| variant | size | precision | attention | forward ms | backward ms | optimizer ms | total ms | TFLOP/s |")
print("|---|---|---|---|---:|---:|---:|---:|---:|")
for r in rows:
    label, r = r[0], r[1:]
    if not r or r[0] == "size":
        continue
    get = lambda k: r[col[k]] if k in col and col[k] < len(r) else "?"
    print(f"| {label} | {get('size')} | {get('precision')} | {get('attention')} | {get('forward_ms_mean')} | {get('backward_ms_mean')} | {get('optimizer_ms_mean')} | {get('total_ms_mean')} | {get('tflops')} |")
PY
fi
# `evidence:NAME` runs scripts/NAME-evidence.sh <trainscope-cli> <outdir> (a lab's GPU evidence
# in a file of its own: a new one needs no edit here).
for a in "${ARGS[@]:-}"; do
    [[ "$a" == evidence:* ]] || continue
    name="${a#evidence:}"
    [ -f "scripts/$name-evidence.sh" ] || { echo "no scripts/$name-evidence.sh"; status=1; continue; }
    say "evidence: scripts/$name-evidence.sh"
    bash "scripts/$name-evidence.sh" "$BUILD/app/trainscope-cli" "$OUTDIR" || status=1
done
if named python-source; then
    say "the user's code: overhead against a plain loop, beside TrainScope, torch.compile (scripts/python-source-evidence.sh)"
    bash scripts/python-source-evidence.sh "$BUILD/app/trainscope-cli" "$OUTDIR" || status=1
fi
if named compiled; then
    say "compiled mode beside PyTorch eager and torch.compile (scripts/compiled-evidence.sh)"
    PREWARM_GB="" bash scripts/compiled-evidence.sh "$BUILD/app/trainscope-cli" "$OUTDIR" || status=1
fi
if want tests; then
    say "window tests (ctest -L ui)"
    TRAINSCOPE_SHOTS="$OUTDIR" ctest --test-dir "$BUILD" -L ui ${UI_TESTS:+-R "$UI_TESTS"} --output-on-failure \
        --timeout 900 > "$OUTDIR/ctest-ui.log" 2>&1 || status=1
    grep -E 'Test +#|tests passed|tests failed' "$OUTDIR/ctest-ui.log" | tail -30
    # What the tests measured (ctest keeps every test's output there).
    grep -hE "xl bf16 run|redraw .* ms|replot median|FAIL!" "$BUILD/Testing/Temporary/LastTest.log" | sort -u
fi

if want live; then
    # The real window on the GPU, as a user's scripted session: presets run on cuda, then
    # their panes are grabbed. A fresh store and settings, so that runs compare predictably.
    # Kept in build/gpu-live (the device tool brings back a few files a call: copy more out
    # with a second call); its screenshots are copied to $OUT.
    say "live sessions on the GPU (build/gpu-live; screenshots to \$OUT)"
    LIVE="$ROOT/build/gpu-live"; rm -rf "$LIVE"; mkdir -p "$LIVE"
    export XDG_CONFIG_HOME="$LIVE/config" TRAINSCOPE_DB="$LIVE/results.db"
    session() {  # name, then the window's options
        local name=$1; shift
        # LIVE_ONLY: a regex of the sessions to run (the rest are skipped), to save device time.
        if [ -n "${LIVE_ONLY:-}" ] && ! [[ $name =~ $LIVE_ONLY ]]; then return; fi
        local t=$(date +%s)
        timeout 300 "$BUILD/app/trainscope" --no-restore --size 1600x1000 "$@" > "$LIVE/$name.log" 2>&1
        local rc=$?
        printf '%-24s exit %-3s %4ss  %s\n' "$name" "$rc" "$(( $(date +%s) - t ))" "$(grep -v '^trainscope: wrote\|XDG_RUNTIME' "$LIVE/$name.log" | tail -1)"
    }
    session where-the-time-goes --preset where-the-time-goes --run --screenshot "breakdown=$LIVE/breakdown.png" \
        --screenshot "results=$LIVE/results.png" --report "$LIVE/where-the-time-goes.md"
    session warmup-matters --preset warmup-matters --run --screenshot "steps=$LIVE/warmup-steps.png"
    session fp32-vs-bf16 --preset fp32-vs-bf16 --run --screenshot "speedup=$LIVE/fp32-vs-bf16.png" \
        --screenshot "memory=$LIVE/memory.png"
    session model-size-scaling --preset model-size-scaling --run --screenshot "sweep=$LIVE/size-sweep.png"
    session naive-vs-fused --preset naive-vs-fused-attention --run --theme dark --screenshot "speedup=$LIVE/attention-speedup-dark.png"
    session eager-vs-compiled --preset eager-vs-compiled --run --screenshot "speedup=$LIVE/eager-vs-compiled.png" \
        --screenshot "results=$LIVE/eager-vs-compiled-results.png" --report "$LIVE/eager-vs-compiled.md"
    session attention --experiment attention --config '{"impls":["naive","sdpa","sdpa-flash","flash"],"seq":"1024, 4096","head_dims":"64","batches":"4","heads":"16","dtypes":["bf16"],"causal":["causal"],"passes":["forward","backward"],"warmup":3,"steps":10,"device":"cuda","check":true}' \
        --run --screenshot "attention=$LIVE/attention.png" --report "$LIVE/attention.md"
    # The attention run against the benchmark run before it: two kinds, no comparison.
    session compare-two-kinds --compare last,previous --screenshot "compare=$LIVE/should-not-exist.png"
    # The precision lab's presets (runs 7-10): each on cuda, its pane grabbed.
    session accumulation --preset accumulation-in-low-precision --run --screenshot "accumulation=$LIVE/precision-accumulation.png" \
        --report "$LIVE/precision-accumulation.md"
    session autocast --preset what-autocast-does --run --screenshot "autocast=$LIVE/precision-autocast.png" \
        --screenshot "autocast=$LIVE/precision-autocast.csv"
    session autocast-dark --preset what-autocast-does --run --theme dark --screenshot "autocast=$LIVE/precision-autocast-dark.png"
    session loss-scaling --preset fp16-needs-loss-scaling --run --screenshot "training=$LIVE/precision-training.png" \
        --screenshot "loss-scale=$LIVE/precision-loss-scale.png" --report "$LIVE/precision-loss-scaling.md"
    # One profile (run 12): its kernel table, category roll-up and timeline.
    session profile --preset profile-a-training-step --run --screenshot "kernels=$LIVE/profile-kernels.png" \
        --screenshot "categories=$LIVE/profile-categories.png" --screenshot "timeline=$LIVE/profile-timeline.png" \
        --report "$LIVE/profile.md"
    # The memory lab's preset (run 13): the timeline, categories and peaks grabbed.
    session memory-of-a-step --preset memory-of-a-training-step --run --screenshot "timeline=$LIVE/memory-timeline.png" \
        --screenshot "categories=$LIVE/memory-categories.png" --screenshot "peaks=$LIVE/memory-peaks.png" \
        --report "$LIVE/memory.md"
    # The same step in fp32, then the two compared phase by phase (History's Compare).
    session memory-fp32 --experiment memory --config '{"size":"small","context":512,"batch":4,"precision":"fp32","attention":"naive","mode":"train","warmup":2,"record_steps":2,"frontier":"none","device":"cuda"}' \
        --run --screenshot "peaks=$LIVE/memory-fp32-peaks.png"
    session memory-compare --compare previous,last --screenshot "compare=$LIVE/memory-compare.png" --report "$LIVE/memory-compare.md"
    # The frontier preset ends on the step that ran out of memory: the timeline up to the
    # failed allocation, what was held by category, the frontier pane naming it.
    session memory-failed-step --preset how-long-a-context-fits --run --screenshot "timeline=$LIVE/memory-failed-step.png" \
        --screenshot "categories=$LIVE/memory-failed-categories.png" --screenshot "frontier=$LIVE/memory-failed-frontier.png" \
        --report "$LIVE/memory-failed-step.md"
    # A 2.7B training step profiled and shown (its timeline holds every kernel of the step).
    session profile-2.7B --experiment profile --config '{"size":"2.7B","context":256,"batch":4,"mode":"train","precision":"bf16","attention":"sdpa","warmup":2,"profile_steps":1,"device":"cuda"}' \
        --run --screenshot "timeline=$LIVE/profile-2.7B-timeline.png" --screenshot "phases=$LIVE/profile-2.7B-phases.png"
    # The memory lab's OOM frontier (medium, bf16, SDPA) in its plot.
    session memory-frontier --experiment memory --config '{"size":"medium","context":256,"batch":4,"precision":"bf16","attention":"sdpa","mode":"train","warmup":1,"record_steps":1,"frontier":"context","device":"cuda"}' \
        --run --screenshot "frontier=$LIVE/memory-frontier.png"
    # The distributed lab: its preset on the GPUs present (NCCL, one rank per GPU), the window
    # spawning CPU processes (Gloo) with sharding, and the all-reduce over 4 CPU ranks.
    session distributed-preset --preset ddp-strategies --run --screenshot "lanes=$LIVE/distributed-lanes.png" \
        --screenshot "strategies=$LIVE/distributed-strategies.png" --screenshot "strategies=$LIVE/distributed-strategies.csv" \
        --report "$LIVE/distributed.md"
    # The compiled DDP step beside the eager one (Execution: both), on the GPUs present.
    session distributed-compiled --experiment distributed --config '{"backend":"nccl","world":2,"experiment":"ddp","model":"small","context":256,"batch":4,"precisions":["bf16"],"strategies":["bucketed"],"buckets":"25","sharding":"off","exec":"both","warmup":3,"steps":10}' \
        --run --screenshot "strategies=$LIVE/distributed-compiled-strategies.png" --screenshot "lanes=$LIVE/distributed-compiled-lanes.png" \
        --report "$LIVE/distributed-compiled.md"
    session distributed-gloo --experiment distributed --config '{"backend":"gloo","world":2,"experiment":"ddp","model":"tiny","context":64,"batch":2,"precisions":["fp32"],"strategies":["overlap","bucketed"],"buckets":"1","sharding":"both","warmup":1,"steps":3}' \
        --run --screenshot "lanes=$LIVE/distributed-gloo-lanes.png" --screenshot "memory=$LIVE/distributed-gloo-memory.png"
    session distributed-allreduce --experiment distributed --config '{"backend":"gloo","world":4,"experiment":"allreduce","sizes":"1MB, 4MB, 16MB, 64MB","dtypes":["fp32","bf16"],"ar_warmup":2,"ar_iters":5,"ar_sweep_world":true}' \
        --run --screenshot "allreduce=$LIVE/distributed-allreduce.png"
    # Fully sharded on the GPUs present: DDP, ours and PyTorch's FSDP2 side by side (bf16 weights).
    session distributed-fsdp --experiment distributed --config '{"backend":"nccl","world":2,"experiment":"ddp","model":"small","context":512,"batch":4,"precisions":["bf16"],"strategies":["bucketed","fsdp","fsdp2"],"buckets":"25","sharding":"off","param_dtype":"bf16","attention":"sdpa","warmup":2,"steps":5}' \
        --run --screenshot "lanes=$LIVE/distributed-fsdp-lanes.png" --screenshot "strategies=$LIVE/distributed-fsdp-strategies.png" \
        --screenshot "memory=$LIVE/distributed-fsdp-memory.png" --report "$LIVE/distributed-fsdp.md"
    # The course's bucket-size question on NCCL: each bucket's all-reduce in the lanes, the
    # latency + bandwidth model's predicted wait against the measured one; then the two DDP
    # runs before it overlaid from History.
    session distributed-buckets --experiment distributed --config '{"backend":"nccl","world":2,"experiment":"ddp","model":"xl-2025","context":256,"batch":4,"precisions":["fp32"],"strategies":["bucketed"],"buckets":"1, 10, 100, 1000","sharding":"off","warmup":3,"steps":8}' \
        --run --screenshot "lanes=$LIVE/distributed-bucket-lanes.png" --screenshot "buckets=$LIVE/distributed-buckets.png" \
        --screenshot "buckets=$LIVE/distributed-buckets.csv" --report "$LIVE/distributed-buckets.md"
    session history-overlay --overlay previous,last --screenshot "$LIVE/history-overlay.png"
    # The parallelism planner with this machine's C and W measured (a GEMM, an all-reduce).
    session planner-measured --experiment planner --config '{"model":"xl","B":"131072","context":2048,"dp":8,"tp":2,"measure":true,"device":"cuda:0"}' \
        --run --screenshot "plan=$LIVE/planner-plan.png" --screenshot "crossover=$LIVE/planner-crossover.png" \
        --report "$LIVE/planner.md"
    session compare --compare 3,2 --screenshot "compare=$LIVE/compare.png"
    session unknown-preset --preset nonexistent --run --report "$LIVE/should-not-exist.md"
    # The 2.7B preset's head dim 80 (on Hopper our kernels run it inside their 128 tile); last,
    # so that the run numbers above stay as they are.
    session attention-hd80 --experiment attention --config '{"impls":["sdpa-flash","flash"],"seq":"4096, 8192","head_dims":"80","batches":"8","heads":"16","dtypes":["bf16"],"causal":["causal"],"passes":["forward","backward"],"warmup":3,"steps":10,"device":"cuda","check":true}' \
        --run --screenshot "attention=$LIVE/attention-hd80.png" --report "$LIVE/attention-hd80.md"
    # Activation checkpointing on xl at batch 4, context 2048 (its preset): the peaks per policy;
    # after the rest, so that the run numbers above stay as they are.
    session activation-checkpointing --preset activation-checkpointing --run \
        --screenshot "memory=$LIVE/checkpointing-memory.png" --screenshot "results=$LIVE/checkpointing-results.png" \
        --report "$LIVE/checkpointing.md"
    # The user's code (the example checkout) beside TrainScope's model; after the rest, so that
    # their run numbers stay as they are.
    session your-model-vs-trainscope --preset your-model-vs-trainscope --run --screenshot "speedup=$LIVE/your-model-speedup.png" \
        --screenshot "results=$LIVE/your-model-results.png" --report "$LIVE/your-model-vs-trainscope.md"
    session your-model-profile --experiment profile \
        --config "{\"size\":\"small\",\"context\":256,\"batch\":4,\"mode\":\"train\",\"precision\":\"bf16\",\"warmup\":2,\"profile_steps\":1,\"device\":\"cuda\",\"sources\":[\"python\"],\"code\":\"$ROOT/examples/course-checkout\"}" \
        --run --screenshot "kernels=$LIVE/your-model-profile-kernels.png" --screenshot "categories=$LIVE/your-model-profile-categories.png" \
        --screenshot "attention-parts=$LIVE/your-model-profile-attention.png"
    session your-model-memory --experiment memory \
        --config "{\"size\":\"small\",\"context\":512,\"batch\":4,\"mode\":\"train\",\"precision\":\"fp32\",\"warmup\":1,\"record_steps\":2,\"frontier\":\"none\",\"device\":\"cuda\",\"sources\":[\"python\"],\"code\":\"$ROOT/examples/course-checkout\"}" \
        --run --screenshot "timeline=$LIVE/your-model-memory-timeline.png" --screenshot "allocations=$LIVE/your-model-memory-allocations.png" \
        --screenshot "peaks=$LIVE/your-model-memory-peaks.png" --report "$LIVE/your-model-memory.md"
    # The user's attention and DDP classes (the example checkout, the Code box's default): the
    # float64 gate and the timing beside ours; on 2 GPUs the classes beside PyTorch's DDP and ours,
    # then a wrong class, whose check is a red FAIL (the run fails: exit 1 is expected).
    session your-attention --preset your-attention --run --screenshot "attention=$LIVE/your-attention.png" \
        --report "$LIVE/your-attention.md"
    session your-ddp-classes --preset your-ddp-classes --run --screenshot "strategies=$LIVE/your-ddp-strategies.png" \
        --screenshot "lanes=$LIVE/your-ddp-lanes.png" --screenshot "memory=$LIVE/your-ddp-memory.png" \
        --report "$LIVE/your-ddp-classes.md"
    session your-ddp-wrong --experiment distributed \
        --config "{\"backend\":\"nccl\",\"world\":2,\"experiment\":\"ddp\",\"model\":\"small\",\"context\":256,\"batch\":4,\"precisions\":[\"bf16\"],\"strategies\":[\"bucketed\"],\"buckets\":\"25\",\"sharding\":\"off\",\"warmup\":2,\"steps\":5,\"sources\":[\"python\"],\"code\":\"$ROOT/examples/wrong/ddp_not_averaged.py\"}" \
        --run --screenshot "strategies=$LIVE/your-ddp-wrong-strategies.png" --report "$LIVE/your-ddp-wrong.md"
    ls "$LIVE"/should-not-exist* 2>/dev/null && status=1
    # The tables the window wrote as CSV (See Note [tables other programs read]): Python's csv
    # reads each as one table with snake_case headers and no comment lines.
    for f in "$LIVE"/*.csv; do
        [ -f "$f" ] || continue
        python3 - "$f" <<'PY' || status=1
import csv, re, sys
text = open(sys.argv[1], newline="").read()
rows = list(csv.reader(text.splitlines()))
bad = [h for h in rows[0] if not re.fullmatch(r"[a-z0-9_]+", h)]
ok = not text.startswith("#") and not bad and len(rows) > 1 and all(len(r) == len(rows[0]) for r in rows)
print(f"{'ok  ' if ok else 'FAIL'} {sys.argv[1].split('/')[-1]}: {len(rows) - 1} rows, {rows[0][:8]}{' bad headers ' + str(bad) if bad else ''}")
sys.exit(0 if ok else 1)
PY
    done
    "$BUILD/app/trainscope-cli" runs list 2>&1 | head -12
    # The device tool brings back a few files a call: the screenshots and reports as one archive.
    (cd "$LIVE" && tar czf "$OUTDIR/live.tgz" *.png *.md *.log *.csv 2>/dev/null)
fi
exit $status
