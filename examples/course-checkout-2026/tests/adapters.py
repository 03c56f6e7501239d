"""The course's adapters (2026 edition). The solutions live in examples/course-checkout's
cs336_systems, shared with the 2025 edition's checkout."""

from __future__ import annotations

import os
import sys

import torch

_SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "course-checkout")
for _p in (os.path.join(_SHARED, "cs336-basics"), _SHARED):
    _p = os.path.normpath(_p)
    if _p not in sys.path:
        sys.path.insert(0, _p)

from cs336_systems.ddp import DDPIndividualParameters  # noqa: E402
from cs336_systems.flash_attention import FlashAttentionPytorch, FlashAttentionTriton  # noqa: E402
from cs336_systems.fsdp import FSDP  # noqa: E402
from cs336_systems.sharded_optimizer import ShardedOptimizer  # noqa: E402


def get_flashattention_autograd_function_pytorch() -> type:
    return FlashAttentionPytorch


def get_flashattention_autograd_function_triton() -> type:
    return FlashAttentionTriton


def get_ddp(module: torch.nn.Module) -> torch.nn.Module:
    return DDPIndividualParameters(module)


def ddp_on_after_backward(model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    model.finish_gradient_synchronization()


def get_fsdp(module: torch.nn.Module, compute_dtype: torch.dtype | None = None) -> torch.nn.Module:
    return FSDP(module, compute_dtype)


def fsdp_on_after_backward(model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    model.finish_gradient_synchronization()


def fsdp_gather_full_params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return model.gather_full_params()


def get_sharded_optimizer(params, optimizer_cls: type[torch.optim.Optimizer], **kwargs) -> torch.optim.Optimizer:
    return ShardedOptimizer(params, optimizer_cls, **kwargs)
