"""The distributed lab's Python strategies: PyTorch's DistributedDataParallel (torch-ddp) and the
user's own data-parallel classes from --code (yours-individual, yours-bucketed: the 2025
assignment's adapters; yours-ddp, yours-fsdp: the 2026 assignment's), one rank of a world the
local launcher started (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set as torchrun
sets them). It speaks fsdp2's lines (distributed/worker_lines.h):

    {"event":"ready", "rank", "world_size", "backend", "device", "what", "edition", "where",
     "model", "notes"}
    {"event":"check", "rank":0, "passed", "max_diff", "tolerance", "steps", "message"}   rank 0 only
    {"event":"progress", "rank", "done", "total", "what"}                                one per step
    {"event":"result", "rank", "experiment":"ddp", "row":{...}}   one per step, after the last step

The check is the course's: a small model of the same family, each rank's copy seeded with
seed + rank (a wrapper that does not broadcast rank 0's weights is caught), trained for a few
steps with SGD on each rank's rows against one unwrapped copy trained on the whole global batch.
A failed check ends the point without timing (every rank exits 0).

The rows are fsdp2's (the lab's DdpStepRow) plus "comm_replayed_ms". Their communication columns
come from wrapping torch.distributed's collectives while the steps run
(see Note [counting the user's collectives]); they are sent after the last step, once the last
measured step's collectives have been replayed alone
(see Note [hidden communication, estimated])."""

import math
import os
import statistics
import sys
import threading
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import protocol
from .adapters import Adapters, NotDoneYet, call_user, describe
from .lm import StepClock, TransformerLM, join_world
from .protocol import UserError, emit
from .rank_trace import RankTrace
from .ranges import StepRanges

STRATEGIES = ("torch-ddp", "yours-individual", "yours-bucketed", "yours-ddp", "yours-fsdp")

# yours-*: the adapter that wraps the module, the one run after backward, the one run at a step's
# start (optional), the one that gathers the full weights (yours-fsdp's check).
ADAPTERS = {
    "yours-individual": ("get_ddp_individual_parameters", "ddp_individual_parameters_on_after_backward", None, None),
    "yours-bucketed": ("get_ddp_bucketed", "ddp_bucketed_on_after_backward", "ddp_bucketed_on_train_batch_start", None),
    "yours-ddp": ("get_ddp", "ddp_on_after_backward", None, None),
    "yours-fsdp": ("get_fsdp", "fsdp_on_after_backward", None, "fsdp_gather_full_params"),
}
EDITION = {"yours-individual": "2025", "yours-bucketed": "2025", "yours-ddp": "2026", "yours-fsdp": "2026"}

# The check: the course's test, on a small model of the point's family.
CHECK_MODEL = {"vocab_size": 128, "context_length": 16, "d_model": 32, "num_layers": 2, "num_heads": 2, "d_ff": 64}
CHECK_STEPS = 3
CHECK_ROWS = 2         # per rank
CHECK_LR = 0.1
CHECK_BUCKET_MB = 0.02  # at most: several buckets on the small model (about 0.11 MB of weights)
ATOL, RTOL = 1e-5, 1e-4
TOLERANCE = "atol 1e-05, rtol 1e-04"
_LARGEST = sys.float_info.max  # stands for inf and NaN in lines (JSON has neither)


# ---- The user's classes, and PyTorch's DDP, behind one interface ----

def _params_named(wrapped):
    """The wrapped model's (name, parameter) pairs: an nn.Module's own, else its `.module`'s."""
    if isinstance(wrapped, nn.Module):
        return list(wrapped.named_parameters())
    inner = getattr(wrapped, "module", None)
    if isinstance(inner, nn.Module):
        return list(inner.named_parameters())
    if callable(getattr(wrapped, "named_parameters", None)):
        return list(wrapped.named_parameters())
    return None


class Strategy:
    """wrap(module, compute_dtype, bucket_mb) → the wrapped model; optimizer(...); the hooks
    (start, after_backward: no-ops where there are none); full_params(wrapped) for the check."""

    what = ""
    edition = ""
    where = ""

    def __init__(self):
        self.notes = []

    def start(self, wrapped, optimizer, phase):
        pass

    def after_backward(self, wrapped, optimizer, phase):
        pass

    def after_what(self):
        """The after-backward hook, for messages: 'ddp_on_after_backward()', or 'backward'."""
        return "backward"

    def full_params_what(self):
        return "the wrapped model's parameters"


class TorchDdp(Strategy):
    what = describe(torch.nn.parallel.DistributedDataParallel)

    def __init__(self, device):
        super().__init__()
        self.device = device
        self.where = f"torch {torch.__version__}"
        self.notes.append("DDP's all-reduces run through PyTorch's default allreduce_hook "
                          "(ddp_comm_hooks.default_hooks, the same averaging as DDP's own), so that "
                          "they are counted; DDP waits for them inside backward: comm_wait_ms 0, "
                          "comm_hidden_ms not measured")
        self.notes.append("broadcast_buffers=False: the model's buffers (RoPE tables) are constants")

    def wrap(self, module, compute_dtype, bucket_mb, phase):
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        from torch.nn.parallel import DistributedDataParallel
        ids = [self.device.index] if self.device.type == "cuda" else None
        wrapped = DistributedDataParallel(module, device_ids=ids, bucket_cap_mb=bucket_mb, broadcast_buffers=False)
        wrapped.register_comm_hook(None, allreduce_hook)
        return wrapped

    def optimizer(self, params, cls, sharded, phase, **kwargs):
        if sharded:
            from torch.distributed.optim import ZeroRedundancyOptimizer
            return ZeroRedundancyOptimizer(params, optimizer_class=cls, **kwargs)
        return cls(params, **kwargs)

    def full_params(self, wrapped, phase):
        return list(wrapped.module.named_parameters())


class Yours(Strategy):
    """The user's class, found by Adapters: a checkout's or a module's adapter functions, or
    `module:Name` (the class itself)."""

    def __init__(self, strategy, adapters):
        super().__init__()
        self.strategy = strategy
        self.a = adapters
        self.getter, self.after_name, self.start_name, self.gather_name = ADAPTERS[strategy]
        self.edition = adapters.edition()
        self.where = adapters.where()
        self.what = describe(adapters.obj) if adapters.form == "callable" else ""
        self._after = None   # (callable(wrapped, optimizer, phase), what it is, for messages)
        self._start = None
        self._gather = None
        self._resolved = False
        if adapters.form != "callable" and not adapters.defines(self.getter):
            raise self._missing(self.getter, "wrap")

    def _missing(self, name, phase):
        other = ("the 2025 edition's: yours-individual, yours-bucketed" if EDITION[self.strategy] == "2026"
                 else "the 2026 edition's: yours-ddp, yours-fsdp")
        hint = f" (its adapters are {other})" if self.edition and self.edition not in (EDITION[self.strategy], "both") else ""
        return NotDoneYet(phase, f"not done yet: {self.where} has no {name}(){hint}")

    def _call(self, name, *args, phase):
        return self.a.call(name, *args, phase=phase)

    def wrap(self, module, compute_dtype, bucket_mb, phase):
        extra = {"yours-bucketed": (bucket_mb,), "yours-fsdp": (compute_dtype,)}.get(self.strategy, ())
        if self.a.form == "callable":
            wrapped = call_user(self.a.obj, module, *extra, phase=phase, what=f"{self.a.obj_name}(module"
                                + "".join(f", {e}" for e in extra) + ")")
            made_by = self.a.obj_name
        else:
            wrapped = self._call(self.getter, module, *extra, phase=phase)
            made_by = f"{self.getter}()"
        if not callable(wrapped) or _params_named(wrapped) is None:
            raise UserError(phase, f"{made_by} returned a {type(wrapped).__module__}.{type(wrapped).__name__}: "
                                   "expected a torch.nn.Module that wraps the model (callable, with parameters())")
        if not self.what:
            self.what = describe(wrapped)
        if not self._resolved:
            self._resolve(wrapped)
        return wrapped

    def _resolve(self, wrapped):
        """The hooks: a checkout's or a module's adapters by name (the after-backward one and
        yours-fsdp's gather required, the start one optional); for `module:Name`, the module's
        adapter-named function if it defines one, else the object's method."""
        self._resolved = True
        a = self.a
        callable_form = a.form == "callable"
        fn = a.optional(self.after_name)
        if fn is not None:
            self._after = (lambda w, o, phase, n=self.after_name: self._call(n, w, o, phase=phase),
                           f"{self.after_name}()")
        elif callable_form and callable(getattr(wrapped, "finish_gradient_synchronization", None)):
            self._after = (lambda w, o, phase: call_user(w.finish_gradient_synchronization, phase=phase,
                                                  what=f"{type(w).__name__}.finish_gradient_synchronization()"),
                           f"{type(wrapped).__name__}.finish_gradient_synchronization()")
        elif callable_form:
            self.notes.append(f"no hook after backward: {a.obj_name.rpartition(':')[0]} defines no "
                              f"{self.after_name}() and {type(wrapped).__name__} has no "
                              "finish_gradient_synchronization(); gradients must be averaged by backward's end")
        else:
            raise self._missing(self.after_name, "wrap")
        if self.start_name and a.optional(self.start_name) is not None:
            self._start = (lambda w, o, phase, n=self.start_name: self._call(n, w, o, phase=phase),
                           f"{self.start_name}()")
        if self.gather_name:
            if a.optional(self.gather_name) is not None:
                self._gather = (lambda w, n=self.gather_name: self._call(n, w, phase="check"), f"{self.gather_name}()")
            elif callable_form and callable(getattr(wrapped, "gather_full_params", None)):
                self._gather = (lambda w: call_user(w.gather_full_params, phase="check",
                                                    what=f"{type(w).__name__}.gather_full_params()"),
                                f"{type(wrapped).__name__}.gather_full_params()")
            else:
                raise NotDoneYet("wrap", f"not done yet: yours-fsdp's check needs {self.gather_name}(model) in "
                                         f"{self.where}" + (f" (or a gather_full_params() method of "
                                                            f"{type(wrapped).__name__})" if callable_form else ""))
        hooks = [h[1] for h in (self._start, self._after, self._gather) if h]
        if hooks:
            self.notes.append("hooks: " + ", ".join(hooks))

    def after_what(self):
        return self._after[1] if self._after else "backward"

    def full_params_what(self):
        return self._gather[1] if self._gather else "the wrapped model's parameters"

    def start(self, wrapped, optimizer, phase):
        if self._start:
            self._start[0](wrapped, optimizer, phase)

    def after_backward(self, wrapped, optimizer, phase):
        if self._after:
            self._after[0](wrapped, optimizer, phase)

    def optimizer(self, params, cls, sharded, phase, **kwargs):
        if not sharded:
            return cls(params, **kwargs)
        if not self.a.defines("get_sharded_optimizer"):
            raise NotDoneYet(phase, f"not done yet: {self.where} has no get_sharded_optimizer() (shard_optimizer)")
        opt = self.a.call("get_sharded_optimizer", params, cls, phase=phase, **kwargs)
        if not callable(getattr(opt, "step", None)) or not callable(getattr(opt, "zero_grad", None)):
            raise UserError(phase, f"get_sharded_optimizer() returned a {type(opt).__module__}.{type(opt).__name__}, "
                                   "not an optimizer (no step() and zero_grad())")
        return opt

    def full_params(self, wrapped, phase):
        if self._gather:
            return self._gather[0](wrapped)
        return _params_named(wrapped)


# ---- The model ----

def _model_factory(spec, notes):
    """(make(config, device, seed) → nn.Module, what it is): the checkout's BasicsTransformerLM
    when --code is a checkout with one, else lm.py's TransformerLM."""
    code = spec.get("code", "") or ""
    ddp = spec["ddp"]
    naive = ddp.get("attention", "naive") == "naive"
    if code and os.path.isdir(code):
        import importlib.util
        from .code import _checkout_paths, build_model, find
        for p in reversed(_checkout_paths(os.path.abspath(code))):
            if p not in sys.path:
                sys.path.insert(0, p)
        if importlib.util.find_spec("cs336_basics") is not None:
            found = find(code)

            def make(config, device, every=0):
                model = build_model(found, {**config, "rope_theta": 10000.0})
                return model.to(device)
            if str(ddp.get("checkpoint", "none")) != "none":
                notes.append("checkpoint: not applied to the checkout's model")
            return make, found.model_name
        notes.append(f"{code} has no cs336_basics: the model is TrainScope's TransformerLM")

    def make(config, device, every=0):
        c = config
        return TransformerLM(c["vocab_size"], c["context_length"], c["d_model"], c["d_ff"], c["num_layers"],
                             c["num_heads"], device, every, naive=naive)
    return make, describe(TransformerLM)


def _checkpoint_every(ddp, layers):
    checkpoint = str(ddp.get("checkpoint", "none"))
    if checkpoint == "none":
        return 0
    if checkpoint == "sqrt":
        return max(1, math.ceil(math.sqrt(layers)))
    if checkpoint.isdigit():
        return min(int(checkpoint), layers)
    raise UserError("runner", f"the Python strategies checkpoint every k blocks or sqrt, not '{checkpoint}'")


def _loss(wrapped, inputs, targets, phase):
    logits = call_user(wrapped, inputs, phase=phase, what="the wrapped model's forward")
    if not torch.is_tensor(logits) or logits.dim() != 3 or logits.shape[:2] != inputs.shape:
        shown = tuple(logits.shape) if torch.is_tensor(logits) else type(logits).__name__
        raise UserError(phase, f"the wrapped model returned {shown}: expected logits [batch, context, vocab] "
                               f"for inputs {tuple(inputs.shape)}")
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def _check_gradients(named, after, phase):
    """After the after-backward hook: every gradient on its parameter's device, of its shape and
    dtype (the optimizer assumes so)."""
    for name, p in named:
        g = p.grad
        if g is None:
            continue
        for what, got, want in (("device", g.device, p.device), ("shape", tuple(g.shape), tuple(p.shape)),
                                ("dtype", g.dtype, p.dtype)):
            if got != want:
                raise UserError(phase, f"after {after}, the gradient of {name} has {what} {got}, its parameter "
                                       f"{want}: gradients must match their parameters")


# Note [counting the user's collectives]:
# While the steps run, torch.distributed's collectives are wrapped: the functions of
# torch.distributed and torch.distributed.distributed_c10d, and any other module's global that
# holds one of them (`from torch.distributed import all_reduce` in the user's code). Each call is
# counted with its bytes (all-reduce, broadcast: the tensor; all-gather: the gathered output;
# reduce-scatter: the input) and the phase of the step it was launched in. Broadcasts and
# all-gathers launched inside optimizer.step() are the sharded optimizer's (broadcast_bytes);
# every other collective counts in `collectives` and comm_bytes, and those launched during
# backward in launched_before_sync. PyTorch's DDP all-reduces in C++; torch-ddp's go through
# its default allreduce_hook (Python, dist.all_reduce) and are counted so. Collectives the
# user's code makes through other paths (torch.distributed's private functions, c10d's
# ProcessGroup objects directly) are not seen.

_COLLECTIVES = {  # name → the argument whose bytes count
    "all_reduce": "tensor", "broadcast": "tensor", "all_gather_into_tensor": "output_tensor",
    "all_gather": "tensor_list", "reduce_scatter_tensor": "input", "reduce_scatter": "input_list",
    "all_reduce_coalesced": "tensors",
}
_GATHERS = ("broadcast", "all_gather_into_tensor", "all_gather")


def _nbytes(x):
    if torch.is_tensor(x):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(t) for t in x)
    return 0


class _TensorSpec:
    __slots__ = ("shape", "dtype", "device")

    def __init__(self, t):
        self.shape, self.dtype, self.device = tuple(t.shape), t.dtype, t.device

    def nbytes(self):
        return math.prod(self.shape) * torch.empty((), dtype=self.dtype).element_size()


def _template(value):
    if torch.is_tensor(value):
        return _TensorSpec(value)
    if isinstance(value, (list, tuple)) and value and all(torch.is_tensor(t) for t in value):
        return [_TensorSpec(t) for t in value]
    return value


def _specs(template):
    for v in template.values():
        for s in (v if isinstance(v, list) else [v]):
            if isinstance(s, _TensorSpec):
                yield s


class _Call:
    """One collective the step launched: its function, bytes, the step's phase then, whether it
    blocked (async_op False), and its arguments with tensors as shapes (None: unreadable)."""
    __slots__ = ("name", "nbytes", "phase", "blocking", "template", "original")

    def __init__(self, name, nbytes, phase, blocking, template, original):
        self.name, self.nbytes, self.phase, self.blocking = name, nbytes, phase, blocking
        self.template, self.original = template, original


class Collectives:
    def __init__(self):
        self.phase = None     # the step's phase while recording; None: not recorded
        self.records = []     # this step's _Calls
        self._saved = []
        self._local = threading.local()

    def _wrapper(self, name, original):
        import inspect
        try:
            signature = inspect.signature(original)
        except (TypeError, ValueError):
            signature = None
        key = _COLLECTIVES[name]
        rec = self

        def counted(*args, **kwargs):
            phase = rec.phase
            if phase is not None and not getattr(rec._local, "inside", False):
                template, nbytes, blocking = None, 0, True
                try:
                    bound = signature.bind(*args, **kwargs) if signature else None
                except TypeError:
                    bound = None  # the call itself will say what is wrong
                if bound is not None:
                    nbytes = _nbytes(bound.arguments.get(key))
                    blocking = not bound.arguments.get("async_op", False)
                    template = {k: _template(v) for k, v in bound.arguments.items()}
                rec.records.append(_Call(name, nbytes, phase, blocking, template, original))
            rec._local.inside = True
            try:
                return original(*args, **kwargs)
            finally:
                rec._local.inside = False

        counted.__wrapped__ = original
        counted.__name__ = getattr(original, "__name__", name)
        return counted

    def install(self):
        import torch.distributed as dist
        import torch.distributed.distributed_c10d as c10d
        replaced = {}  # id(original) → (original, its wrapper)
        for name in _COLLECTIVES:
            for mod in (dist, c10d):
                original = getattr(mod, name, None)
                if original is None:
                    continue
                if id(original) not in replaced:
                    replaced[id(original)] = (original, self._wrapper(name, original))
                self._saved.append((mod, name, original))
                setattr(mod, name, replaced[id(original)][1])
        # The user's modules' own references to them (`from torch.distributed import all_reduce`).
        for mod in list(sys.modules.values()):
            mname = getattr(mod, "__name__", "") or ""
            if mod is None or mname.startswith(("torch", "trainscope_runner")) or mod in (dist, c10d):
                continue
            try:
                items = list(vars(mod).items())
            except TypeError:
                continue
            for attr, value in items:
                if callable(value) and id(value) in replaced and replaced[id(value)][0] is value:
                    self._saved.append((mod, attr, value))
                    setattr(mod, attr, replaced[id(value)][1])

    def uninstall(self):
        for mod, name, original in reversed(self._saved):
            setattr(mod, name, original)
        self._saved = []


def _summarize(records):
    """(collectives, launched_before_sync, comm_bytes, broadcast_bytes) of one step's records."""
    collectives = before = comm = broadcast = 0
    for c in records:
        if c.phase == "optimizer" and c.name in _GATHERS:
            broadcast += c.nbytes
            continue
        collectives += 1
        comm += c.nbytes
        before += c.phase == "backward"
    return collectives, before, comm, broadcast


# Note [hidden communication, estimated]:
# After the last step, the last measured step's gradient collectives (those launched during
# backward and in the after-backward hook) run again alone, one after another, synchronously, on
# buffers of the same sizes and dtypes (the same op, group and source), each timed, three times
# (the median of each). Their sum is comm_replayed_ms: the gradients' communication with nothing
# to hide behind. Of it, what ran while backward did is at most the part launched asynchronously
# during backward or in the hook, less what the hook waited (comm_wait_ms): comm_hidden_ms =
# max(0, replayed(async in backward, and the hook's) − comm_wait_ms). Collectives that blocked
# inside backward (async_op=False in a gradient hook) hid nothing: they are in backward_ms. An
# estimate: the replay runs on an idle device and link, the step's did not.

def _replay(records, device, cuda, dist):
    """Replays `records` (synchronously, each timed); each one's median of 3 runs in ms, or
    None when the ranks did not record the same collectives or one cannot be replayed."""
    replayable = all(c.template is not None for c in records)
    agree = torch.tensor([len(records), -len(records), 0 if replayable else 1], dtype=torch.int64, device=device)
    dist.all_reduce(agree, op=dist.ReduceOp.MAX)
    if agree[0].item() != -agree[1].item() or agree[2].item() != 0:
        return None
    if not records:
        return []
    align = 256

    def rounded(n):
        return (n + align - 1) // align * align

    sizes = {}
    for c in records:
        need = {}
        for s in _specs(c.template):
            need[s.device] = need.get(s.device, 0) + rounded(s.nbytes())
        for d, n in need.items():
            sizes[d] = max(sizes.get(d, 0), n)
    pools = {d: torch.zeros(n + align, dtype=torch.uint8, device=d) for d, n in sizes.items()}
    calls = []
    for c in records:
        offsets = {}

        def view(s):
            off = offsets.get(s.device, 0)
            n = s.nbytes()
            offsets[s.device] = off + rounded(n)
            return pools[s.device][off:off + n].view(s.dtype).view(s.shape)

        kwargs = {}
        for k, v in c.template.items():
            if isinstance(v, _TensorSpec):
                kwargs[k] = view(v)
            elif isinstance(v, list) and v and isinstance(v[0], _TensorSpec):
                kwargs[k] = [view(s) for s in v]
            else:
                kwargs[k] = v
        if "async_op" in kwargs:
            kwargs["async_op"] = False
        calls.append((c.original, kwargs))
    runs = []
    for _ in range(3):
        if cuda:
            torch.cuda.synchronize(device)
        dist.barrier()
        times = []
        for original, kwargs in calls:
            if cuda:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
            t0 = time.perf_counter()
            work = original(**kwargs)
            if work is not None and hasattr(work, "wait"):
                work.wait()
            if cuda:
                b.record()
                times.append((a, b))
            else:
                times.append((time.perf_counter() - t0) * 1000.0)
        if cuda:
            torch.cuda.synchronize(device)
            times = [a.elapsed_time(b) for a, b in times]
        runs.append(times)
    return [statistics.median(r[i] for r in runs) for i in range(len(calls))]


# ---- Sizes ----

def _local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def _local_bytes(tensors):
    return sum(_local(t).numel() * _local(t).element_size() for t in tensors)


def _optimizer_state_bytes(optimizer):
    """The tensors in optimizer.state and in that of every torch.optim.Optimizer the optimizer
    holds as an attribute (a sharded optimizer's local one), counted once per storage."""
    storages = {}
    seen = set()

    def add(t):
        t = _local(t)
        try:
            st = t.untyped_storage()
            key, n = (st.data_ptr(), str(t.device)), st.nbytes()
        except (RuntimeError, NotImplementedError):
            key, n = (id(t), str(t.device)), t.numel() * t.element_size()
        storages[key] = max(storages.get(key, 0), n)

    def visit(opt):
        if id(opt) in seen:
            return
        seen.add(id(opt))
        state = getattr(opt, "state", None)
        if isinstance(state, dict):
            for s in state.values():
                values = s.values() if isinstance(s, dict) else [s]
                for t in values:
                    if torch.is_tensor(t):
                        add(t)
        try:
            attrs = list(vars(opt).values())
        except TypeError:
            attrs = []
        for v in attrs:
            for o in (v if isinstance(v, (list, tuple)) else v.values() if isinstance(v, dict) else [v]):
                if isinstance(o, torch.optim.Optimizer):
                    visit(o)

    visit(optimizer)
    return sum(storages.values())


# ---- The check ----

def _strip(name):
    for prefix in ("module.", "_orig_mod.", "_fsdp_wrapped_module."):
        while name.startswith(prefix):
            name = name[len(prefix):]
    return name


def _aligned(got, reference, source, phase):
    """`got` (a dict name → tensor, a list of (name, tensor) or a list of tensors in parameters()
    order) as a list of tensors in the reference's order."""
    names = [n for n, _ in reference]
    if isinstance(got, dict) or (isinstance(got, (list, tuple)) and got and isinstance(got[0], tuple)):
        items = list(got.items()) if isinstance(got, dict) else list(got)
        by_name = {_strip(str(k)): v for k, v in items}
        if all(n in by_name for n in names):
            return [by_name[n] for n in names]
        if isinstance(got, dict) and source.endswith("()"):
            missing = [n for n in names if n not in by_name]
            raise UserError(phase, f"{source} returned no tensor for {missing[0]}"
                                   + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                                   + f"; its names: {', '.join(list(by_name)[:4])}{', ...' if len(by_name) > 4 else ''}")
        tensors = [v for _, v in items]
    elif isinstance(got, (list, tuple)):
        tensors = list(got)
    else:
        raise UserError(phase, f"{source} returned a {type(got).__name__}: expected a dict of parameter "
                               "name → full tensor")
    if len(tensors) != len(names):
        raise UserError(phase, f"{source} gave {len(tensors)} parameters, the model has {len(names)}")
    return tensors


def _full(t, ref, name, source, phase):
    if hasattr(t, "full_tensor"):
        t = t.full_tensor()
    if not torch.is_tensor(t):
        raise UserError(phase, f"{source}: {name} is a {type(t).__name__}, not a tensor")
    if tuple(t.shape) != tuple(ref.shape):
        raise UserError(phase, f"{source}: {name} has shape {tuple(t.shape)}, the model's {tuple(ref.shape)} "
                               "(the full parameter, gathered, is expected)")
    return t.detach().to(ref.device).float()


def _compare(tensors, reference):
    """(largest |difference|, the name with it, whether any element is out of tolerance)."""
    worst, worst_name, bad = 0.0, "", False
    for t, (name, ref) in zip(tensors, reference):
        r = ref.detach().float()
        d = (t - r).abs()
        if d.numel() == 0:
            continue
        out = bool((~(d <= ATOL + RTOL * r.abs())).any())
        m = d.max().item()
        if not math.isfinite(m) or bool(torch.isnan(d).any()):
            m = _LARGEST
        bad |= out
        if m > worst or not worst_name:
            worst, worst_name = m, name
    return worst, worst_name, bad


def _gather_verdicts(dist, world, mine):
    verdicts = [None] * world
    dist.all_gather_object(verdicts, mine)
    return verdicts


def _run_check(strategy, make, device, rank, world, seed, bucket_mb, sharded, dist, emit_ready):
    phase = "check"
    name_is_fsdp = getattr(strategy, "strategy", "") == "yours-fsdp"
    torch.manual_seed(seed)
    reference = make(CHECK_MODEL, device)
    torch.manual_seed(seed + rank)
    local = make(CHECK_MODEL, device)
    wrapped = strategy.wrap(local, None, min(bucket_mb, CHECK_BUCKET_MB), phase)
    emit_ready(wrapped)
    ref_named = list(reference.named_parameters())
    source = strategy.full_params_what()

    def full_now():
        got = strategy.full_params(wrapped, phase)
        tensors = _aligned(got, ref_named, source, phase)
        return [_full(t, r, n, source, phase) for t, (n, r) in zip(tensors, ref_named)]

    # Right after wrapping: every rank's weights are rank 0's (the reference is rank 0's copy).
    worst, name, bad = _compare(full_now(), ref_named)
    verdicts = _gather_verdicts(dist, world, (bad, worst, name, rank))
    if any(v[0] for v in verdicts):
        b = max((v for v in verdicts if v[0]), key=lambda v: v[1])
        return {"passed": False, "max_diff": b[1], "message":
                f"the ranks' weights differ after wrapping by {b[1]:.2g}: rank 0's weights must be broadcast "
                f"(rank {b[3]}'s {b[2]} differs from rank 0's)"}

    named = _params_named(wrapped)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=CHECK_LR)
    optimizer = strategy.optimizer([p for _, p in named], torch.optim.SGD, sharded, phase, lr=CHECK_LR)
    gen = torch.Generator().manual_seed(seed)  # the same global batches on every rank
    vocab, context = CHECK_MODEL["vocab_size"], CHECK_MODEL["context_length"]
    after = strategy.after_what()
    hint = "" if name_is_fsdp else None  # FSDP's gradients are shards: no hint from them
    for _ in range(CHECK_STEPS):
        x = torch.randint(vocab, (CHECK_ROWS * world, context), generator=gen).to(device)
        y = torch.randint(vocab, (CHECK_ROWS * world, context), generator=gen).to(device)
        ref_opt.zero_grad(set_to_none=True)
        logits = reference(x)
        F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1)).backward()
        ref_opt.step()

        rows = slice(rank * CHECK_ROWS, (rank + 1) * CHECK_ROWS)
        strategy.start(wrapped, optimizer, phase)
        call_user(optimizer.zero_grad, phase=phase, what=f"{describe(optimizer)}.zero_grad()")
        loss = _loss(wrapped, x[rows], y[rows], phase)
        call_user(loss.backward, phase=phase, what="backward (with the wrapper's gradient hooks)")
        strategy.after_backward(wrapped, optimizer, phase)
        _check_gradients(named, after, phase)
        if hint is None:
            hint = _gradient_hint(named, ref_named, world, after)
        call_user(optimizer.step, phase=phase, what=f"{describe(optimizer)}.step()")

    worst, name, bad = _compare(full_now(), ref_named)
    verdicts = _gather_verdicts(dist, world, (bad, worst, name, rank))
    largest = max(verdicts, key=lambda v: v[1])
    if not any(v[0] for v in verdicts):
        return {"passed": True, "max_diff": largest[1], "message":
                f"parameters equal single-process training after {CHECK_STEPS} steps "
                f"(largest difference {largest[1]:.2g})"}
    b = max((v for v in verdicts if v[0]), key=lambda v: v[1])
    shown = "is not finite" if b[1] >= _LARGEST else f"differs by {b[1]:.2g}"
    hints = _gather_verdicts(dist, world, hint or "")
    hint = next((h for h in hints if h), "")
    return {"passed": False, "max_diff": b[1], "message":
            f"after {CHECK_STEPS} steps, rank {b[3]}'s {b[2]} {shown} from single-process training on the "
            f"whole batch ({TOLERANCE})" + (f"; {hint}" if hint else "")}


def _gradient_hint(named, ref_named, world, after):
    """After the first step's hook, what the gradients say (a wrapper whose parameters are the
    model's, whole): "" when they equal single-process training's, else what differs (summed
    rather than averaged, or the largest difference). None where they cannot be compared."""
    try:
        tensors = _aligned(named, ref_named, "the wrapped model's parameters", "check")
    except UserError:
        return None
    summed = averaged = True
    worst, worst_name = 0.0, ""
    for t, (name, ref) in zip(tensors, ref_named):
        if ref.grad is None:
            continue
        g = t.grad
        if g is None or tuple(g.shape) != tuple(ref.shape):
            return f"after {after}, the gradient of {name} is " + ("missing" if g is None else "not whole")
        g, r = g.detach().float(), ref.grad.detach().float()
        d = (g - r).abs()
        tol = ATOL + RTOL * r.abs()
        averaged &= bool((d <= tol).all())
        summed &= bool(((g - world * r).abs() <= world * tol).all())
        m = d.max().item() if d.numel() else 0.0
        if m > worst:
            worst, worst_name = m, name
    if averaged:
        return ""
    if summed and world > 1:
        return f"after {after} the gradients are the ranks' sum: divide by the world size ({world}) to average them"
    return (f"after {after} the gradients differ from single-process training's already at the first step "
            f"(largest: {worst_name}, by {worst:.2g})")


# ---- The run ----

def run(spec):
    rank = int(os.environ["RANK"])
    try:
        _run(spec, rank)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: B902 — the error line, then exit 3 without tearing down
        if isinstance(e, UserError):
            e.args = (f"rank {rank}: {e.args[0] if e.args else ''}",)
            err = e
        elif isinstance(e, KeyboardInterrupt):
            raise
        else:
            err = UserError("runner", f"rank {rank}: {type(e).__name__}: {e}", e)
        # protocol.fail's line, with this rank's number in it
        cause = err.cause
        at = protocol.where(cause) if cause is not None else ""
        emit("error", rank=rank, phase=err.phase, message=str(err) + (f" ({at})" if at else ""),
             traceback=protocol.user_traceback(cause) if cause is not None else "")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(3)


def _run(spec, rank):
    import torch.distributed as dist

    ddp = spec["ddp"]
    name = ddp.get("strategy", "")
    if name not in STRATEGIES:
        raise UserError("runner", f"the Python runner's ddp runs {', '.join(STRATEGIES)}, not '{name}'")
    backend = spec.get("backend", "gloo")
    _, world, device = join_world(backend)
    cuda = device.type == "cuda"

    _checkpoint_every(ddp, int(spec["model"]["num_layers"]))  # a bad value says so before anything runs
    notes = []
    if name == "torch-ddp":
        strategy = TorchDdp(device)
    else:
        strategy = Yours(name, Adapters(spec.get("code", ""), phase="import"))
    make, model_name = _model_factory(spec, notes)
    sharded = bool(ddp.get("shard_optimizer", False))
    bucket_mb = float(ddp.get("bucket_mb", 25.0))
    seed = int(ddp.get("seed", 0))
    if ddp.get("param_dtype", "fp32") == "bf16" and name != "yours-fsdp":
        notes.append("param_dtype bf16: yours-fsdp's only (get_fsdp's compute_dtype); fp32 here")
    for key in ("fused_loss", "fused_kernels", "keep_attention", "compile"):
        if ddp.get(key):
            notes.append(f"{key}: TrainScope's or fsdp2's only; not applied")
    if name == "yours-bucketed":
        notes.append(f"the check's buckets: {min(bucket_mb, CHECK_BUCKET_MB):g} MB (several on its small model)")

    def emit_ready(wrapped):
        emit("ready", rank=rank, world_size=world, backend=backend,
             device=str(device), what=strategy.what,
             edition=strategy.edition, where=strategy.where, model=model_name, notes=notes + strategy.notes)

    # The check, in fp32 (no TF32 on the GPU).
    tf32 = torch.backends.cuda.matmul.allow_tf32
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
    try:
        verdict = _run_check(strategy, make, device, rank, world, seed, bucket_mb, sharded, dist, emit_ready)
    finally:
        if cuda:
            torch.backends.cuda.matmul.allow_tf32 = tf32
    if rank == 0:
        emit("check", rank=0, passed=verdict["passed"], max_diff=verdict["max_diff"], tolerance=TOLERANCE,
             steps=CHECK_STEPS, message=verdict["message"])
    if not verdict["passed"]:
        _leave(dist)

    _time(spec, strategy, make, device, cuda, rank, world, dist)
    _leave(dist)


def _leave(dist):
    # As fsdp2: meet once more, then leave without tearing the group down (Gloo's teardown can
    # abort a rank whose peer already closed its connections).
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _time(spec, strategy, make, device, cuda, rank, world, dist):
    ddp, m = spec["ddp"], spec["model"]
    config = {k: int(m[k]) for k in ("vocab_size", "context_length", "d_model", "num_layers", "num_heads", "d_ff")}
    b = int(ddp.get("batch_per_rank", 4))
    every = _checkpoint_every(ddp, config["num_layers"])
    seed = int(ddp.get("seed", 0))
    torch.manual_seed(seed)
    model = make(config, device, every)
    global_batch, vocab, context = b * world, config["vocab_size"], config["context_length"]
    inputs = torch.randint(vocab, (global_batch, context), device=device)[rank * b:(rank + 1) * b]
    targets = torch.randint(vocab, (global_batch, context), device=device)[rank * b:(rank + 1) * b]

    compute_dtype = torch.bfloat16 if ddp.get("param_dtype", "fp32") == "bf16" else None
    phase = "wrap"
    wrapped = strategy.wrap(model, compute_dtype, float(ddp.get("bucket_mb", 25.0)), phase)
    named = _params_named(wrapped)
    params = [p for _, p in named]
    lr = float(ddp.get("learning_rate", 1e-4))
    optimizer = strategy.optimizer(params, torch.optim.AdamW, bool(ddp.get("shard_optimizer", False)), phase,
                                   lr=lr, weight_decay=0.01, eps=1e-8)
    autocast = ddp.get("precision", "fp32") == "bf16"
    after = strategy.after_what()

    clock = StepClock(device)
    mark, ms, allocated = clock.mark, clock.ms, clock.allocated

    memory_after_model = allocated()
    warmup, measured = int(ddp.get("warmup_steps", 2)), int(ddp.get("measured_steps", 5))
    total_steps = warmup + measured
    comm = Collectives()
    rows, step_records = [], []
    phase = "step"
    # See Note [capture ranges]: the rank's warm-up and measured steps, as the C++ ranks'.
    ranges = StepRanges(device, ddp.get("cuda_profiler_range"))
    trace = RankTrace(ddp, rank, world, spec.get("backend", "gloo"), ddp.get("strategy", ""), device)
    comm.install()
    try:
        for step in range(total_steps):
            ranges.begin(step, step < warmup)
            trace.before_step(step)
            if cuda:
                torch.cuda.reset_peak_memory_stats(device)
            comm.records = []
            comm.phase = "start"
            m0 = mark()
            strategy.start(wrapped, optimizer, phase)
            call_user(optimizer.zero_grad, phase=phase, what=f"{describe(optimizer)}.zero_grad()")
            comm.phase = "forward"
            m1 = mark()
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                loss = _loss(wrapped, inputs, targets, phase)
            m2 = mark()
            after_forward = allocated()
            comm.phase = "backward"
            call_user(loss.backward, phase=phase, what="backward (with the wrapper's gradient hooks)")
            m3 = mark()
            comm.phase = "hook"
            strategy.after_backward(wrapped, optimizer, phase)
            m4 = mark()
            after_backward = allocated()
            if step == 0:  # the check's steps saw them already: once, so that the timing is the step's
                _check_gradients(named, after, phase)
            comm.phase = "optimizer"
            m5 = mark()
            call_user(optimizer.step, phase=phase, what=f"{describe(optimizer)}.step()")
            m6 = mark()
            comm.phase = None
            if cuda:
                m6.synchronize()
            records = comm.records
            agreed = torch.tensor([loss.item(), 0.0], dtype=torch.float64, device=device)
            dist.all_reduce(agreed)
            collectives, before, comm_bytes, broadcast_bytes = _summarize(records)
            grads = [p.grad for p in params if p.grad is not None]
            if isinstance(strategy, TorchDdp) and not records:
                comm_bytes = _local_bytes(grads)  # the hook did not run: DDP's own, unseen
            rows.append({
                "rank": rank, "world_size": world, "step": step, "warmup": step < warmup,
                "forward_ms": ms(m1, m2), "backward_ms": ms(m2, m3), "comm_wait_ms": ms(m3, m4),
                "optimizer_ms": ms(m5, m6), "total_ms": ms(m0, m6), "comm_hidden_ms": -1.0,
                "collectives": collectives, "launched_before_sync": before, "comm_bytes": comm_bytes,
                "broadcast_bytes": broadcast_bytes,
                "loss": loss.item(), "global_loss": agreed[0].item() / world,
                "memory_after_model": memory_after_model, "memory_after_forward": after_forward,
                "memory_after_backward": after_backward, "memory_after_optimizer": allocated(),
                "memory_peak": torch.cuda.max_memory_allocated(device) if cuda else 0,
                "parameter_bytes": _local_bytes(params),
                "gradient_bytes": _local_bytes(grads),
                "optimizer_state_bytes": _optimizer_state_bytes(optimizer), "comm_buffer_bytes": 0,
            })
            step_records.append(records)
            trace.after_step(step)
            ranges.end()
            emit("progress", rank=rank, done=step + 1, total=total_steps, what=f"step {step}")
    finally:
        trace.finish()
        ranges.finish()
        comm.phase = None
        comm.uninstall()

    replayed, overlappable = -1.0, -1.0
    if step_records:  # see Note [hidden communication, estimated]
        last = [c for c in step_records[-1] if c.phase in ("backward", "hook")]
        times = _replay(last, device, cuda, dist)
        if times is not None:
            replayed = sum(times)
            overlappable = sum(t for c, t in zip(last, times) if c.phase == "hook" or not c.blocking)
    for row in rows:
        if overlappable >= 0 and not isinstance(strategy, TorchDdp):
            row["comm_hidden_ms"] = max(0.0, overlappable - row["comm_wait_ms"])
        row["comm_replayed_ms"] = replayed
        emit("result", rank=rank, experiment="ddp", row=row)
