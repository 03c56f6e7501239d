"""The course's adapters (2025 edition), wired to this checkout's cs336_systems."""

from __future__ import annotations

import torch

from cs336_systems.ddp import DDPBucketed, DDPIndividualParameters
from cs336_systems.flash_attention import FlashAttentionPytorch, FlashAttentionTriton
from cs336_systems.sharded_optimizer import ShardedOptimizer


def get_flashattention_autograd_function_pytorch() -> type:
    return FlashAttentionPytorch


def get_flashattention_autograd_function_triton() -> type:
    return FlashAttentionTriton


def get_ddp_individual_parameters(module: torch.nn.Module) -> torch.nn.Module:
    return DDPIndividualParameters(module)


def ddp_individual_parameters_on_after_backward(ddp_model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    ddp_model.finish_gradient_synchronization()


def get_ddp_bucketed(module: torch.nn.Module, bucket_size_mb: float) -> torch.nn.Module:
    return DDPBucketed(module, bucket_size_mb)


def ddp_bucketed_on_after_backward(ddp_model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    ddp_model.finish_gradient_synchronization()


def ddp_bucketed_on_train_batch_start(ddp_model: torch.nn.Module, optimizer: torch.optim.Optimizer):
    ddp_model.on_train_batch_start()


def get_sharded_optimizer(params, optimizer_cls: type[torch.optim.Optimizer], **kwargs) -> torch.optim.Optimizer:
    return ShardedOptimizer(params, optimizer_cls, **kwargs)
