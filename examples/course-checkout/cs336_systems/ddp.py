"""Data parallelism with gradient communication overlapped with backward: an all-reduce per
parameter (DDPIndividualParameters) or per bucket of parameters (DDPBucketed).

Both start from rank 0's parameters and buffers, launch their all-reduces from
post-accumulate-grad hooks while backward is still running, and finish in
finish_gradient_synchronization(), called after backward and before the optimizer's step. The
all-reduces sum (Gloo has no AVG); finishing divides by the world size."""

import torch
import torch.distributed as dist
from torch._utils import _unflatten_dense_tensors


def broadcast_from_rank0(module):
    """Every rank starts from rank 0's parameters and buffers (shared ones are listed once)."""
    with torch.no_grad():
        for t in list(module.parameters()) + list(module.buffers()):
            dist.broadcast(t, src=0)


class DDPIndividualParameters(torch.nn.Module):
    """DDPIndividualParameters(module): one async all-reduce per parameter, launched as soon as
    its gradient is accumulated; finish_gradient_synchronization() waits and averages."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.world_size = dist.get_world_size()
        self._in_flight = []  # (parameter, work) launched this step
        broadcast_from_rank0(module)
        # parameters() lists a tied parameter once, and its hook runs once per backward, after
        # every use has added to its gradient: it is reduced once.
        for p in module.parameters():
            if p.requires_grad:
                p.register_post_accumulate_grad_hook(self._grad_ready)

    def _grad_ready(self, p):
        self._in_flight.append((p, dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, async_op=True)))

    def _average(self, grad):
        grad.div_(self.world_size)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def finish_gradient_synchronization(self):
        for p, work in self._in_flight:
            work.wait()
            self._average(p.grad)
        self._in_flight.clear()


class DDPBucketed(torch.nn.Module):
    """DDPBucketed(module, bucket_size_mb): parameters in buckets of at most bucket_size_mb
    (reverse order of module.parameters(), about the order backward produces their gradients);
    a bucket's gradients are flattened and all-reduced together once all of them are ready.
    Call on_train_batch_start() before each step's forward and finish_gradient_synchronization()
    after its backward."""

    def __init__(self, module, bucket_size_mb):
        super().__init__()
        self.module = module
        self.world_size = dist.get_world_size()
        broadcast_from_rank0(module)
        limit = bucket_size_mb * 1024 * 1024
        self.buckets, size = [[]], 0
        for p in reversed([p for p in module.parameters() if p.requires_grad]):
            nbytes = p.numel() * p.element_size()
            if self.buckets[-1] and size + nbytes > limit:
                self.buckets.append([])
                size = 0
            self.buckets[-1].append(p)
            size += nbytes
        if not self.buckets[-1]:
            self.buckets.pop()
        for i, bucket in enumerate(self.buckets):
            for p in bucket:
                p.register_post_accumulate_grad_hook(lambda p, i=i: self._grad_ready(i))
        self.on_train_batch_start()

    def on_train_batch_start(self):
        self._waiting = [len(b) for b in self.buckets]  # gradients each bucket still waits for
        self._in_flight = []  # (bucket index, flat gradient, work)

    def _grad_ready(self, i):
        self._waiting[i] -= 1
        if self._waiting[i] == 0:
            self._launch(i)

    def _launch(self, i):
        # A parameter that took no part in this step has no gradient: it goes in as zeros, so
        # that every rank reduces a bucket of the same size.
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.buckets[i]]
        flat = torch.cat([g.reshape(-1) for g in grads])  # always a new buffer, even for one gradient
        self._in_flight.append((i, flat, dist.all_reduce(flat, op=dist.ReduceOp.SUM, async_op=True)))
        self._waiting[i] = -1  # launched

    def _copy_back(self, i, flat):
        bucket = self.buckets[i]
        for p, g in zip(bucket, _unflatten_dense_tensors(flat, bucket)):
            if p.grad is not None:
                p.grad.copy_(g)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def finish_gradient_synchronization(self):
        # Buckets holding a parameter that backward never reached are sent now, in order.
        for i, waiting in enumerate(self._waiting):
            if waiting > 0:
                self._launch(i)
        for i, flat, work in self._in_flight:
            work.wait()
            flat.div_(self.world_size)
            self._copy_back(i, flat)
        self.on_train_batch_start()
