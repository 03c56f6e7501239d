#!/usr/bin/env python3
"""The user's DDP class timed in a plain torch.multiprocessing script, without TrainScope: the
reference for the runner's own overhead (docs/BENCHMARKS.md). The same step as the runner's
(runner/trainscope_runner/ddp.py): the checkout's model at a size of the course's table, AdamW,
bf16 or fp32 autocast, the course's hooks around backward, CUDA events around the step; prints
one JSON line: the step time (per step the slowest rank, then the mean and median over steps).

    python3 scripts/plain-ddp-step.py --code examples/course-checkout --strategy bucketed \\
        --size small --context-length 256 --batch 4 --precision bf16 --world 2
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

# The course's table (the current edition's sizes; the 2025 xl as xl-2025).
SIZES = {"tiny": (64, 256, 2, 2), "small": (768, 3072, 12, 12), "medium": (1024, 4096, 24, 16),
         "large": (1280, 5120, 36, 20), "xl": (2560, 10240, 32, 32), "xl-2025": (1600, 6400, 48, 25)}


def rank_main(rank, args, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=args.world, device_id=torch.device("cuda", rank))
    sys.path[:0] = [args.code, os.path.join(args.code, "cs336-basics")]
    import importlib.util
    spec = importlib.util.spec_from_file_location("plain_adapters", os.path.join(args.code, "tests", "adapters.py"))
    adapters = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(adapters)
    from cs336_basics.model import BasicsTransformerLM

    d, f, layers, heads = SIZES[args.size]
    torch.manual_seed(0)
    model = BasicsTransformerLM(vocab_size=10000, context_length=args.context_length, d_model=d,
                                num_layers=layers, num_heads=heads, d_ff=f, rope_theta=10000.0).cuda()
    if args.strategy == "individual":
        ddp = adapters.get_ddp_individual_parameters(model)
        start, after = None, adapters.ddp_individual_parameters_on_after_backward
    else:
        ddp = adapters.get_ddp_bucketed(model, args.bucket_mb)
        start, after = adapters.ddp_bucketed_on_train_batch_start, adapters.ddp_bucketed_on_after_backward
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4, weight_decay=0.01, eps=1e-8)
    g = torch.Generator(device="cuda").manual_seed(0)
    tokens = torch.randint(10000, (args.batch * args.world, args.context_length + 1), device="cuda", generator=g)
    x = tokens[rank * args.batch:(rank + 1) * args.batch, :-1]
    y = tokens[rank * args.batch:(rank + 1) * args.batch, 1:]
    times = []
    for step in range(args.warmup + args.steps):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        if start is not None:
            start(ddp, optimizer)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            logits = ddp(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1))
        loss.backward()
        after(ddp, optimizer)
        optimizer.step()
        end.record()
        end.synchronize()
        ms = torch.tensor([begin.elapsed_time(end)], device="cuda")
        dist.all_reduce(ms, op=dist.ReduceOp.MAX)  # the step ends when every rank's does
        if step >= args.warmup:
            times.append(ms.item())
    if rank == 0:
        out.put({"strategy": args.strategy, "size": args.size, "precision": args.precision, "world": args.world,
                 "steps": len(times), "step_ms": statistics.mean(times), "median_ms": statistics.median(times),
                 "std_ms": statistics.stdev(times) if len(times) > 1 else 0.0})
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", required=True)
    parser.add_argument("--strategy", choices=["individual", "bucketed"], default="bucketed")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--context-length", type=int, default=256)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="bf16")
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    args.code = os.path.abspath(args.code)
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(rank_main, args=(args, port, out), nprocs=args.world, join=True)
    print(json.dumps(out.get()))


if __name__ == "__main__":
    main()
