"""WRONG on purpose: per-parameter DDP that sums the ranks' gradients and never divides by the
world size, so every step is world_size times too large (under SGD; Adam hides the scale).

    --code examples/wrong/ddp_not_averaged.py
    --code examples/wrong/ddp_not_averaged.py:DDPNotAveraged"""

import _checkout  # noqa: F401
from cs336_systems.ddp import DDPIndividualParameters


class DDPNotAveraged(DDPIndividualParameters):
    def _average(self, grad):
        pass  # should divide by self.world_size


# 2025 adapters
def get_ddp_individual_parameters(module):
    return DDPNotAveraged(module)


def ddp_individual_parameters_on_after_backward(ddp_model, optimizer):
    ddp_model.finish_gradient_synchronization()


# 2026 adapters
def get_ddp(module):
    return DDPNotAveraged(module)


def ddp_on_after_backward(model, optimizer):
    model.finish_gradient_synchronization()
