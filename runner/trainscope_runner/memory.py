"""The memory lab on the user's model: warm-up steps, then steps with the CUDA caching
allocator's history on (torch.cuda.memory._record_memory_history, Python stacks), then that
history as the engine's RawMemoryTrace (engine/src/memory/memory.h), which TrainScope's analysis
reads: every alloc and free with its phase, step and module, the user's file and line that
asked for it, the parameters', gradients' and optimizer state's storage exactly.

A frontier probe (spec "probe": true) runs one step with the history on; when it runs out of
memory, the trace is taken by an out-of-memory observer, before the step unwinds and frees its
tensors (what PyTorch's memory_viz documentation does), and sent as the probe's picture."""

import os
import time

from .bench import Point, is_oom, step_ranges
from .profile import module_names
from .protocol import emit

# Entries per "memory" line: about 0.2 MB of JSON.
_PART = 2000
# The history's length: the oldest entries are dropped past it (the engine warns).
_MAX_ENTRIES = 2_000_000
# Frames kept per allocation, innermost first.
_MAX_FRAMES = 12

_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))
_ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"}


def _torch_dir():
    import torch
    return os.path.dirname(os.path.abspath(torch.__file__))


class Marks:
    """What the runner is doing, attached to every allocation: "phase|step|module". Where the
    allocator keeps user metadata (torch.cuda.memory._set_memory_metadata) it travels with each
    trace entry; otherwise the phases are told apart by the times they began."""

    def __init__(self, torch):
        self.torch = torch
        self.setter = getattr(torch.cuda.memory, "_set_memory_metadata", None)
        self.phase, self.step, self.modules = "other", -1, []
        self.changes = []  # (unix µs, phase, step): the fallback's boundaries
        self.driver = []   # (unix µs, bytes the driver says are used)
        self.used = getattr(torch.cuda, "device_memory_used", None)

    def _set(self):
        if self.setter:
            self.setter(f"{self.phase}|{self.step}|{'/'.join(self.modules)}")

    def set_phase(self, phase, step=None):
        if step is not None:
            self.step = step
        self.phase = phase
        self.changes.append((time.time_ns() // 1000, phase, self.step))
        self.sample()
        self._set()

    def sample(self):
        if self.used is None:
            return
        try:
            self.driver.append((time.time_ns() // 1000, int(self.used())))
        except Exception:
            self.used = None  # no NVML in this torch: no driver samples

    def enter(self, name):
        self.modules.append(name)
        self._set()

    def leave(self):
        if self.modules:
            self.modules.pop()
        self._set()

    def clear(self):
        self.phase, self.step, self.modules = "other", -1, []
        if self.setter:
            self.setter("")

    def fallback(self, time_us):
        """The phase and step at `time_us`, from the boundaries' times."""
        phase, step = "other", -1
        for t, p, s in self.changes:
            if t > time_us:
                break
            phase, step = p, s
        return phase, step


def _module_marks(model, marks):
    """Forward hooks that put each named submodule's name on what it allocates."""
    handles = []
    for name, module in module_names(model):
        def pre(_module, _inputs, name=name):
            marks.enter(name)

        def post(_module, _inputs, _output):
            marks.leave()

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles


def _storage(t):
    if t is None or not hasattr(t, "untyped_storage"):
        return None
    s = t.untyped_storage()
    return [s.data_ptr(), s.nbytes()]


def _known(point, known, step, params=True):
    """The model's parameters, the optimizer's state and the gradients (of `step`) by storage."""
    import torch
    if params:
        for p in point.model.parameters():
            if (s := _storage(p)) and s[0]:
                known.append(s + ["parameters", -1])
        if point.optimizer is not None:
            for state in point.optimizer.state.values():
                for v in state.values():
                    if isinstance(v, torch.Tensor) and v.is_cuda and (s := _storage(v)) and s[0]:
                        known.append(s + ["optimizer state", -1])
    for p in point.model.parameters():
        if p.grad is not None and (s := _storage(p.grad)) and s[0]:
            known.append(s + ["gradients", step])


def _segments(snapshot, device):
    out, live, reserved = [], [], 0
    for seg in snapshot.get("segments", []):
        if seg.get("device", device) != device:
            continue
        addr, blocks = int(seg["address"]), []
        reserved += int(seg["total_size"])
        for b in seg.get("blocks", []):
            allocated = b.get("state") == "active_allocated"
            requested = int(b.get("requested_size", b["size"]))
            blocks.append([int(b.get("address", addr)), int(b["size"]), requested, allocated])
            if allocated:
                live.append([int(b.get("address", addr)), requested])
            addr += int(b["size"])
        out.append([int(seg["address"]), int(seg["total_size"]), int(seg.get("stream", 0)),
                    seg.get("segment_type", "large") == "large", blocks])
    return out, live, reserved


class _Trace:
    """The allocator's history as the engine's trace: names and stacks deduplicated."""

    def __init__(self, marks):
        self.marks = marks
        self.names, self.name_index = [], {}
        self.stacks, self.stack_index = [], {}
        self.user_dirs = (_RUNNER_DIR + os.sep, _torch_dir() + os.sep)

    def name(self, s):
        if not s:
            return -1
        if s not in self.name_index:
            self.name_index[s] = len(self.names)
            self.names.append(s)
        return self.name_index[s]

    def stack(self, frames):
        # The user's frames only (not the runner's, not torch's own Python): the line in their
        # code that asked for the memory comes first.
        kept = []
        for f in frames or []:
            filename = f.get("filename", "")
            if not filename or filename.startswith(self.user_dirs) or filename.startswith("<"):
                continue
            kept.append((f.get("name", ""), filename, int(f.get("line", 0))))
            if len(kept) == _MAX_FRAMES:
                break
        if not kept:
            return -1
        key = tuple(kept)
        if key not in self.stack_index:
            self.stack_index[key] = len(self.stacks)
            self.stacks.append([list(f) for f in kept])
        return self.stack_index[key]

    def events(self, entries):
        out = []
        t0 = entries[0].get("time_us", 0) if entries else 0
        self.t0 = t0
        for e in entries:
            action = e.get("action")
            if action not in _ACTIONS:
                continue
            meta = e.get("user_metadata")
            if meta:
                phase, step, module = (meta.split("|", 2) + ["", ""])[:3]
                step = int(step) if step.lstrip("-").isdigit() else -1
            else:
                (phase, step), module = self.marks.fallback(e.get("time_us", 0)), ""
            addr = e.get("device_free", 0) if action == "oom" else e.get("addr", 0)
            out.append([action, int(addr), int(e.get("size", 0)), (int(e.get("time_us", t0)) - t0) * 1000,
                        int(e.get("stream", 0)), phase or "other", step, self.name(module), -1,
                        self.stack(e.get("frames"))])
        return out


def _send(snapshot, device, marks, initial, initial_reserved, known, key="memory"):
    entries = snapshot.get("device_traces", [])
    entries = entries[device] if device < len(entries) else []
    trace = _Trace(marks)
    events = trace.events(entries)
    segments, _, _ = _segments(snapshot, device)
    for i in range(0, len(events), _PART):
        emit(key, events=events[i:i + _PART])
    for i in range(0, len(trace.stacks), _PART):
        emit(key, stacks=trace.stacks[i:i + _PART])
    t0 = getattr(trace, "t0", 0)
    driver = [[(t - t0) * 1000, used] for t, used in marks.driver]
    emit(key, done=True, device=device, initial_reserved=initial_reserved, names=trace.names,
         initial=initial, segments=segments, known=known, driver=driver, truncated=len(entries) >= _MAX_ENTRIES)


def _start_history(torch):
    torch.cuda.memory._record_memory_history("all", context="alloc", stacks="python", max_entries=_MAX_ENTRIES)


def _stop_history(torch, marks):
    marks.clear()
    torch.cuda.memory._record_memory_history(None)


def _prepare(spec):
    import torch
    if not spec.get("device", "cpu").startswith("cuda"):
        from .protocol import UserError
        raise UserError("setup", "memory recording needs a CUDA device (the caching allocator's history)")
    return torch


def run(spec):
    torch = _prepare(spec)
    if spec.get("probe"):
        return probe(spec)
    point = Point(spec)
    point.ready()
    marks = Marks(torch)
    device = torch.cuda.current_device()
    ranges = step_ranges(point, spec)
    for i in range(point.warmup):
        with ranges.step(i, True):
            point.step(i)
    torch.cuda.synchronize()
    _, initial, initial_reserved = _segments(torch.cuda.memory._snapshot(), device)
    known = []
    _known(point, known, -1)
    record_steps = int(spec.get("record_steps", 2))
    handles = _module_marks(point.model, marks)
    _start_history(torch)
    try:
        marks.sample()
        for r in range(record_steps):
            with ranges.step(point.warmup + r, False):
                point.step(point.warmup + r, phases=lambda phase, r=r: marks.set_phase(phase, r))
            marks.set_phase("other", -1)
            _known(point, known, r, params=(r == 0 and point.warmup == 0))
        ranges.finish()
        torch.cuda.synchronize()
        marks.sample()
        snapshot = torch.cuda.memory._snapshot()
    finally:
        for h in handles:
            h.remove()
        _stop_history(torch, marks)
    _send(snapshot, device, marks, initial, initial_reserved, known)
    sizes = {"parameter_bytes": 0, "gradient_bytes": 0, "optimizer_bytes": 0}
    for p in point.model.parameters():
        sizes["parameter_bytes"] += p.nbytes
        if p.grad is not None:
            sizes["gradient_bytes"] += p.grad.nbytes
    if point.optimizer is not None:
        for state in point.optimizer.state.values():
            for v in state.values():
                if isinstance(v, torch.Tensor):
                    sizes["optimizer_bytes"] += v.nbytes
    emit("result", status="ok", **sizes)


def probe(spec):
    """One step of a point of the OOM frontier: fits (with its peak) or runs out of memory
    (with the allocator's history up to the failed allocation)."""
    import torch
    marks = Marks(torch)
    device = torch.cuda.current_device()
    _, initial, initial_reserved = _segments(torch.cuda.memory._snapshot(), device)
    captured = {}

    def on_oom(dev, _alloc, _allocated, _free):
        if dev == device and "snapshot" not in captured:
            try:
                captured["snapshot"] = torch.cuda.memory._snapshot()
            except Exception:
                pass  # still an OOM, only without its picture

    torch._C._cuda_attach_out_of_memory_observer(on_oom)
    point, handles = None, []
    _start_history(torch)
    marks.set_phase("other", 0)
    try:
        point = Point(dict(spec, warmup=0, steps=1))
        handles = _module_marks(point.model, marks)
        point.step(0, phases=lambda phase: marks.set_phase(phase, 0))
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated(device)
        emit("result", status="ok", fits=True, peak_bytes=peak)
    except Exception as e:
        if not is_oom(e):
            raise
        cause = getattr(e, "cause", None) or e
        message = f"{type(cause).__name__}: {str(cause).splitlines()[0]}"
        if "snapshot" in captured:
            known = []
            if point is not None:
                _known(point, known, 0)
            _send(captured["snapshot"], device, marks, initial, initial_reserved, known, key="oom_trace")
        emit("result", status="oom", fits=False, message=message)
    finally:
        for h in handles:
            h.remove()
        _stop_history(torch, marks)
