"""What the reference scripts' smoke tests share (test_distributed_reference.py,
test_compiled_reference.py): named checks that print ok / FAIL, the first of several pythons
that has torch, and the run that skips (77) the torch part where none has it."""
import os
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def torch_python(candidates, probe="import torch"):
    for py in candidates:
        if py and os.path.exists(py):
            if subprocess.run([py, "-c", probe], capture_output=True).returncode == 0:
                return py
    return None


def run(without_torch, with_torch, probe="import torch"):
    """without_torch(): tests that need no torch, always run; with_torch(py): the rest, given a
    python from argv[1] (PYTHON[:PYTHON...]) that passes `probe`. Returns the exit status."""
    candidates = (sys.argv[1] if len(sys.argv) > 1 else sys.executable).split(":")
    without_torch()
    py = torch_python(candidates, probe)
    if py is None:
        print(f"SKIP: no python with torch among {candidates}")
        return 77 if not failures else 1
    print(f"python with torch: {py}")
    with_torch(py)
    print(f"\n{len(failures)} failure(s)" + "".join(f"\n  {f}" for f in failures))
    return 1 if failures else 0
