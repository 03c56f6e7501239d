#!/usr/bin/env python3
"""A snapshot of over a million trace entries (snapshot_gen: 200 steps of 1,000 layers, 1,000,002
entries) outside TrainScope.
  python: Python's own unpickler reads it whole, with every entry's category.
  viewer: memory_viz's own JavaScript (MemoryViz.js, run by Node through memory_viz_check.js)
          unpickles it, annotates it and builds the Active Memory Timeline's data, coloured by
          TrainScope's categories; an unbatched list of 500,000 items must still overflow, so the
          check is known to reach the browser's failure. The viewer is read where it is
          installed: $TRAINSCOPE_MEMORY_VIZ_JS, else torch/utils/viz/MemoryViz.js in the torch
          of one of PYTHONS (a PyTorch source checkout has it; the 2.11 wheels do not ship
          it; scripts/test.sh fetches it from Debian's archive). SKIPPED (exit 77) when there
          is none.
Usage: test_memory_viz.py python|viewer path/to/snapshot_gen PYTHONS(':'-separated)"""
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time

STEPS, LAYERS = 200, 1000
ENTRIES = 1 + STEPS * LAYERS * 5 + 1  # the segment, the steps' events, the final "snapshot"
HERE = os.path.dirname(os.path.abspath(__file__))


def generate(gen, path):
    t0 = time.time()
    p = subprocess.run([gen, str(STEPS), str(LAYERS), path], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"{ENTRIES} entries"), p.stdout
    print(f"snapshot_gen: {p.stdout.strip()} in {time.time() - t0:.1f} s")


def check_python(path):
    t0 = time.time()
    with open(path, "rb") as f:
        snap = pickle.load(f)
    print(f"pickle.load: {time.time() - t0:.1f} s")
    trace = snap["device_traces"][0]
    assert len(trace) == ENTRIES, len(trace)
    cats = {}
    for e in trace:
        c = e.get("category")
        cats[c] = cats.get(c, 0) + 1
    # Per step and layer: an activation's alloc and free, a temporary's three events.
    assert cats == {None: 1, "activations": 2 * STEPS * LAYERS, "temporaries": 3 * STEPS * LAYERS,
                    "unknown": 1}, cats
    assert trace[0]["action"] == "segment_alloc" and "category" not in trace[0], trace[0]
    assert trace[-1]["action"] == "snapshot" and trace[-1]["category"] == "unknown", trace[-1]
    assert trace[10]["frames"][0] == {"name": "aten::mm", "filename": "trainscope/op", "line": 0}, trace[10]
    assert trace[1]["frames"][-1]["name"] == "forward (step 0)", trace[1]
    assert trace[-2]["frames"][-1]["name"] == f"backward (step {STEPS - 1})", trace[-2]
    print("ok: Python's unpickler read", len(trace), "entries")


def find_viewer(pythons):
    env = os.environ.get("TRAINSCOPE_MEMORY_VIZ_JS")
    if env:
        assert os.path.isfile(env), f"TRAINSCOPE_MEMORY_VIZ_JS={env} is not a file"
        return env
    for py in filter(None, pythons.split(":")):
        try:
            # Where torch is, without importing it (seconds).
            p = subprocess.run([py, "-c", "import importlib.util as u; "
                                "print(u.find_spec('torch').submodule_search_locations[0])"],
                               capture_output=True, text=True, timeout=120)
        except OSError:
            continue
        if p.returncode == 0:
            js = os.path.join(p.stdout.strip(), "utils", "viz", "MemoryViz.js")
            if os.path.isfile(js):
                return js
            print(f"{py}: torch at {p.stdout.strip()} has no utils/viz/MemoryViz.js")
    return None


def check_viewer(path, viewer):
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "no node: install Debian's nodejs to run the viewer's own JavaScript"
    t0 = time.time()
    # The viewer holds the whole snapshot as JavaScript objects, as the browser does.
    p = subprocess.run([node, "--max-old-space-size=8192", os.path.join(HERE, "memory_viz_check.js"), viewer, path],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"memory_viz ({viewer}) in {time.time() - t0:.1f} s:", json.dumps(r))
    assert r["entries"] == ENTRIES, r
    assert r["last_action"] == "snapshot", r
    # The legend: TrainScope's categories in the order they first appear, then "unknown".
    assert r["categories"] == ["activations", "temporaries", "unknown"], r
    assert r["colours_valid"], r
    assert r["drawn"] > 0 and r["max_size"] > 0, r
    # The control: one batch of 500,000 items is what broke the browser; this Node breaks too.
    assert r["unbatched_control"].startswith("RangeError"), r
    print("ok: memory_viz's unpickler read", r["entries"], "entries")


def main():
    mode, gen, pythons = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
    viewer = None
    if mode == "viewer":
        viewer = find_viewer(pythons)
        if not viewer:
            print("SKIPPED: memory_viz's MemoryViz.js is not installed here (the torch wheels do not "
                  "ship it); set TRAINSCOPE_MEMORY_VIZ_JS to a copy of torch/utils/viz/MemoryViz.js")
            return 77
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "million.pickle")
        generate(gen, path)
        if mode == "python":
            check_python(path)
        else:
            check_viewer(path, viewer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
