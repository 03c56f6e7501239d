"""The profiler lab on the user's model: warm-up steps, then steps under torch.profiler
(Kineto), every phase in a range named as TrainScope's own step names it and every named
submodule in a range of its own ("layers.0/attn/q_proj"), then the events as the engine's
RawTrace (engine/src/profiler/profiler.h), which TrainScope's analysis attributes and tables."""

from .bench import Point
from .protocol import emit

# Events per "trace" line: about 0.5 MB of JSON.
_PART = 2000

# Containers whose children carry the name: "layers.0", not "layers" then "0".
_CONTAINERS = ("ModuleList", "ModuleDict", "Sequential")


def _module_ranges(model):
    """Forward hooks that open a profiler range per named submodule; returns their handles."""
    import torch

    handles, open_ranges = [], []
    modules = dict(model.named_modules())
    for name, module in modules.items():
        if not name or type(module).__name__ in _CONTAINERS:
            continue
        parent, _, local = name.rpartition(".")
        if parent and type(modules.get(parent)).__name__ in _CONTAINERS:
            local = parent.rpartition(".")[2] + "." + local
        range_name = local

        def pre(_module, _inputs, range_name=range_name):
            rf = torch.profiler.record_function(range_name)
            rf.__enter__()
            open_ranges.append(rf)

        def post(_module, _inputs, _output):
            if open_ranges:
                open_ranges.pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles


def _raw_trace(prof):
    """Kineto's events as the engine's RawTrace: CPU ops, ranges and CUDA runtime calls (their
    correlation is CUPTI's, kept apart from the ops'), and what ran on the GPU."""
    import torch

    user_scope = int(getattr(torch._C._profiler.RecordScope, "USER_SCOPE", 7))
    cpu, kernels = [], []
    for e in prof.profiler.kineto_results.events():
        if e.is_hidden_event():
            continue
        name = e.name()
        if str(e.device_type()).endswith("CUDA"):  # kernels, memcpys, memsets
            # ...but not the GPU-side copies of the ranges (Kineto's gpu_user_annotation):
            # "attn" or "Optimizer.step#AdamW.step" spanning their kernels are no kernel.
            if e.is_user_annotation() or int(e.scope()) == user_scope:
                continue
            kernels.append({"name": name, "start_ns": e.start_ns(), "duration_ns": e.duration_ns(),
                            "launcher": e.linked_correlation_id(), "correlation": e.correlation_id(),
                            "stream": e.device_resource_id()})
            continue
        runtime = name.startswith(("cuda", "cu")) and "::" not in name
        cpu.append({"name": name, "thread": e.start_thread_id(), "start_ns": e.start_ns(), "end_ns": e.end_ns(),
                    "range": int(e.scope()) == user_scope,
                    "correlation": 0 if runtime else e.correlation_id(),
                    "runtime_correlation": e.correlation_id() if runtime else 0,
                    "sequence_nr": e.sequence_nr(), "fwd_thread": e.fwd_thread_id(),
                    "shapes": [list(s) for s in e.shapes()]})
    return {"cpu": cpu, "kernels": kernels}


def run(spec):
    import torch
    from torch.profiler import ProfilerActivity, profile

    point = Point(spec)
    point.ready()
    for i in range(point.warmup):
        point.step(i)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if point.device.type == "cuda" else [])
    handles = _module_ranges(point.model)
    try:
        with profile(activities=activities, record_shapes=True) as prof:
            for i in range(point.warmup, point.warmup + point.steps):
                point.step(i, ranged=True)
            if point.device.type == "cuda":
                torch.cuda.synchronize(point.device)
    finally:
        for h in handles:
            h.remove()
    # In parts: a large model's step has a hundred thousand events, and the launcher reads
    # lines of at most 4 MiB whole (distributed/src/launcher.cpp, kMaxLine).
    trace = _raw_trace(prof)
    for key in ("cpu", "kernels"):
        events = trace[key]
        for i in range(0, len(events), _PART):
            emit("trace", **{key: events[i:i + _PART]})
    emit("trace", done=True)
    emit("result", status="ok")
