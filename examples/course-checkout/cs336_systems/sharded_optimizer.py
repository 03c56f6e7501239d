"""Optimizer state sharding (ZeRO stage 1): each parameter is owned by one rank, which alone
keeps its optimizer state and updates it; after the step each parameter is broadcast from its
owner so that every rank holds the whole updated model."""

import torch
import torch.distributed as dist


class ShardedOptimizer(torch.optim.Optimizer):
    """ShardedOptimizer(params, optimizer_cls, **kwargs): an inner optimizer_cls(**kwargs) over
    this rank's parameters; step() runs it, then broadcasts every parameter from its owner.
    Parameters go to the least-loaded rank (by element count) in the order they are added."""

    def __init__(self, params, optimizer_cls, **kwargs):
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self._load = [0] * self.world_size  # elements owned by each rank
        self._owners = []  # (parameter, owning rank), over all groups
        self._local_groups = []  # this rank's share of each group, until the inner optimizer exists
        self._inner = None
        super().__init__(params, kwargs)  # calls add_param_group for each group
        self._inner = optimizer_cls(self._local_groups, **kwargs)

    def add_param_group(self, param_group):
        super().add_param_group(param_group)  # the whole group, with the defaults filled in
        group = self.param_groups[-1]
        local = {k: v for k, v in group.items() if k != "params"}
        local["params"] = []
        for p in group["params"]:
            owner = min(range(self.world_size), key=self._load.__getitem__)
            self._load[owner] += p.numel()
            self._owners.append((p, owner))
            if owner == self.rank:
                local["params"].append(p)
        if self._inner is None:
            self._local_groups.append(local)
        else:
            self._inner.add_param_group(local)

    def _broadcast_params(self):
        with torch.no_grad():
            works = [dist.broadcast(p, src=owner, async_op=True) for p, owner in self._owners]
            for w in works:
                w.wait()

    def step(self, closure=None, **kwargs):
        # Hyperparameters changed on this optimizer's groups (a learning-rate schedule) reach
        # the inner optimizer's matching groups.
        for outer, inner in zip(self.param_groups, self._inner.param_groups):
            inner.update({k: v for k, v in outer.items() if k != "params"})
        loss = self._inner.step(closure, **kwargs)
        self._broadcast_params()
        return loss
