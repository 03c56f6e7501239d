"""The attention lab's implementations that live in Python (see Note [attention in Python] in
engine/src/attention/attention_lab.h): "torch-compile", torch.compile of the naive attention, and
the user's own attention from --code: "yours-pytorch" and "yours-triton" (the adapters'
get_flashattention_autograd_function_pytorch / _triton, an autograd.Function class) and "yours"
(module:Name, an autograd.Function or a callable (q, k, v, is_causal) -> o).

It does for them what engine/src/attention/attention_runner.cpp does for TrainScope's own: per
problem one set of seeded random inputs and, lazily, one float64 reference on the first and last
batch element × the first and last head; per implementation a correctness gate (relative
Frobenius error, the C++ tolerances), then warm-up and measured steps timed with device marks.

    {"event":"ready", "impls": {name: {"status", "what", "message", "traceback"}}, "edition", "where"}
    {"event":"cell", "problem": i, "impl": name, "cell": {...}}     problems outer, impls inner

Every cell ends in a line, whatever happened in it: the user's exception is the cell's failure
(with their traceback), an out-of-memory its OOM; only a failure of the runner itself ends the
command (an error line, exit 3)."""

import contextlib
import gc
import inspect
import math
import os
import sys
import time
import traceback

from .adapters import Adapters, NotDoneYet, describe
from .bench import is_oom
from .protocol import UserError, emit, user_traceback, where
from .ranges import StepRanges

IMPLS = ("torch-compile", "yours-pytorch", "yours-triton", "yours")
ADAPTER = {"yours-pytorch": "get_flashattention_autograd_function_pytorch",
           "yours-triton": "get_flashattention_autograd_function_triton"}

# The benchmark's gate, as the C++ (attention_runner.cpp's tolerance()); the course's own tests
# allow 1e-2 in fp32, where TF32 matmuls land.
TOLERANCE = {"bf16": 3e-2, "fp16": 5e-3, "fp32": 1e-4}
COURSE_FP32_TOLERANCE = 1e-2

# The float64 reference's query rows per chunk: its scores (slices × rows × seq) stay under this
# many elements (256 MiB in float64), so that seq 65536 fits.
_REFERENCE_ELEMENTS = 1 << 25
_REFERENCE_MAX_ROWS = 1024

# Text of an error after which the GPU's context is unusable: every later CUDA call fails.
_STICKY_CUDA = ("illegal memory access", "device-side assert", "unspecified launch failure",
                "misaligned address", "illegal instruction", "CUDA_ERROR_ILLEGAL_ADDRESS",
                "CUDA_ERROR_LAUNCH_FAILED", "uncorrectable ECC")

_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))


# ---- what a cell says ---------------------------------------------------------------------------

def _blank_cell():
    return {"status": "ok", "error": "", "traceback": "",
            "forward_ms": 0.0, "backward_ms": 0.0, "forward_backward_ms": 0.0,
            "forward_mean_ms": 0.0, "forward_std_ms": 0.0, "backward_mean_ms": 0.0, "backward_std_ms": 0.0,
            "forward_backward_mean_ms": 0.0, "forward_backward_std_ms": 0.0,
            "first_call_ms": 0.0, "memory_before_backward": 0, "peak_memory": 0,
            "err_out": -1.0, "err_dq": -1.0, "err_dk": -1.0, "err_dv": -1.0, "err_grad": -1.0,
            "tolerance": 0.0}


def _number(x):
    """A float for JSON: NaN and infinities as the engine's jsonio writes them ("NaN",
    "Infinity", "-Infinity"; its toDouble reads them back)."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _clean(cell):
    return {k: (_number(v) if isinstance(v, float) else v) for k, v in cell.items()}


def _lib_dirs():
    dirs = []
    for name in ("torch", "triton"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(mod.__file__)) + os.sep)
    return dirs


def _where(exc):
    """protocol.where, preferring the innermost frame of the user's own files over torch's and
    Triton's (a Triton compile error is raised deep in Triton; the user's launch line says more)."""
    libs = _lib_dirs()
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.abspath(f.filename).startswith(_RUNNER_DIR + os.sep)
              and not any(os.path.abspath(f.filename).startswith(d) for d in libs)]
    if frames:
        return f"{frames[-1].filename}:{frames[-1].lineno}"
    return where(exc)


def _one_line(exc):
    """'ExcType: message' on one line. A Triton CompilationError's text starts with the kernel's
    source; its message (or the error it wraps) is what a person reads first."""
    name = type(exc).__name__
    if hasattr(exc, "error_message") and hasattr(exc, "node") and hasattr(exc, "src"):
        cause = exc.__cause__ or exc.__context__
        msg = exc.error_message or (f"{type(cause).__name__}: {cause}" if cause is not None else "")
        lineno = getattr(exc.node, "lineno", None)
        text = (msg.strip().splitlines() or [""])[0]
        at = f" (kernel line {lineno})" if lineno is not None else ""
        return f"{name}: {text}{at}"[:500]
    lines = [l.strip() for l in str(exc).splitlines() if l.strip()]
    return (f"{name}: {lines[0]}" if lines else name)[:500]


def _oom_line(exc):
    """An out-of-memory as one line, as core/result.cpp's oneLineError: a CPU allocation that
    failed is "out of memory on the CPU: tried to allocate 16.0 GiB"."""
    import re
    text = str(exc)
    m = re.search(r"can't allocate memory: you tried to allocate (\d+) bytes", text)
    if m:
        return f"out of memory on the CPU: tried to allocate {int(m.group(1)) / 2**30:.1f} GiB"
    text = re.sub(r"^\[enforce fail at [^\]]*\]\s*(err == 0\.\s*)?", "", text.strip())
    line = (text.splitlines() or [""])[0]
    # CUDA's: "CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of
    # 79.18 GiB of which 10.32 GiB is free. Including non-PyTorch memory, ..." up to "is free."
    free = line.find(" is free.")
    if line.startswith("CUDA out of memory") and free > 0:
        line = line[:free + len(" is free.")]
    return f"{type(exc).__name__}: {line}"


def _user_error(exc):
    at = _where(exc)
    return _one_line(exc) + (f" ({at})" if at else "")


def _sticky_cuda(exc):
    """An error after which this process's CUDA context is unusable."""
    text = str(exc)
    return any(s in text for s in _STICKY_CUDA)


class _Wrong(Exception):
    """The implementation ran, but its result is wrong (shape, dtype, gate): failed, no traceback."""


class _UserFailure(Exception):
    """An exception of the implementation's code (forward, backward, its kernels)."""

    def __init__(self, exc, phase):
        super().__init__(str(exc))
        self.exc, self.phase = exc, phase


class _NotDone(Exception):
    """The implementation raises NotImplementedError (a backward not written yet, say)."""


# ---- the implementations ------------------------------------------------------------------------

def naive_attention(q, k, v, is_causal):
    """TrainScope's naive attention (engine/src/nn/attention.cpp): scores materialised, the
    causal mask as -inf, softmax in the inputs' dtype."""
    import torch
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if is_causal:
        s_q, s_k = q.shape[-2], k.shape[-2]
        mask = torch.ones(s_q, s_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    return scores.softmax(dim=-1) @ v


class Impl:
    """One implementation, resolved: how ready reports it and, when ok, how to call it.
    `course_layout`: it takes (batch·heads, seq, d), as the course's tests call it."""

    def __init__(self, name):
        self.name = name
        self.status, self.what, self.message, self.tb = "ok", "", "", ""
        self.fn = None
        self.course_layout = True
        self.user = True  # its exceptions are the user's: their traceback goes in the cell

    def set(self, status, message, exc=None):
        self.status, self.message = status, message
        if exc is not None:
            at = _where(exc)
            if at and f"({at})" not in message:
                self.message = f"{message} ({at})"
            self.tb = user_traceback(exc)

    def ready(self):
        return {"status": self.status, "what": self.what, "message": self.message, "traceback": self.tb}


def _callable_of(obj, what):
    """The function to call (q, k, v, is_causal) -> o for what the user gave: an autograd.Function
    class's apply, or a plain callable; (None, why) for anything else."""
    import torch
    if obj is None:
        return None, f"{what} is None, not an autograd.Function class"
    if inspect.isclass(obj):
        if issubclass(obj, torch.autograd.Function):
            return obj.apply, ""
        apply = getattr(obj, "apply", None)
        if callable(apply) and not issubclass(obj, torch.nn.Module):
            return apply, ""
        return None, (f"{what} is the class {describe(obj)}, not a torch.autograd.Function (give an "
                      "autograd.Function subclass, or a function (q, k, v, is_causal) -> o)")
    if callable(obj):
        return obj, ""
    return None, f"{what} is a {type(obj).__name__}, not an autograd.Function class or a callable"


def resolve(names, spec):
    """Every implementation asked for, resolved, and the adapters (None when none were imported)."""
    import torch
    device = spec.get("device", "cpu")
    code = spec.get("code", "") or ""
    impls, adapters, import_error = [], None, None
    wants_user = any(n in ADAPTER or n == "yours" for n in names)
    if wants_user and code:
        try:
            adapters = Adapters(code, phase="import")
        except UserError as e:
            import_error = e
    for name in names:
        impl = Impl(name)
        impls.append(impl)
        if name not in IMPLS:
            impl.set("failed", f"unknown implementation '{name}' (one of {', '.join(IMPLS)})")
            continue
        if name == "torch-compile":
            impl.what = "torch.compile(naive attention, dynamic=False)"
            impl.user, impl.course_layout = False, False
            try:
                impl.fn = torch.compile(naive_attention, dynamic=False)
            except Exception as e:  # torch.compile not supported by this Python, say
                impl.set("unsupported", f"torch.compile: {_one_line(e)}")
            continue
        if name == "yours-triton" and torch.device(device).type == "cpu":
            impl.set("unsupported", "Triton runs on a GPU; this point's device is the CPU")
            continue
        if not code:
            impl.set("failed", "no --code given (a course checkout, a file or module of adapter functions, "
                               "or module:Name for yours)")
            continue
        if import_error is not None:
            impl.set("failed", str(import_error), import_error.cause)
            continue
        if name == "yours":
            if adapters.form != "callable":
                impl.set("failed", f"yours needs --code module:Name or file.py:Name (an autograd.Function or a "
                                   f"callable (q, k, v, is_causal) -> o); --code names {adapters.where()}")
                continue
            impl.what = describe(adapters.obj)
            impl.fn, why = _callable_of(adapters.obj, adapters.obj_name)
            if impl.fn is None:
                impl.set("failed", why)
            continue
        adapter = ADAPTER[name]
        try:
            cls = adapters.call(adapter, phase="import")
        except NotDoneYet as e:
            impl.set("not done yet", str(e))
            continue
        except UserError as e:
            impl.set("failed", str(e), e.cause)
            continue
        impl.what = describe(cls) if cls is not None else ""
        impl.fn, why = _callable_of(cls, f"{adapter}()'s result")
        if impl.fn is None:
            impl.set("failed", why)
    return impls, adapters


def _allow_recompiles(problems):
    """torch.compile specialises the naive attention per shape, dtype, causal flag and grad mode;
    past its recompile limit (8) it would run the rest eagerly, unsaid. Enough for every problem."""
    try:
        import torch._dynamo.config as dc
    except Exception:
        return
    need = 4 * len(problems) + 8
    for key in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                "accumulated_cache_size_limit"):
        if isinstance(getattr(dc, key, None), int) and getattr(dc, key) < need:
            try:
                setattr(dc, key, need)
            except Exception:
                pass


# ---- one problem --------------------------------------------------------------------------------

_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def _available_bytes():
    """What this process can still get on the CPU, as runtime/device.cpp's
    availableMemoryBytes(): MemAvailable, lowered by a cgroup limit; 0 when unknown."""
    available = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if available <= 0:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            available = 0

    def number(path):
        try:
            with open(path) as f:
                text = f.read().strip()
            return int(text) if text.isdigit() else 0
        except OSError:
            return 0

    def lower(limit, used):
        nonlocal available
        if limit <= 0 or limit > (1 << 60):
            return
        left = max(0, limit - used)
        available = min(available, left) if available > 0 else left

    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    g = line.strip()[3:]
                    d = "/sys/fs/cgroup" + ("" if g == "/" else g)
                    lower(number(d + "/memory.max"), number(d + "/memory.current"))
    except OSError:
        pass
    lower(number("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
          number("/sys/fs/cgroup/memory/memory.usage_in_bytes"))
    return available


def cpu_memory_problem(p, scores, available):
    """As the C++ cpuCellMemoryProblem (see Note [attention cells the CPU cannot hold]): a lower bound
    of a cell's memory, 8 tensors of b·h·s·d (+ the naive scores and probabilities, 2·b·h·s²), and
    why it is not tried when it is more than the machine has free; '' when it may fit."""
    elt = 4.0 if p["dtype"] == "fp32" else 2.0
    b, h, s, d = (float(p[k]) for k in ("batch", "heads", "seq", "head_dim"))
    need = 8.0 * b * h * s * d * elt + (2.0 * b * h * s * s * elt if scores else 0.0)
    if available <= 0 or need <= available:
        return ""
    return (f"not tried: needs at least {need / 2**30:.1f} GiB on the CPU (inputs, output and gradients"
            f"{', scores and probabilities' if scores else ''}), more than the {available / 2**30:.1f} GiB "
            "this machine has free")


class Problem:
    """One problem's inputs (batch, heads, seq, d) and, made when first asked for, its float64
    reference on the first and last batch element × the first and last head."""

    def __init__(self, p, seed, device):
        import torch
        self.p = p
        self.causal = bool(p["causal"])
        self.dtype = getattr(torch, _DTYPES[p["dtype"]])
        self.device = device
        shape = (int(p["batch"]), int(p["heads"]), int(p["seq"]), int(p["head_dim"]))
        self.shape = shape
        torch.manual_seed(seed)
        self.q, self.k, self.v, self.dout = (torch.randn(shape, dtype=self.dtype, device=device) for _ in range(4))
        b, h = shape[0], shape[1]
        self.bidx = torch.tensor([0] + ([b - 1] if b > 1 else []), device=device)
        self.hidx = torch.tensor([0] + ([h - 1] if h > 1 else []), device=device)
        self.ref = None  # (out, dq, dk, dv) in float64; the gradients None when not needed
        self.ref_grads = False

    def pick(self, t):
        return t.index_select(0, self.bidx).index_select(1, self.hidx)

    def reference(self, grads):
        """The float64 attention of the picked slices, query rows in chunks: never seq × seq."""
        import torch
        if self.ref is not None and (self.ref_grads or not grads):
            return self.ref
        with torch.no_grad():
            q, k, v = (self.pick(t).to(torch.float64) for t in (self.q, self.k, self.v))
            do = self.pick(self.dout).to(torch.float64) if grads else None
            n = q.shape[0] * q.shape[1]
            s, d = q.shape[2], q.shape[3]
            scale = 1.0 / math.sqrt(d)
            rows = max(16, min(_REFERENCE_MAX_ROWS, _REFERENCE_ELEMENTS // max(1, n * s)))
            out = torch.empty_like(q)
            dq = torch.empty_like(q) if grads else None
            dk = torch.zeros_like(k) if grads else None
            dv = torch.zeros_like(v) if grads else None
            cols = torch.arange(s, device=q.device)
            for i0 in range(0, s, rows):
                i1 = min(s, i0 + rows)
                end = i1 if self.causal else s  # a causal chunk sees no key past its last row
                kc, vc = k[:, :, :end], v[:, :, :end]
                scores = (q[:, :, i0:i1] @ kc.transpose(-2, -1)) * scale
                if self.causal:
                    mask = cols[None, :end] > torch.arange(i0, i1, device=q.device)[:, None]
                    scores.masked_fill_(mask, float("-inf"))
                probs = torch.softmax(scores, dim=-1)
                del scores
                o = probs @ vc
                out[:, :, i0:i1] = o
                if grads:
                    g = do[:, :, i0:i1]
                    dv[:, :, :end] += probs.transpose(-2, -1) @ g
                    dp = g @ vc.transpose(-2, -1)
                    delta = (g * o).sum(dim=-1, keepdim=True)
                    ds = probs * (dp - delta)
                    del dp, probs
                    dq[:, :, i0:i1] = (ds @ kc) * scale
                    dk[:, :, :end] += (ds.transpose(-2, -1) @ q[:, :, i0:i1]) * scale
                    del ds
        self.ref, self.ref_grads = (out, dq, dk, dv), grads
        return self.ref


def _rel_err(a, ref):
    import torch
    a = a.to(torch.float64)
    denom = ref.norm().item()
    num = (a - ref).norm().item()
    return num / denom if denom > 0 else num


class Clock:
    """Three marks a step, as the C++ DeviceTimer: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, cuda):
        import torch
        self.cuda = cuda
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(3)] if cuda else None
        self.t = [0.0] * 3

    def mark(self, i):
        if self.cuda:
            self.events[i].record()
        else:
            self.t[i] = time.perf_counter()

    def wait(self):
        if self.cuda:
            self.events[2].synchronize()

    def ms(self, a, b):
        if self.cuda:
            return self.events[a].elapsed_time(self.events[b])
        return 1000.0 * (self.t[b] - self.t[a])


def _stats(values):
    """(median, mean, sample standard deviation), as core/result.cpp's computeStats; zeros when empty."""
    if not values:
        return 0.0, 0.0, 0.0
    v = sorted(values)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    mean = sum(v) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return median, mean, std


def _not_done(impl, phase, exc):
    at = _where(exc)
    return (f"not done yet: {impl.what or impl.name} raises NotImplementedError in {phase}"
            + (f" ({at})" if at else ""))


class Cell:
    """One implementation on one problem: the gate, then the timed steps."""

    def __init__(self, impl, prob, spec, grad):
        import torch
        self.torch = torch
        self.impl, self.prob, self.spec, self.grad = impl, prob, spec, grad
        self.cuda = prob.device.type == "cuda"
        self.out = _blank_cell()
        b, h, s, d = prob.shape
        self.in_shape = (b * h, s, d) if impl.course_layout else (b, h, s, d)

    def _sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def leaves(self, grad):
        """q, k, v as the implementation takes them (views of the problem's inputs), and dout."""
        p = self.prob
        q, k, v, dout = (t.view(self.in_shape) for t in (p.q, p.k, p.v, p.dout))
        return [t.detach().requires_grad_(grad) for t in (q, k, v)], dout

    def call(self, q, k, v):
        """The implementation's forward; its exception is the user's (or torch.compile's)."""
        try:
            o = self.impl.fn(q, k, v, self.prob.causal)
        except Exception as e:
            if is_oom(e):
                raise
            if isinstance(e, NotImplementedError):
                raise _NotDone(_not_done(self.impl, "forward", e)) from e
            raise _UserFailure(e, "forward") from e
        torch = self.torch
        if not isinstance(o, torch.Tensor):
            raise _Wrong(f"returned a {type(o).__module__}.{type(o).__name__}, not a tensor"
                         + (" (forward should return o alone)" if isinstance(o, (tuple, list)) else ""))
        if tuple(o.shape) != self.in_shape:
            raise _Wrong(f"returned shape {tuple(o.shape)}, expected {self.in_shape}")
        if o.dtype != self.prob.dtype:
            raise _Wrong(f"returned dtype {str(o.dtype).replace('torch.', '')}, expected "
                         f"{str(self.prob.dtype).replace('torch.', '')}")
        if o.device != q.device:
            raise _Wrong(f"returned a tensor on {o.device}, expected {q.device}")
        if q.requires_grad and torch.is_grad_enabled() and not o.requires_grad:
            raise _Wrong("returned a tensor that does not require grad: backward cannot reach q, k, v "
                         "(computed under torch.no_grad, or detached?)")
        return o

    def backward(self, o, dout):
        try:
            o.backward(dout)
        except Exception as e:
            if is_oom(e):
                raise
            if isinstance(e, NotImplementedError):
                raise _NotDone(_not_done(self.impl, "backward", e)) from e
            raise _UserFailure(e, "backward") from e

    def kernels_done(self):
        """Waits for the device; an error of the implementation's kernels shows here."""
        try:
            self._sync()
        except Exception as e:
            if is_oom(e):
                raise
            raise _UserFailure(e, "kernels") from e

    def check(self):
        """The correctness gate: one call with gradients (when a pass needs them) against the
        float64 reference. Returns the first call's forward ms (compiles in it)."""
        torch, prob, cell = self.torch, self.prob, self.out
        (q, k, v), dout = self.leaves(self.grad)
        self._sync()
        start = time.perf_counter()
        with contextlib.nullcontext() if self.grad else torch.no_grad():
            o = self.call(q, k, v)
        self.kernels_done()
        first_ms = 1000.0 * (time.perf_counter() - start)
        if self.grad:
            self.backward(o, dout)
            self.kernels_done()
            for name, t in zip("qkv", (q, k, v)):
                if t.grad is None:
                    raise _Wrong(f"backward gave no gradient for {name}")
                if tuple(t.grad.shape) != self.in_shape:
                    raise _Wrong(f"the gradient of {name} has shape {tuple(t.grad.shape)}, expected {self.in_shape}")
        ref = prob.reference(self.grad)
        shape4 = prob.shape
        cell["tolerance"] = tol = TOLERANCE[prob.p["dtype"]]
        got = [o.detach()] + ([q.grad, k.grad, v.grad] if self.grad else [])
        finite = all(bool(torch.isfinite(t).all().item()) for t in got)
        errs = [_rel_err(prob.pick(t.reshape(shape4)), r) for t, r in zip(got, ref)]
        del o, got, q, k, v
        cell["err_out"] = errs[0]
        if self.grad:
            cell["err_dq"], cell["err_dk"], cell["err_dv"] = errs[1:]
            cell["err_grad"] = max(errs[1:])
        if not finite or not all(e <= tol for e in errs):  # NaN compares false: fails
            parts = [f"O {errs[0]:.1e}"]
            if self.grad:
                parts += [f"dQ {errs[1]:.1e}", f"dK {errs[2]:.1e}", f"dV {errs[3]:.1e}"]
            msg = f"wrong result: relative error {', '.join(parts)} (tolerance {tol:.0e}"
            msg += ", non-finite values)" if not finite else ")"
            if finite and prob.p["dtype"] == "fp32" and all(e <= COURSE_FP32_TOLERANCE for e in errs):
                msg += "; within the course's 1e-2: TF32 matmuls?"
            raise _Wrong(msg)
        return first_ms

    def measure(self):
        """The gate (when asked), then warm-up and measured steps as the C++ measure()."""
        torch, spec, cell = self.torch, self.spec, self.out
        warmup, steps = int(spec.get("warmup", 0)), int(spec.get("steps", 0))
        first_ms = self.check() if spec.get("check", True) else None
        if self.cuda:  # what the gate left cached goes back: its blocks would fragment the steps'
            gc.collect()
            torch.cuda.empty_cache()
        (q, k, v), dout = self.leaves(self.grad)
        clock = Clock(self.cuda)
        fwd, bwd, total = [], [], []
        before_backward = 0
        # See Note [capture ranges]: each cell's warm-up and measured steps, as the C++ cells'.
        ranges = StepRanges(self.prob.device, spec.get("cuda_profiler_range"))
        try:
            for i in range(warmup + steps):
                with ranges.step(i, i < warmup):
                    for t in (q, k, v):
                        t.grad = None
                    if i == warmup and self.cuda:
                        torch.cuda.reset_peak_memory_stats()
                    first = first_ms is None and i == 0
                    if first:  # the cell's first call: its compile, apart
                        self._sync()
                        start = time.perf_counter()
                    clock.mark(0)
                    with contextlib.nullcontext() if self.grad else torch.no_grad():
                        o = self.call(q, k, v)
                    clock.mark(1)
                    if first:
                        self.kernels_done()
                        first_ms = 1000.0 * (time.perf_counter() - start)
                    allocated = torch.cuda.memory_allocated() if self.cuda else 0
                    if self.grad:
                        self.backward(o, dout)
                    clock.mark(2)
                    try:
                        clock.wait()
                    except Exception as e:
                        if is_oom(e):
                            raise
                        raise _UserFailure(e, "kernels") from e
                    del o
                    if i < warmup:
                        continue
                    fwd.append(clock.ms(0, 1))
                    bwd.append(clock.ms(1, 2))
                    total.append(clock.ms(0, 2))
                    before_backward = max(before_backward, allocated)
        finally:
            ranges.finish()
        cell["first_call_ms"] = first_ms or 0.0
        if self.cuda:
            cell["memory_before_backward"] = int(before_backward)
            cell["peak_memory"] = int(torch.cuda.max_memory_allocated()) if steps > 0 else 0
        cell["forward_ms"], cell["forward_mean_ms"], cell["forward_std_ms"] = _stats(fwd)
        if self.grad:
            cell["backward_ms"], cell["backward_mean_ms"], cell["backward_std_ms"] = _stats(bwd)
            (cell["forward_backward_ms"], cell["forward_backward_mean_ms"],
             cell["forward_backward_std_ms"]) = _stats(total)


# ---- the command --------------------------------------------------------------------------------

def _release(cuda):
    gc.collect()
    if cuda:
        try:
            import torch
            torch.cuda.empty_cache()
        except Exception:
            pass  # a GPU in an error state: the cells say so


def _stderr_traceback(exc, what):
    print(f"[attention] {what}:", file=sys.stderr)
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


def run_cell(impl, prob, spec, grad):
    """One cell, whatever happens in it (but a failure of the runner itself)."""
    cell = Cell(impl, prob, spec, grad)
    try:
        cell.measure()
        return cell.out
    except _Wrong as e:
        out = _fresh(cell.out, "failed", str(e))
    except _NotDone as e:
        out = _fresh(cell.out, "unsupported", str(e))
    except _UserFailure as e:
        exc = e.exc
        if e.phase == "kernels":  # found at a synchronize: torch's line says nothing
            error = f"{_one_line(exc)} (reported after {impl.name} ran its kernels)"
        else:
            error = _user_error(exc)
        out = _fresh(cell.out, "failed", error)
        if impl.user:
            out["traceback"] = user_traceback(exc)
        else:
            _stderr_traceback(exc, f"{impl.name} failed")
        if prob.device.type == "cuda" and _sticky_cuda(exc):
            out["sticky"] = _one_line(exc)
    except Exception as e:
        if is_oom(e):
            out = _fresh(cell.out, "oom", _oom_line(e))
        elif prob.device.type == "cuda" and _sticky_cuda(e):
            # an error of the implementation's kernels, reported by the runner's next CUDA call
            out = _fresh(cell.out, "failed", f"{_one_line(e)} (reported after {impl.name} ran its kernels)")
            out["sticky"] = _one_line(e)
        else:
            raise
    return out


def _fresh(measured, status, error):
    """A cell that did not finish: its status and error, the gate's errors kept (a wrong
    result says them), no timings."""
    cell = _blank_cell()
    for k in ("err_out", "err_dq", "err_dk", "err_dv", "err_grad", "tolerance"):
        cell[k] = measured[k]
    cell["status"], cell["error"] = status, error
    return cell


def run(spec):
    import torch

    device = torch.device(spec.get("device", "cpu"))
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise UserError("setup", f"device {device} asked for, but this Python's torch {torch.__version__} "
                                     "sees no GPU")
        if device.index is not None:
            torch.cuda.set_device(device)
    names = list(spec.get("impls", []))
    problems = list(spec.get("problems", []))
    passes = set(spec.get("passes", ["forward"]))
    grad = "backward" in passes or "forward-backward" in passes
    seed = int(spec.get("seed", 0))

    impls, adapters = resolve(names, spec)
    _allow_recompiles(problems)  # the naive one's and any torch.compile in the user's code
    emit("ready", impls={i.name: i.ready() for i in impls},
         edition=adapters.edition() if adapters is not None else "",
         where=adapters.where() if adapters is not None else "")

    cuda = device.type == "cuda"
    host_available = _available_bytes() if device.type == "cpu" else 0
    broken = ""  # set once a cell's kernels left the GPU unusable
    for index, p in enumerate(problems):
        prob, input_failure = None, None
        if not broken and any(i.status == "ok" for i in impls):
            why = cpu_memory_problem(p, False, host_available) if device.type == "cpu" else ""
            if why:
                input_failure = ("oom", why)
            else:
                try:
                    prob = Problem(p, seed + index + 1, device)
                except Exception as e:
                    if is_oom(e):
                        input_failure = ("oom", f"inputs: {_oom_line(e)}")
                    elif cuda and _sticky_cuda(e):
                        broken = broken or f"the GPU is in an error state: {_one_line(e)}"
                    else:
                        raise
                    _release(cuda)
        for impl in impls:
            cell = _blank_cell()
            if impl.status != "ok":
                status = {"not done yet": "unsupported"}.get(impl.status, impl.status)
                cell.update(status=status, error=impl.message, traceback=impl.tb)
            elif broken:
                cell.update(status="failed", error=f"not run: {broken}")
            elif input_failure is not None:
                cell.update(status=input_failure[0], error=input_failure[1])
            elif device.type == "cpu" and (why := cpu_memory_problem(p, impl.name == "torch-compile",
                                                                       host_available)):
                cell.update(status="oom", error=why)
            else:
                cell = run_cell(impl, prob, spec, grad)
                if sticky := cell.pop("sticky", ""):
                    broken = f"the GPU is in an error state after {impl.name} on problem {index} ({sticky})"
                if cell["status"] != "ok":
                    _release(cuda)
            emit("cell", problem=index, impl=impl.name, cell=_clean(cell))
        del prob
        _release(cuda)
