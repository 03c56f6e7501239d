#!/usr/bin/env python3
"""The include graph of the labs, on both sides, and a check that no lab includes another.

A lab is a folder of the engine (engine/src/<lab>/), of the window (ui/<lab>/) and of the
command line (app/cli_<lab>.cpp). A lab may include the shared folders (the engine's core/,
runtime/, nn/; the window's common/; kernels/ and distributed/ through their public headers)
and its own folder on the other side (the window's memory lab reads the engine's memory
lab), never another lab's folder.

    python3 scripts/lab-includes.py          the graph: each lab's folder and what it includes
    python3 scripts/lab-includes.py --check  only the check: exit 1 naming every include that
                                             crosses from one lab into another
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE = os.path.join(ROOT, "engine", "src")
# The CLI files named for their lab (cli_bench.cpp is the benchmark lab's).
CLI_LABS = {"bench": "benchmark", "profile": "profiler"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def labs():
    """The labs: the engine's folders other than the shared ones."""
    shared = {"core", "runtime", "nn"}
    return sorted(d for d in os.listdir(ENGINE)
                  if os.path.isdir(os.path.join(ENGINE, d)) and d not in shared)


def place(path, lab_names):
    """(side, folder) of a file: ("engine", "memory"), ("ui", "common"), ("app", "bench")."""
    rel = os.path.relpath(path, ROOT).split(os.sep)
    if rel[:2] == ["engine", "src"] and len(rel) > 3:
        return "engine", rel[2]
    if rel[0] == "ui" and len(rel) > 2:
        return "ui", rel[1]
    if rel[0] == "app" and rel[-1].startswith("cli_"):
        name = rel[-1][len("cli_"):].rsplit(".", 1)[0]
        name = CLI_LABS.get(name, name)
        return "app", name if name in lab_names else "app"
    return rel[0], ""


def resolve(inc, including):
    """The file an include names: the engine's include folder (src/), the project root (the
    window's "ui/..."), or the including file's folder."""
    for base in (ENGINE, ROOT, os.path.dirname(including)):
        candidate = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(candidate):
            return candidate
    return None


def main():
    check_only = "--check" in sys.argv[1:]
    lab_names = labs()
    graph = defaultdict(lambda: defaultdict(int))  # "ui/memory" -> {"engine/memory": n}
    crossings = []
    for top in ("engine/src", "ui", "app"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                side, folder = place(path, lab_names)
                if folder not in lab_names:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    target = resolve(inc, path)
                    if not target:
                        continue  # a generated file (moc) or a system header
                    tside, tfolder = place(target, lab_names)
                    graph[f"{side}/{folder}"][f"{tside}/{tfolder}".rstrip("/")] += 1
                    if tfolder in lab_names and tfolder != folder:
                        crossings.append(f"{os.path.relpath(path, ROOT)} includes "
                                         f"{os.path.relpath(target, ROOT)} "
                                         f"(lab {folder} into lab {tfolder})")
    if not check_only:
        for lab in lab_names:
            for side in ("engine", "ui", "app"):
                key = f"{side}/{lab}"
                if key not in graph:
                    continue
                targets = ", ".join(f"{t} ({n})" for t, n in sorted(graph[key].items()))
                print(f"{key:22} → {targets}")
    if crossings:
        print(f"{len(crossings)} include(s) cross from one lab into another:", file=sys.stderr)
        for c in crossings:
            print("  " + c, file=sys.stderr)
        return 1
    print(f"no lab includes another ({len(lab_names)} labs: {', '.join(lab_names)}; "
          "engine, window and command line)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
