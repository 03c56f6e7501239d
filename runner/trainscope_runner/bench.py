"""The benchmark lab on the user's model: forward (with the loss), backward and optimizer step
timed separately for every step, as TrainScope times its own model (nn/training_step.cpp):
CUDA events between the phases and one synchronisation a step (a steady clock on the CPU),
peak memory per step, autocast precisions, fp16 with dynamic loss scaling, torch.compile."""

import contextlib
import time

from .code import build_model, build_optimizer, find
from .protocol import UserError, emit
from .ranges import StepRanges

COMPILE_MODES = {"eager": None, "compiled": "default", "reduce-overhead": "reduce-overhead",
                 "max-autotune-no-cudagraphs": "max-autotune-no-cudagraphs"}


def is_oom(e):
    import torch
    cause = getattr(e, "cause", None)  # a UserError around an out-of-memory (in construction)
    if cause is not None and cause is not e and is_oom(cause):
        return True
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", ())
    if oom and isinstance(e, oom):
        return True
    text = str(e)
    return isinstance(e, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


class Clock:
    """Four marks a step: before forward, after the loss, after backward, after the optimizer."""

    def __init__(self, device):
        import torch
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        self.t = [0.0] * 4

    def mark(self, i):
        if self.cuda:
            self.events[i].record()
        else:
            self.t[i] = time.perf_counter()

    def times(self):
        if self.cuda:
            self.events[3].synchronize()
            e = self.events
            return e[0].elapsed_time(e[1]), e[1].elapsed_time(e[2]), e[2].elapsed_time(e[3]), e[0].elapsed_time(e[3])
        t = self.t
        return tuple(1000.0 * x for x in (t[1] - t[0], t[2] - t[1], t[3] - t[2], t[3] - t[0]))


def _phase(name, fn):
    try:
        return fn()
    except Exception as e:
        if is_oom(e):
            raise
        raise UserError(name, f"{name} raised {type(e).__name__}: {e}", e) from e


class Point:
    """The user's model built for a point, and its training step: what the benchmark times and
    the profiler records. Built on the device where the user's code lets it."""

    def __init__(self, spec):
        import torch

        self.torch = torch
        self.device = device = torch.device(spec.get("device", "cpu"))
        if device.type == "cuda":
            if not torch.cuda.is_available():
                raise UserError("setup", f"device {device} asked for, but this Python's torch {torch.__version__} "
                                         "sees no GPU")
            if device.index is not None:  # "cuda" is the current device as it is
                torch.cuda.set_device(device)
        self.mode = spec.get("mode", "train")
        precision = spec.get("precision", "fp32")
        exec_mode = spec.get("exec", "eager")
        if exec_mode not in COMPILE_MODES:
            raise UserError("setup", f"unknown execution mode '{exec_mode}' (one of {', '.join(COMPILE_MODES)})")
        cfg = dict(spec["model"])
        batch, context, vocab = int(spec.get("batch_size", 4)), int(cfg["context_length"]), int(cfg["vocab_size"])
        self.warmup, self.steps = int(spec.get("warmup", 5)), int(spec.get("steps", 10))

        torch.manual_seed(int(spec.get("seed", 0)))
        self.found = found = find(spec.get("code", ""), spec.get("optimizer", ""))
        # Built on the device where the user's code lets it (its parameters are made there, not
        # on the CPU first: a 2.7B model's initialisation takes seconds instead of a minute),
        # then moved there in case it made some on the CPU all the same.
        with torch.device(device):
            model = build_model(found, cfg)
        try:
            model = model.to(device)
        except Exception as e:
            if is_oom(e):
                raise
            raise UserError("construct", f"moving {found.model_name} to {device} raised {type(e).__name__}: {e}",
                            e) from e
        self.model = model
        self.parameters = sum(p.numel() for p in model.parameters())
        self.optimizer = (build_optimizer(found, model, float(spec.get("learning_rate", 1e-4)))
                          if self.mode == "train" else None)
        self.step_model = model
        if COMPILE_MODES[exec_mode]:
            self.step_model = torch.compile(model, mode=COMPILE_MODES[exec_mode])
        self.inputs = torch.randint(vocab, (batch, context), device=device)
        self.targets = torch.randint(vocab, (batch, context), device=device)
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
        self.autocast = (lambda: torch.autocast(device.type, dtype=dtype)) if dtype else contextlib.nullcontext
        self.scaler = torch.amp.GradScaler(device.type) if precision == "fp16" and self.mode != "forward" else None
        self.grad = contextlib.nullcontext if self.mode != "forward" else torch.no_grad
        self.clock = Clock(device)

    def ready(self):
        emit("ready", model=self.found.model_name, optimizer=self.found.optimizer_name if self.optimizer else "",
             parameters=self.parameters, torch=self.torch.__version__, device=_device_name(self.device),
             notes=self.found.notes)

    def step(self, i, ranged=False, phases=None):
        """One step, timed phase by phase; `ranged`: each phase inside a profiler range named as
        TrainScope's own step names them (forward with loss inside it, backward, optimizer);
        `phases`: called with "forward", "backward", "optimizer" as each begins (the memory
        lab's marks)."""
        torch = self.torch
        import torch.nn.functional as F

        rng = torch.profiler.record_function if ranged else (lambda name: contextlib.nullcontext())
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        if self.mode != "forward":
            self.model.zero_grad(set_to_none=True)
        mark = phases or (lambda _phase: None)
        mark("forward")
        self.clock.mark(0)

        def forward():
            with rng("forward"), self.grad(), self.autocast():
                logits = self.step_model(self.inputs)
                if not isinstance(logits, torch.Tensor):
                    raise TypeError(f"the model returned a {type(logits).__name__}, not a tensor of logits")
                with rng("loss"):
                    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), self.targets.reshape(-1))

        loss = _phase("forward", forward)
        self.clock.mark(1)
        if self.mode != "forward":
            mark("backward")

            def backward():
                with rng("backward"):
                    (self.scaler.scale(loss) if self.scaler else loss).backward()
            _phase("backward", backward)
        self.clock.mark(2)
        if self.optimizer is not None:
            mark("optimizer")

            def step():
                with rng("optimizer"):
                    if self.scaler:
                        self.scaler.step(self.optimizer)
                        self.scaler.update()
                    else:
                        self.optimizer.step()
            _phase("optimizer step", step)
        self.clock.mark(3)
        fwd, bwd, opt, total = self.clock.times()
        row = {"index": i, "warmup": i < self.warmup, "forward_ms": fwd,
               "backward_ms": bwd if self.mode != "forward" else 0.0,
               "optimizer_ms": opt if self.mode == "train" else 0.0, "total_ms": total, "loss": float(loss.item())}
        if self.device.type == "cuda":
            row.update(memory_allocated=torch.cuda.memory_allocated(self.device),
                       memory_reserved=torch.cuda.memory_reserved(self.device),
                       memory_peak=torch.cuda.max_memory_allocated(self.device))
        emit("step", **row)


def step_ranges(point, spec):
    """The point's StepRanges (ranges.py): its device, and cudaProfilerStart/Stop if asked."""
    return StepRanges(point.device, spec.get("cuda_profiler_range"))


def run(spec):
    point = Point(spec)
    point.ready()
    ranges = step_ranges(point, spec)
    first_step_s = None
    for i in range(point.warmup + point.steps):
        started = time.perf_counter()
        with ranges.step(i, i < point.warmup):
            point.step(i)
        if first_step_s is None:
            first_step_s = time.perf_counter() - started
    ranges.finish()
    emit("result", status="ok", first_step_s=first_step_s)


def _device_name(device):
    import torch
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu"
