"""TrainScope's Transformer LM in PyTorch, for the Python runner's distributed strategies (fsdp2,
ddp): the course's Transformer as TrainScope builds it (engine/src/nn/model.cpp): token
embedding; pre-norm blocks of RMSNorm, causal attention with interleaved RoPE over one fused qkv
weight, RMSNorm, SwiGLU over one fused W1|W3 weight; final RMSNorm; LM head; no biases; the same
initialisation.

Built from modules: every weight matrix is an nn.Linear or nn.Embedding (bias=False), every
RMSNorm weight the parameter of a small RMSNorm module, so that a user's FSDP that shards
nn.Linear and nn.Embedding (and gathers them in their forward hooks) finds them, and runs the
modules' forwards rather than reading their weights. The parameters keep the order of the
parameter-based model this replaced (embedding, norm_final, lm_head, then per block norm1, w_qkv,
w_o, norm2, w_13, w_2; each now a module's `.weight`), and their initialisation draws the same
random numbers in the same order (embedding, the blocks, the LM head), so a seed gives the same
model.

Attention: `naive` materialises the scores as TrainScope's naive attention does; otherwise
PyTorch's SDPA. Checkpointing: every k blocks (torch.utils.checkpoint, non-reentrant)."""

import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def _trunc_normal(shape, std, device):
    return torch.empty(shape, device=device).normal_(0.0, std).clamp_(-3 * std, 3 * std)


def _linear_weight(out_f, in_f, device):
    return _trunc_normal((out_f, in_f), math.sqrt(2.0 / (in_f + out_f)), device)


def linear(in_f, out_f, device):
    """nn.Linear(in_f, out_f, bias=False) with TrainScope's initialisation: built without
    PyTorch's own (which would draw from the generator too), then given its weight."""
    layer = nn.utils.skip_init(nn.Linear, in_f, out_f, bias=False, device=device)
    layer.weight = nn.Parameter(_linear_weight(out_f, in_f, device))
    return layer


def embedding(vocab, d, device):
    layer = nn.utils.skip_init(nn.Embedding, vocab, d, device=device)
    layer.weight = nn.Parameter(_trunc_normal((vocab, d), 1.0, device))
    return layer


def rms_norm(x, weight, eps=1e-5):
    return F.rms_norm(x.float(), (x.shape[-1],), weight.float(), eps).to(x.dtype)


class RMSNorm(nn.Module):
    def __init__(self, d, device, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d, device=device))
        self.eps = eps

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


def apply_rope(x, cos, sin):
    seq = x.shape[-2]
    c, s = cos[:seq].to(x.dtype), sin[:seq].to(x.dtype)
    pairs = x.unflatten(-1, (-1, 2))
    x0, x1 = pairs[..., 0], pairs[..., 1]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, d, f, heads, device, naive):
        super().__init__()
        self.heads = heads
        self.naive = naive
        self.norm1 = RMSNorm(d, device)
        self.w_qkv = linear(d, 3 * d, device)
        self.w_o = linear(d, d, device)
        self.norm2 = RMSNorm(d, device)
        self.w_13 = linear(d, 2 * f, device)
        self.w_2 = linear(f, d, device)

    def forward(self, x, cos, sin):
        b, s, d = x.shape
        h = self.heads
        qkv = self.w_qkv(self.norm1(x)).view(b, s, 3, h, d // h)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.naive:  # TrainScope's naive attention: the scores materialised
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
            a = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v
        else:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = x + self.w_o(a.transpose(1, 2).reshape(b, s, d))
        g, u = self.w_13(self.norm2(y)).chunk(2, dim=-1)
        return y + self.w_2(F.silu(g) * u)


class CheckpointedBlock(nn.Module):
    """A block whose activations are recomputed in backward (torchtitan's order: checkpoint
    inside, so that torch.compile of the whole traces the checkpoint too)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, cos, sin):
        from torch.utils.checkpoint import checkpoint
        return checkpoint(self.block, x, cos, sin, use_reentrant=False)


class TransformerLM(nn.Module):
    """model(tokens) → logits [batch, seq, vocab]; model(tokens, head_and_loss) → head_and_loss(h)
    of the last block's output h (fsdp2: the final norm, the LM head and the loss as one
    function, compiled together)."""

    def __init__(self, vocab, context, d, f, layers, heads, device, checkpoint_every=0, naive=False):
        super().__init__()
        # Drawn in this order (embedding, blocks, LM head), registered in the order the
        # parameter-based model listed them: its own parameters first, then the blocks'.
        emb = embedding(vocab, d, device)
        blocks = nn.ModuleList(Block(d, f, heads, device, naive) for _ in range(layers))
        norm_final = RMSNorm(d, device)
        lm_head = linear(d, vocab, device)
        self.embedding, self.norm_final, self.lm_head = emb, norm_final, lm_head
        self.blocks = blocks
        half = d // heads // 2
        k = torch.arange(half, dtype=torch.float64, device=device)
        inv_freq = 10000.0 ** (-2.0 * k / (d // heads))
        angles = torch.outer(torch.arange(context, dtype=torch.float64, device=device), inv_freq)
        self.register_buffer("rope_cos", angles.cos().float(), persistent=False)
        self.register_buffer("rope_sin", angles.sin().float(), persistent=False)
        self.checkpoint_every = checkpoint_every

    def forward(self, tokens, head_and_loss=None):
        x = self.embedding(tokens)
        n, k = len(self.blocks), self.checkpoint_every
        if k > 0 and torch.is_grad_enabled():
            from torch.utils.checkpoint import checkpoint

            def segment(begin, end):
                def run(h):
                    for i in range(begin, end):
                        h = self.blocks[i](h, self.rope_cos, self.rope_sin)
                    return h
                return run

            for b in range(0, n, k):
                x = checkpoint(segment(b, min(n, b + k)), x, use_reentrant=False)
        else:
            for block in self.blocks:
                x = block(x, self.rope_cos, self.rope_sin)
        if head_and_loss is not None:
            return head_and_loss(x)
        return self.lm_head(self.norm_final(x))


class StepClock:
    """A rank's marks inside a step, as the distributed lab's rows time them: CUDA events on a
    GPU (device time), the host's clock on the CPU; and the caching allocator's bytes (0 on the
    CPU). fsdp2's and the Python strategies' steps (ddp.py) share it."""

    def __init__(self, device):
        self.device = device
        self.cuda = device.type == "cuda"

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b):
        return a.elapsed_time(b) if self.cuda else (b - a) * 1000.0

    def allocated(self):
        return torch.cuda.memory_allocated(self.device) if self.cuda else 0


def join_world(backend):
    """This rank of the world the launcher (or torchrun) placed it in: RANK, WORLD_SIZE and
    LOCAL_RANK read, its device (cuda:LOCAL_RANK for NCCL, the CPU for Gloo) made current, the
    process group joined. Returns (rank, world size, device)."""
    import torch.distributed as dist
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, rank=rank, world_size=world,
                            device_id=device if device.type == "cuda" else None)
    return rank, world, device
