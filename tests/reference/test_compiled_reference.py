#!/usr/bin/env python3
"""Tests of the compiled mode's reference tooling, with no GPU and no compilation:
  - compare_compiled.py on hand-written fixtures (made-up round numbers, not measurements): the
    ratio to torch.compile's best mode, ours set beside its SDPA, a point with only one mode
    measured, a missed target (exit 1), a point with no torch.compile row;
  - prewarm_compile.py's pool, with a stand-in for the python it runs (it sleeps and prints what
    reference_bench.py --prewarm prints): every point reported, the GPU memory budget never
    exceeded (the largest point alone, the two others together), a failing point reported with
    its last error line and a non-zero exit.
  test_compiled_reference.py PYTHON[:PYTHON...]   pythons that may have torch, tried in order
Exit 77 (skipped) when none has torch (prewarm_compile.py reads the presets from
reference_bench.py, which imports it); the comparison's part needs none and always runs.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

from reftest import check, run

HERE = os.path.dirname(os.path.abspath(__file__))


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def total(mean, std=0.1):
    return {"count": 10, "mean": mean, "std": std, "median": mean, "min": mean, "max": mean}


def test_compare():
    with tempfile.TemporaryDirectory() as d:
        ref, ts = os.path.join(d, "ref.jsonl"), os.path.join(d, "ts.jsonl")
        write_jsonl(ref, [
            {"impl": "torch.compile default", "size": "small", "precision": "bf16", "attention": "sdpa",
             "status": "ok", "total": total(10.0)},
            {"impl": "torch.compile reduce-overhead", "size": "small", "precision": "bf16", "attention": "sdpa",
             "status": "ok", "total": total(8.0)},
            {"impl": "torch.compile reduce-overhead", "size": "medium", "precision": "bf16", "attention": "sdpa",
             "status": "ok", "total": total(20.0)},
            {"impl": "pytorch", "size": "large", "precision": "bf16", "attention": "naive",
             "status": "ok", "total": total(50.0)},
        ])

        def point(size, attention, mean):
            return {"config": {"model": {"name": size}, "precision": "bf16", "attention": attention, "exec": "compiled"},
                    "status": "ok", "total": total(mean), "peak_share": 0.25}
        write_jsonl(ts, [point("small", "sdpa", 6.0), point("small", "flash", 7.0), point("medium", "sdpa", 21.0),
                         point("large", "naive", 40.0)])
        r = subprocess.run([sys.executable, os.path.join(HERE, "compare_compiled.py"), ref, ts],
                           capture_output=True, text=True)
        rows = {tuple(c.strip() for c in line.split("|")[1:4]): line for line in r.stdout.splitlines()
                if line.startswith("| ") and not line.startswith("| size")}
        small = rows.get(("small", "bf16", "sdpa"), "")
        check("| 0.750 |" in small, "compare: the ratio is to the faster of torch.compile's modes (6 / 8)")
        check("| 0.875 |" in rows.get(("small", "bf16", "flash (sdpa)"), ""),
              "compare: ours is set beside the reference's SDPA (7 / 8)")
        medium = rows.get(("medium", "bf16", "sdpa"), "")
        check("1.050 **missed** (reduce-overhead only)" in medium,
              "compare: slower than torch.compile is marked missed, and a single mode is named")
        check("| - | 25% |" in rows.get(("large", "bf16", "naive"), ""),
              "compare: no torch.compile row gives no ratio")
        check(r.returncode == 1, f"compare: a missed point exits 1 (got {r.returncode})")


STAND_IN = """#!/usr/bin/env bash
# Stands in for `python reference_bench.py --prewarm ...`: logs its start and end, sleeps.
size=""; prev=""
for a in "$@"; do [ "$prev" = --size ] && size=$a; prev=$a; done
echo "start $size" >> "{log}"
sleep 1
echo "end $size" >> "{log}"
if [ "$size" = "{fail}" ]; then echo "RuntimeError: made-up failure of $size" >&2; exit 3; fi
echo '{{"status": "prewarm"}}'
"""


def run_prewarm(py, d, fail):
    log = os.path.join(d, f"log-{fail or 'none'}")
    stand_in = os.path.join(d, f"python-{fail or 'none'}")
    with open(stand_in, "w") as f:
        f.write(STAND_IN.format(log=log, fail=fail))
    os.chmod(stand_in, os.stat(stand_in).st_mode | stat.S_IEXEC)
    # Estimates (prewarm_compile.estimate_gb, bf16): large 12.7 GB, medium 7.8, small 5.2.
    r = subprocess.run([py, os.path.join(HERE, "prewarm_compile.py"), "--sizes", "small,medium,large",
                        "--precisions", "bf16", "--attentions", "naive", "--modes", "default", "--budget-gb", "14",
                        "--python", stand_in], capture_output=True, text=True, timeout=120)
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    events = open(log).read().split("\n") if os.path.exists(log) else []
    return r, rows, [e.split() for e in events if e]


def test_prewarm(py):
    with tempfile.TemporaryDirectory() as d:
        r, rows, events = run_prewarm(py, d, fail="")
        check(r.returncode == 0, f"prewarm: exit 0 (got {r.returncode}: {r.stderr[-300:]})")
        check(sorted(x["size"] for x in rows) == ["large", "medium", "small"] and
              all(x["status"] == "prewarm" for x in rows), f"prewarm: every point reported ({rows})")
        running, together, over = set(), set(), False
        for kind, size in events:
            if kind == "start":
                running.add(size)
                over |= "large" in running and len(running) > 1
                if len(running) > 1:
                    together |= running
            else:
                running.discard(size)
        check(events[:1] == [["start", "large"]], "prewarm: the largest point starts first")
        check(not over, "prewarm: the large point (12.7 of 14 GB) never runs beside another")
        check(together == {"medium", "small"}, f"prewarm: medium and small (13 GB) run together ({together})")

        r, rows, _ = run_prewarm(py, d, fail="medium")
        failed = [x for x in rows if x["status"] == "failed"]
        check(r.returncode == 1, f"prewarm: a failed point exits 1 (got {r.returncode})")
        check(len(failed) == 1 and failed[0]["size"] == "medium" and "made-up failure" in failed[0].get("error", ""),
              f"prewarm: the failed point is reported with its error ({failed})")


def main():
    return run(test_compare, test_prewarm)


if __name__ == "__main__":
    sys.exit(main())
