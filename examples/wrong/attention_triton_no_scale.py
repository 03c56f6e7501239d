"""WRONG on purpose: the Triton FlashAttention-2 forward without the 1/sqrt(d) scale on the
scores (softmax(Q K^T) V). Its backward is consistent with that forward.

    --code examples/wrong/attention_triton_no_scale.py
    --code examples/wrong/attention_triton_no_scale.py:FlashAttentionTritonNoScale"""

import _checkout  # noqa: F401
from cs336_systems.flash_attention import FlashAttentionTriton, triton_forward


class FlashAttentionTritonNoScale(FlashAttentionTriton):
    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        return triton_forward(ctx, Q, K, V, is_causal, scale=1.0)  # should be 1/sqrt(d)


def get_flashattention_autograd_function_triton() -> type:
    return FlashAttentionTritonNoScale
