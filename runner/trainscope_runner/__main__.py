"""python -m trainscope_runner check|bench|profile|memory|fsdp2|attention|ddp --spec JSON
python -m trainscope_runner serve --socket NAME   (See Note [the runner server], serve.py)"""

import os
import sys

# Note [the runner's sys.path]: `python -m` puts the working folder first on sys.path, where a
# user's `timeit.py` (or `typing.py`, `copy.py`) would shadow the module torch imports and fail
# its import with an unrelated error. The launcher sets PYTHONSAFEPATH (Python 3.11+), which
# leaves it out; for an older Python the folder moves to the end here, before anything else is
# imported. The user's modules named relative to it still import (code.py adds it back for a
# module:callable, after torch is in).
if sys.path and sys.path[0] in ("", os.getcwd()):
    sys.path.append(sys.path.pop(0))

import argparse  # noqa: E402
import json  # noqa: E402

from . import protocol
from .protocol import UserError, emit, fail


def check(spec):
    """Says what --code names without running it: the interpreter, torch, the GPU, the model
    and optimizer found, the course's adapters. With "adapters" (the attention and distributed
    labs), the code is the course's adapters: a checkout, a file of adapter functions or
    module:Name, its model optional."""
    import torch
    from .code import find
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""
    if spec.get("adapters"):
        from .adapters import Adapters, describe
        from .code import adapter_states
        a = Adapters(spec.get("code", ""), "import")
        path = os.path.join(a.root, "tests", "adapters.py") if a.form == "checkout" else \
            getattr(a.module, "__file__", "") or ""
        emit("found", python=sys.executable, torch=torch.__version__, gpu=gpu, form=a.form, root=a.root,
             where=a.where(), edition=a.edition(), adapters=adapter_states(path),
             named=describe(a.obj) if a.obj is not None else "", notes=[])
        return
    found = find(spec.get("code", ""), spec.get("optimizer", ""))
    emit("found", python=sys.executable, torch=torch.__version__, gpu=gpu, form=found.form, root=found.root,
         model=found.model_name, optimizer=found.optimizer_name, adapters=found.adapters, notes=found.notes)


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["serve"]:
        served = argparse.ArgumentParser(prog="python -m trainscope_runner serve")
        served.add_argument("--socket", required=True, help="a Unix socket's path, or @name (abstract)")
        from .serve import serve
        return serve(served.parse_args(args[1:]).socket)
    parser = argparse.ArgumentParser(prog="python -m trainscope_runner")
    parser.add_argument("command", choices=["check", "bench", "profile", "memory", "fsdp2", "attention", "ddp"])
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
            import importlib
            from . import bench
            try:
                importlib.import_module(f".{args.command}", __package__).run(spec)
            except Exception as e:
                # attention reports an OOM per cell; a rank's OOM ends the world (exit 3)
                if args.command in ("fsdp2", "ddp", "attention") or not bench.is_oom(e):
                    raise  # a rank's OOM ends the world (exit 3), the others are stopped
                emit("result", status="oom", message=f"{type(e).__name__}: {str(e).splitlines()[0]}",
                     where=protocol.where(e))
    except (UserError, Exception) as e:
        fail(e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
