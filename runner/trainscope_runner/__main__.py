"""python -m trainscope_runner check|bench|profile|memory|fsdp2 --spec JSON"""

import argparse
import json
import os
import sys

from . import protocol
from .protocol import UserError, emit, fail


def check(spec):
    """Says what --code names without running it: the interpreter, torch, the GPU, the model
    and optimizer found, the course's adapters."""
    import torch
    from .code import find
    found = find(spec.get("code", ""), spec.get("optimizer", ""))
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""
    emit("found", python=sys.executable, torch=torch.__version__, gpu=gpu, form=found.form, root=found.root,
         model=found.model_name, optimizer=found.optimizer_name, adapters=found.adapters, notes=found.notes)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m trainscope_runner")
    parser.add_argument("command", choices=["check", "bench", "profile", "memory", "fsdp2"])
    parser.add_argument("--spec", required=True, help="the point as JSON")
    args = parser.parse_args(argv)
    protocol.claim_stdout()
    try:
        spec = json.loads(args.spec)
    except ValueError as e:
        fail(UserError("runner", f"--spec is not JSON: {e}"))
    try:
        import torch  # noqa: F401
    except Exception as e:
        fail(UserError("setup", f"this Python ({sys.executable}) cannot import torch: {type(e).__name__}: {e}"))
    if spec.get("cwd"):
        os.chdir(spec["cwd"])
    try:
        if args.command == "check":
            check(spec)
        else:
            from . import bench, fsdp2, memory, profile
            try:
                {"bench": bench, "profile": profile, "memory": memory, "fsdp2": fsdp2}[args.command].run(spec)
            except Exception as e:
                if args.command == "fsdp2" or not bench.is_oom(e):
                    raise  # a rank's OOM ends the world (exit 3), the others are stopped
                emit("result", status="oom", message=f"{type(e).__name__}: {str(e).splitlines()[0]}",
                     where=protocol.where(e))
    except (UserError, Exception) as e:
        fail(e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
