"""WRONG on purpose: a sharded optimizer that steps the parameters this rank owns and never
broadcasts them, so each rank's other parameters stop changing and the ranks' models differ.

    --code examples/wrong/sharded_optimizer_no_broadcast.py --strategy yours-individual --shard on

The DDP adapters are the correct ones (the example checkout's), so that the optimizer is the
only thing wrong."""

import _checkout  # noqa: F401
from cs336_systems.ddp import DDPIndividualParameters
from cs336_systems.sharded_optimizer import ShardedOptimizer


class ShardedOptimizerNoBroadcast(ShardedOptimizer):
    def _broadcast_params(self):
        pass  # should broadcast each parameter from its owner


def get_sharded_optimizer(params, optimizer_cls, **kwargs):
    return ShardedOptimizerNoBroadcast(params, optimizer_cls, **kwargs)


def get_ddp_individual_parameters(module):
    return DDPIndividualParameters(module)


def ddp_individual_parameters_on_after_backward(ddp_model, optimizer):
    ddp_model.finish_gradient_synchronization()
