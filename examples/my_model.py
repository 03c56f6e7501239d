"""The callable form of --code: a function that gets the point's configuration as keyword
arguments (vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta; it may
take only those it uses) and returns a torch.nn.Module whose forward maps token ids
[batch, context] to logits [batch, context, vocab_size].

    trainscope-cli bench --code examples/my_model.py:build --size small --device cuda
"""

import torch.nn as nn


class TinyMLPLM(nn.Module):
    """No attention at all: an embedding, an MLP per position and an LM head."""

    def __init__(self, vocab_size, d_model, d_ff):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.mlp = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, x):
        h = self.embed(x)
        return self.head(h + self.mlp(h))


def build(vocab_size, d_model, d_ff):
    return TinyMLPLM(vocab_size, d_model, d_ff)
