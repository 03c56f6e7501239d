"""Fully sharded data parallelism (ZeRO stage 3) for the weights of nn.Linear and nn.Embedding.

Each parameter of an nn.Linear or nn.Embedding is replaced by a flat 1/world shard (padded to a
multiple of the world size) in the parameter's own dtype (the master copy, fp32 for an fp32
model, whatever compute_dtype is), an nn.Parameter registered on the same module as
`<name>_shard`: the wrapper's parameters() are these shards and the replicated rest, exactly what
the optimizer steps. Every other parameter (norms) stays whole on each rank; its gradient is
all-reduced and averaged as in DDP.

Forward: a pre-hook all-gathers the module's weights (cast to compute_dtype, if given, as are
the module's floating-point inputs) and sets them as plain attributes; a post-hook drops them.
Backward: the gathered weights are not kept for backward. While the module runs, saved-tensor
hooks replace a saved gathered weight (or a view of it, such as weight.t()) by a note, and
backward all-gathers it again when it unpacks the note, so full weights live only while their
module runs forward or backward. The gradient of a gathered weight is reduce-scattered (in fp32,
summed, then averaged) into its shard's gradient; those reduce-scatters run asynchronously and
finish_gradient_synchronization() waits for them.

A parameter of an nn.Linear or nn.Embedding must be used through its module's forward: the full
weight exists only there."""

import math

import torch
import torch.distributed as dist
import torch.nn as nn

from .ddp import broadcast_from_rank0

SHARDED_MODULES = (nn.Linear, nn.Embedding)


class _ShardedParam:
    """A sharded parameter: its shard (an nn.Parameter of the original's dtype, normally fp32),
    the full shape and the padded length."""

    def __init__(self, full, rank, world_size):
        self.shape, self.numel = full.shape, full.numel()
        self.chunk = math.ceil(self.numel / world_size)
        padded = torch.zeros(self.chunk * world_size, dtype=full.dtype, device=full.device)
        padded[:self.numel] = full.detach().reshape(-1)
        shard = padded[rank * self.chunk:(rank + 1) * self.chunk].clone()
        self.shard = nn.Parameter(shard, requires_grad=full.requires_grad)
        self.backward_copy = None  # the weight gathered again for backward, until its gradient is made


class _Regather:
    """What a saved gathered weight is packed into: enough to rebuild the same view."""

    __slots__ = ("rec", "size", "stride", "offset")

    def __init__(self, rec, t):
        self.rec, self.size, self.stride, self.offset = rec, t.shape, t.stride(), t.storage_offset()


class _GatherParam(torch.autograd.Function):
    """shard -> full weight (all-gather); the full weight's gradient is reduce-scattered
    asynchronously into the shard's gradient by the wrapper, so none is returned here."""

    @staticmethod
    def forward(ctx, shard, rec, fsdp):
        ctx.rec, ctx.fsdp = rec, fsdp
        return fsdp._gather(rec, fsdp.compute_dtype)

    @staticmethod
    def backward(ctx, grad_full):
        ctx.fsdp._reduce_scatter(ctx.rec, grad_full)
        ctx.rec.backward_copy = None  # every use of the weight in backward is done
        return None, None, None


class FSDP(nn.Module):
    """FSDP(module, compute_dtype=None): shards the weights of module's nn.Linear and
    nn.Embedding layers across ranks. After backward call finish_gradient_synchronization();
    gather_full_params() returns every parameter whole, by the unwrapped module's names."""

    def __init__(self, module, compute_dtype=None):
        super().__init__()
        self.module = module
        self.compute_dtype = compute_dtype
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self._use_reduce_scatter = True  # False once the backend has refused it (some Gloo builds)
        self._use_all_gather_into = True
        self._pending_shards = []  # (record, output, padded input, work) from this backward
        self._pending_replicated = []  # (parameter, work)
        broadcast_from_rank0(module)

        records = {}  # id(original parameter) -> _ShardedParam; a tied weight is sharded once
        self._module_params = {}  # sharded module -> [(attribute name, record)]
        full_names = dict(module.named_parameters())  # name -> parameter, before sharding
        for mod in module.modules():
            if not isinstance(mod, SHARDED_MODULES):
                continue
            entries = []
            for name, p in list(mod.named_parameters(recurse=False)):
                if id(p) not in records:
                    records[id(p)] = _ShardedParam(p, self.rank, self.world_size)
                rec = records[id(p)]
                del mod._parameters[name]
                mod.register_parameter(name + "_shard", rec.shard)
                entries.append((name, rec))
            if entries:
                self._module_params[mod] = entries
                mod.register_forward_pre_hook(self._pre_forward)
                mod.register_forward_hook(self._post_forward, always_call=True)

        # The unwrapped module's names, each with its record (sharded) or parameter (replicated).
        self._full_params = [(name, records.get(id(p), p)) for name, p in full_names.items()]
        shards = {id(r.shard) for r in records.values()}
        for p in module.parameters():
            if id(p) not in shards and p.requires_grad:
                p.register_post_accumulate_grad_hook(self._replicated_grad_ready)

    # Collectives, with fallbacks for backends that lack the *_tensor forms.
    def _gather(self, rec, dtype=None):
        shard = rec.shard.detach()
        if dtype is not None:
            shard = shard.to(dtype)
        flat = torch.empty(rec.chunk * self.world_size, dtype=shard.dtype, device=shard.device)
        if self._use_all_gather_into:
            try:
                dist.all_gather_into_tensor(flat, shard)
            except (RuntimeError, NotImplementedError):
                self._use_all_gather_into = False
        if not self._use_all_gather_into:
            dist.all_gather(list(flat.chunk(self.world_size)), shard)
        return flat[:rec.numel].view(rec.shape)

    def _reduce_scatter(self, rec, grad_full):
        padded = torch.zeros(rec.chunk * self.world_size, dtype=torch.float32, device=grad_full.device)
        padded[:rec.numel].copy_(grad_full.reshape(-1))
        out = torch.empty(rec.chunk, dtype=torch.float32, device=grad_full.device)
        work = None
        if self._use_reduce_scatter:
            try:
                work = dist.reduce_scatter_tensor(out, padded, op=dist.ReduceOp.SUM, async_op=True)
            except (RuntimeError, NotImplementedError):
                self._use_reduce_scatter = False
        if work is None:  # all-reduce the whole gradient; this rank's slice is taken on finishing
            out = None
            work = dist.all_reduce(padded, op=dist.ReduceOp.SUM, async_op=True)
        self._pending_shards.append((rec, out, padded, work))

    def _replicated_grad_ready(self, p):
        self._pending_replicated.append((p, dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, async_op=True)))

    # Hooks around each sharded module's forward.
    def _pre_forward(self, mod, args):
        gathered = {}
        for name, rec in self._module_params[mod]:
            full = _GatherParam.apply(rec.shard, rec, self)
            setattr(mod, name, full)
            gathered[full.untyped_storage().data_ptr()] = rec
        if torch.is_grad_enabled():
            def pack(t):
                if t.layout == torch.strided and t.untyped_storage().data_ptr() in gathered:
                    return _Regather(gathered[t.untyped_storage().data_ptr()], t)
                return t

            hooks = torch.autograd.graph.saved_tensors_hooks(pack, self._unpack)
            hooks.__enter__()
            mod._fsdp_saved_hooks = hooks
        if self.compute_dtype is not None:
            return tuple(a.to(self.compute_dtype) if torch.is_tensor(a) and a.is_floating_point() else a
                         for a in args)
        return None

    def _post_forward(self, mod, args, output):
        hooks = mod.__dict__.pop("_fsdp_saved_hooks", None)
        if hooks is not None:
            hooks.__exit__(None, None, None)
        for name, _ in self._module_params[mod]:
            if name in mod.__dict__:
                delattr(mod, name)

    def _unpack(self, saved):
        if not isinstance(saved, _Regather):
            return saved
        rec = saved.rec
        if rec.backward_copy is None:
            rec.backward_copy = self._gather(rec, self.compute_dtype)
        return rec.backward_copy.as_strided(saved.size, saved.stride, saved.offset)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _average_shard_grad(self, grad):
        return grad.div_(self.world_size)

    def finish_gradient_synchronization(self):
        """Waits for this backward's reduce-scatters and all-reduces; averages the gradients
        into the shards' .grad (adding to any there) and the replicated parameters' .grad."""
        for rec, out, padded, work in self._pending_shards:
            work.wait()
            if out is None:
                out = padded[self.rank * rec.chunk:(self.rank + 1) * rec.chunk].clone()
            grad = self._average_shard_grad(out).to(rec.shard.dtype)
            if rec.shard.grad is None:
                rec.shard.grad = grad
            else:
                rec.shard.grad.add_(grad)
        for p, work in self._pending_replicated:
            work.wait()
            p.grad.div_(self.world_size)
        self._pending_shards.clear()
        self._pending_replicated.clear()

    @torch.no_grad()
    def gather_full_params(self):
        """{name: full tensor in the master dtype} under the unwrapped module's parameter names (a collective:
        every rank calls it)."""
        full = {}
        for name, rec in self._full_params:
            if isinstance(rec, _ShardedParam):
                full[name] = self._gather(rec).clone()
            else:
                full[name] = rec.detach().clone()
        return full
