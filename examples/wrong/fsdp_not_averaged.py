"""WRONG on purpose: FSDP whose reduce-scatter sums the sharded weights' gradients and never
divides by the world size (the replicated parameters are still averaged), so those weights step
world_size times too far (under SGD; Adam hides the scale).

    --code examples/wrong/fsdp_not_averaged.py
    --code examples/wrong/fsdp_not_averaged.py:FSDPNotAveraged"""

import _checkout  # noqa: F401
from cs336_systems.fsdp import FSDP


class FSDPNotAveraged(FSDP):
    def _average_shard_grad(self, grad):
        return grad  # should divide by self.world_size


def get_fsdp(module, compute_dtype=None):
    return FSDPNotAveraged(module, compute_dtype)


def fsdp_on_after_backward(model, optimizer):
    model.finish_gradient_synchronization()


def fsdp_gather_full_params(model):
    return model.gather_full_params()
