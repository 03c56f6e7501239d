#!/usr/bin/env python3
"""The project's notes: long explanations written once, in the code, and pointed to.

A note is defined where a comment line begins with its name and a colon:

    // Note [point dimensions]: every dimension a training point varies along ...

and used anywhere else (code, scripts, docs) as "See Note [point dimensions]" (or "see"), so
that `grep -rn "Note \\[point dimensions\\]:"` finds the definition and `grep -rn "ee Note
\\[point dimensions\\]"` every use. This checks that each note is defined exactly once, that
every mention is a definition or a "See Note", and that every use names a defined note.

    python3 scripts/check-notes.py        exit 1 naming each problem
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTE = re.compile(r"Note \[([^\]]+)\]")
DEFINITION = re.compile(r"^\s*(?://|#|\*|--|\"\"\")\s*Note \[([^\]]+)\]:")
SUFFIXES = (".h", ".cpp", ".cu", ".cuh", ".py", ".sh", ".md", ".txt", ".cmake")


def files():
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), ROOT)
               for d, _, fs in os.walk(ROOT) for f in fs]
    return [f for f in out if f.endswith(SUFFIXES) and not f.startswith("build")
            and os.path.basename(f) != "check-notes.py"]


def main():
    definitions, uses, problems = {}, [], []
    for rel in files():
        path = os.path.join(ROOT, rel)
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for n, line in enumerate(lines, 1):
            where = f"{rel}:{n}"
            d = DEFINITION.match(line)
            if d:
                definitions.setdefault(d.group(1), []).append(where)
            for m in NOTE.finditer(line):
                if d and m.start() == line.index("Note ["):
                    continue  # the definition itself
                before = line[:m.start()].rstrip()
                if not before.lower().endswith("see"):
                    problems.append(f"{where}: mention of Note [{m.group(1)}] without 'See'")
                uses.append((m.group(1), where))
    for name, places in sorted(definitions.items()):
        if len(places) > 1:
            problems.append(f"Note [{name}] is defined {len(places)} times: {', '.join(places)}")
    for name, where in uses:
        if name not in definitions:
            problems.append(f"{where}: Note [{name}] is used but defined nowhere")
    if problems:
        print(f"{len(problems)} problem(s) with the notes:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print(f"{len(definitions)} notes, each defined once; {len(uses)} uses, each a 'See Note' "
          "of a defined note")
    return 0


if __name__ == "__main__":
    sys.exit(main())
