"""The profiler lab on the user's model: warm-up steps, then steps under torch.profiler
(Kineto), every phase in a range named as TrainScope's own step names it and every named
submodule in a range of its own ("layers.0/attn/q_proj"), then the events as the engine's
RawTrace (engine/src/profiler/profiler.h), which TrainScope's analysis attributes and tables."""

from .bench import Point, step_ranges
from .protocol import emit

# Events per "trace" line: about 0.5 MB of JSON.
_PART = 2000
# The step annotations of Kineto's trace (profiler.h's kProfilerStepPrefix).
_STEP = "ProfilerStep#"

# Containers whose children carry the name: "layers.0", not "layers" then "0".
_CONTAINERS = ("ModuleList", "ModuleDict", "Sequential")


def module_names(model):
    """(name, module) of each named submodule, named as TrainScope's ranges name them: the
    containers' children carry the container's name ("layers.0"), the containers themselves
    are left out."""
    modules = dict(model.named_modules())
    for name, module in modules.items():
        if not name or type(module).__name__ in _CONTAINERS:
            continue
        parent, _, local = name.rpartition(".")
        if parent and type(modules.get(parent)).__name__ in _CONTAINERS:
            local = parent.rpartition(".")[2] + "." + local
        yield local, module


def _module_ranges(model):
    """Forward hooks that open a profiler range per named submodule; returns their handles."""
    import torch

    handles, open_ranges = [], []
    for range_name, module in module_names(model):
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


_MATMULS = {"matmul", "__matmul__", "__rmatmul__", "bmm", "einsum", "baddbmm"}
_FUSED = {"scaled_dot_product_attention", "flash_attn_func", "_scaled_dot_product_flash_attention"}


def _is_square(t, n):
    import torch
    return isinstance(t, torch.Tensor) and t.dim() >= 3 and t.shape[-1] == n and t.shape[-2] == n


def _matmul_out(name, args):
    """The last two dims of a matmul-like op's output, from its inputs (None: not known)."""
    import torch
    try:
        if name == "einsum":
            eq = args[0].replace(" ", "")
            ops = args[1:] if not (len(args) == 2 and isinstance(args[1], (list, tuple))) else args[1]
            lhs, _, out = eq.partition("->")
            if not out or "..." in out[-2:]:
                return None
            sizes = {}
            for term, t in zip(lhs.split(","), ops):
                term = term.replace("...", "")
                for letter, size in zip(reversed(term), reversed(t.shape)):
                    sizes[letter] = size
            return tuple(sizes.get(c) for c in out[-2:])
        a, b = args[-2], args[-1]
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() >= 2 and b.dim() >= 2:
            return a.shape[-2], b.shape[-1]
    except Exception:
        return None
    return None


def attention_parts(context):
    """Note [attention parts of the user's code]: the course's attention as TrainScope's own names
    its parts ("scores", "softmax", "values"; "fused" for SDPA and FlashAttention calls), found in
    the user's code by shape, whatever it calls its functions: a matmul (@, bmm, einsum) whose
    output is T×T makes the scores; one that reads a T×T tensor makes the values; any other op on
    a T×T tensor (scale, mask, the softmax, the user's own softmax's max, exp, sum, div) is the
    softmax. Each such op runs inside a profiler range of its part, so its kernels, and its
    backward's (linked by sequence number), land in the part. A TorchFunctionMode, entered only
    inside the model's attention modules (Note below), so the rest of the step is untouched."""
    import torch
    from torch.overrides import TorchFunctionMode

    class Parts(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            part = None
            if name in _FUSED:
                part = "fused"
            elif name in _MATMULS:
                tensors = [a for a in args if isinstance(a, torch.Tensor)]
                if name == "einsum" and len(args) == 2 and isinstance(args[1], (list, tuple)):
                    tensors = list(args[1])
                if any(_is_square(t, context) for t in tensors):
                    part = "values"
                elif _matmul_out(name, args) == (context, context):
                    part = "scores"
            elif any(_is_square(a, context) for a in args) or any(_is_square(v, context) for v in kwargs.values()):
                part = "softmax"
            if part is None:
                return func(*args, **kwargs)
            with torch.profiler.record_function(part):
                return func(*args, **kwargs)

    return Parts()


def _is_attention(name, module):
    """An attention module, by its name or its class's: "attn", "self_attention", MultiHeadSelfAttention."""
    text = (name.rpartition(".")[2] + " " + type(module).__name__).lower()
    return "attn" in text or "attention" in text


def _attention_part_hooks(model, context):
    """Enters the parts' mode around every outermost attention module's forward; returns the
    hooks' handles (none when the model names no attention module: its parts are not looked for)."""
    handles, depth = [], [0]
    mode = attention_parts(context)
    for name, module in model.named_modules():
        if not name or not _is_attention(name, module):
            continue

        def pre(_module, _inputs):
            depth[0] += 1
            if depth[0] == 1:
                mode.__enter__()

        def post(_module, _inputs, _output):
            depth[0] -= 1
            if depth[0] == 0:
                mode.__exit__(None, None, None)

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
        if name.startswith(_STEP):  # for Kineto's readers only
            continue
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
    ranges = step_ranges(point, spec)
    for i in range(point.warmup):
        with ranges.step(i, True):
            point.step(i)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if point.device.type == "cuda" else [])
    handles = _module_ranges(point.model)
    model, context = spec["model"], int(spec["model"]["context_length"])
    head_dim = int(model["d_model"]) // max(1, int(model["num_heads"]))
    # Eager only (torch.compile traces no Python modes), and only where a T×T tensor cannot be
    # mistaken for a head's T×d one.
    if point.step_model is point.model and head_dim != context:
        handles += _attention_part_hooks(point.model, context)
    try:
        with profile(activities=activities, record_shapes=True) as prof:
            for i in range(point.warmup, point.warmup + point.steps):
                # Each step a "ProfilerStep#N" for Kineto's readers (See Note [Kineto's trace]).
                with ranges.step(i, False), torch.profiler.record_function(f"{_STEP}{i - point.warmup}"):
                    point.step(i, ranged=True)
            ranges.finish()
            if point.device.type == "cuda":
                torch.cuda.synchronize(point.device)
            if spec.get("kineto_trace"):
                prof.add_metadata_json("distributedInfo", '{"rank": 0, "world_size": 1}')
                prof.add_metadata_json("trainscope", spec.get("trainscope", "{}"))
    finally:
        for h in handles:
            h.remove()
    if spec.get("kineto_trace"):
        prof.export_chrome_trace(spec["kineto_trace"])
    # In parts: a large model's step has a hundred thousand events, and the launcher reads
    # lines of at most 4 MiB whole (distributed/src/launcher.cpp, kMaxLine).
    trace = _raw_trace(prof)
    for key in ("cpu", "kernels"):
        events = trace[key]
        for i in range(0, len(events), _PART):
            emit("trace", **{key: events[i:i + _PART]})
    emit("trace", done=True)
    emit("result", status="ok")
