"""WRONG on purpose: the tiled PyTorch FlashAttention-2 with its causal mask off by one, so that
query i also sees key i + 1 (a peek at the next token). Non-causal attention is unaffected.

    --code examples/wrong/attention_mask_off_by_one.py
    --code examples/wrong/attention_mask_off_by_one.py:FlashAttentionMaskOffByOne"""

import _checkout  # noqa: F401
from cs336_systems.flash_attention import FlashAttentionPytorch, pytorch_forward


def hidden_off_by_one(q_idx, k_idx):
    return k_idx > q_idx + 1  # should be k_idx > q_idx


class FlashAttentionMaskOffByOne(FlashAttentionPytorch):
    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        return pytorch_forward(ctx, Q, K, V, is_causal, hidden=hidden_off_by_one)


def get_flashattention_autograd_function_pytorch() -> type:
    return FlashAttentionMaskOffByOne
