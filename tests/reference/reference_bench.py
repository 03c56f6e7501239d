#!/usr/bin/env python3
"""Plain PyTorch (eager) reference of TrainScope's benchmark: the same model and loop, written
the way the course writes it, for side-by-side timing (scripts/bench-e2e.sh).

Model: token embedding; pre-norm blocks of RMSNorm, causal multi-head self-attention with
RoPE, RMSNorm, SwiGLU; final RMSNorm; LM head; no biases. Loop: zero_grad, forward + loss
(under autocast for bf16/fp16), backward, AdamW step; each phase timed with CUDA events (the
same way TrainScope times it), warm-up steps excluded from the statistics.

Prints one JSON object per point on stdout.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {
    "tiny": (64, 256, 2, 4), "mini": (128, 512, 4, 4),
    "small": (768, 3072, 12, 12), "medium": (1024, 4096, 24, 16), "large": (1280, 5120, 36, 20),
    # The course's two tables (see Note [two model tables] in engine/src/core/config.h).
    "xl": (2560, 10240, 32, 32), "10B": (4608, 12288, 50, 36),
    "xl-2025": (1600, 6400, 48, 25), "2.7B": (2560, 10240, 32, 32),
}


class Linear(nn.Module):
    def __init__(self, d_in, d_out, device):
        super().__init__()
        std = math.sqrt(2.0 / (d_in + d_out))
        self.weight = nn.Parameter(nn.init.trunc_normal_(torch.empty(d_out, d_in, device=device), 0, std, -3 * std, 3 * std))

    def forward(self, x):
        return x @ self.weight.T


class RMSNorm(nn.Module):
    def __init__(self, d, device, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d, device=device))
        self.eps = eps

    def forward(self, x):
        in_dtype = x.dtype
        x = x.to(torch.float32)
        rms = torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return (x / rms * self.weight).to(in_dtype)


class RoPE(nn.Module):
    def __init__(self, theta, d_k, max_len, device):
        super().__init__()
        inv = theta ** (-torch.arange(0, d_k, 2, device=device, dtype=torch.float64) / d_k)
        ang = torch.outer(torch.arange(max_len, device=device, dtype=torch.float64), inv)
        self.register_buffer("cos", ang.cos().float(), persistent=False)
        self.register_buffer("sin", ang.sin().float(), persistent=False)

    def forward(self, x):  # (..., seq, d_k), interleaved pairs
        s = x.shape[-2]
        cos, sin = self.cos[:s].to(x.dtype), self.sin[:s].to(x.dtype)
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


def naive_attention(q, k, v):
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    s = q.shape[-2]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device=q.device), 1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


class Block(nn.Module):
    def __init__(self, d, h, f, rope, attention, device):
        super().__init__()
        self.h, self.rope, self.attention = h, rope, attention
        self.ln1, self.ln2 = RMSNorm(d, device), RMSNorm(d, device)
        self.q, self.k, self.v, self.o = (Linear(d, d, device) for _ in range(4))
        self.w1, self.w3, self.w2 = Linear(d, f, device), Linear(d, f, device), Linear(f, d, device)

    def forward(self, x):
        b, s, d = x.shape
        hx = self.ln1(x)
        split = lambda t: t.view(b, s, self.h, d // self.h).transpose(1, 2)
        q, k, v = split(self.q(hx)), split(self.k(hx)), split(self.v(hx))
        q, k = self.rope(q), self.rope(k)
        a = naive_attention(q, k, v) if self.attention == "naive" else F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
        hx = self.ln2(x)
        return x + self.w2(F.silu(self.w1(hx)) * self.w3(hx))


class TransformerLM(nn.Module):
    def __init__(self, vocab, ctx, d, f, layers, h, attention, device, theta=10000.0):
        super().__init__()
        self.emb = nn.Parameter(nn.init.trunc_normal_(torch.empty(vocab, d, device=device), 0, 1, -3, 3))
        rope = RoPE(theta, d // h, ctx, device)
        self.blocks = nn.ModuleList(Block(d, h, f, rope, attention, device) for _ in range(layers))
        self.ln_f = RMSNorm(d, device)
        self.head = Linear(d, vocab, device)

    def forward(self, tokens):
        x = self.emb[tokens]
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def stats(xs):
    if not xs:
        return {"count": 0, "mean": 0, "std": 0, "median": 0, "min": 0, "max": 0}
    return {"count": len(xs), "mean": statistics.fmean(xs), "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def run_point(size, ctx, precision, mode, attention, args):
    d, f, layers, h = PRESETS[size]
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    model = TransformerLM(args.vocab_size, ctx, d, f, layers, h, attention, device)
    compiled = args.compile != "none"
    # torch.compile's side (issue 13's reference): the model compiled in the given mode
    # (reduce-overhead: with CUDA graphs), AdamW fused.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01,
                            fused=compiled and device.type == "cuda")
    if compiled:
        model = torch.compile(model, mode=args.compile)
    scaler = torch.amp.GradScaler(device.type) if (precision == "fp16" and mode == "train") else None
    x = torch.randint(args.vocab_size, (args.batch_size, ctx), device=device)
    y = torch.randint(args.vocab_size, (args.batch_size, ctx), device=device)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    cuda = device.type == "cuda"
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)] if cuda else None
    fwd, bwd, optm, tot = [], [], [], []

    def mark(i):
        if cuda:
            ev[i].record()
            return 0.0
        return time.perf_counter()

    if args.prewarm:
        # Compilation alone (scripts/compiled-evidence.sh runs these side by side to fill
        # torch.compile's on-disk caches before the timed runs): one forward and backward, no
        # optimizer state, nothing timed.
        t_start = time.perf_counter()
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            loss = F.cross_entropy(model(x).reshape(-1, args.vocab_size), y.reshape(-1))
        if mode != "forward":
            loss.backward()
        if cuda:
            torch.cuda.synchronize()
        return {"impl": "pytorch" if args.compile == "none" else f"torch.compile {args.compile}", "size": size,
                "context": ctx, "precision": precision, "mode": mode, "attention": attention, "status": "prewarm",
                "first_step_s": time.perf_counter() - t_start}
    t_start = time.perf_counter()
    first_step_s = None
    for step in range(args.warmup + args.steps):
        opt.zero_grad(set_to_none=True)
        t0 = mark(0)
        with torch.no_grad() if mode == "forward" else torch.enable_grad():
            with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                loss = F.cross_entropy(model(x).reshape(-1, args.vocab_size), y.reshape(-1))
        t1 = mark(1)
        if mode != "forward":
            (scaler.scale(loss) if scaler else loss).backward()
        t2 = mark(2)
        if mode == "train":
            if scaler:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
        t3 = mark(3)
        if cuda:
            ev[3].synchronize()
            times = (ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2]), ev[2].elapsed_time(ev[3]), ev[0].elapsed_time(ev[3]))
        else:
            times = ((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t3 - t0) * 1e3)
        if first_step_s is None:
            first_step_s = time.perf_counter() - t_start  # with torch.compile: its compilation
        if step >= args.warmup:
            fwd.append(times[0])
            bwd.append(times[1] if mode != "forward" else 0.0)
            optm.append(times[2] if mode == "train" else 0.0)
            tot.append(times[3])
    return {"impl": "pytorch" if args.compile == "none" else f"torch.compile {args.compile}", "size": size, "context": ctx, "precision": precision, "mode": mode,
            "attention": attention, "forward": stats(fwd), "backward": stats(bwd), "optimizer": stats(optm),
            "total": stats(tot), "status": "ok", "loss": loss.item(), "first_step_s": first_step_s}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="small")
    p.add_argument("--context-length", default="256")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--mode", default="train")
    p.add_argument("--attention", default="naive", choices=["naive", "sdpa"])
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--vocab-size", type=int, default=10000)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", default="none", choices=["none", "default", "reduce-overhead"],
                   help="torch.compile the model in this mode (AdamW fused)")
    p.add_argument("--prewarm", action="store_true",
                   help="compile only (one untimed forward and backward): fills torch.compile's caches")
    args = p.parse_args()
    for size in args.size.split(","):
        if size not in PRESETS:
            p.error(f"--size: '{size}' is not one of {', '.join(PRESETS)}")
        for ctx in map(int, args.context_length.split(",")):
            for precision in args.precision.split(","):
                for mode in args.mode.split(","):
                    try:
                        r = run_point(size, ctx, precision, mode, args.attention, args)
                    except torch.OutOfMemoryError as e:
                        r = {"impl": "pytorch", "size": size, "context": ctx, "precision": precision, "mode": mode,
                             "status": "OOM", "error": str(e).splitlines()[0]}
                    finally:
                        if torch.cuda.is_available():
                            torch.cuda.empty_cache()
                    print(json.dumps(r), flush=True)


if __name__ == "__main__":
    sys.exit(main())
