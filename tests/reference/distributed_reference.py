#!/usr/bin/env python3
"""Plain PyTorch reference of TrainScope's distributed lab (issue 12), for side-by-side timing
(scripts/distributed-evidence.sh, compared by compare_distributed.py):

  allreduce  torch.distributed.all_reduce per size and dtype: each iteration timed (CUDA events
             on a GPU, time.perf_counter on the CPU), each rank's mean, the slowest rank's mean
             reported; algbw = bytes/time, busbw = algbw·2(n−1)/n (nccl-tests' definitions).
  ddp        the reference's Transformer LM (reference_bench.py) in PyTorch's
             DistributedDataParallel with its default buckets, AdamW (fused on CUDA), bf16 by
             autocast; --zero: torch.distributed.optim.ZeroRedundancyOptimizer(AdamW). Each step
             (forward + loss, backward, optimizer) timed on every rank; per step the slowest rank.
  single     the same training step on one device without DDP (the per-rank batch): the
             baseline of "DDP's overhead over one GPU".

--compile MODE (ddp, single): torch.compile of the model, inside DDP for ddp (DDP wraps the
model, torch.compile wraps DDP, as PyTorch's docs do it), at MODE: default, reduce-overhead
(CUDA graphs by cudagraph trees), max-autotune-no-cudagraphs. With DDP, Dynamo's DDPOptimizer
splits the graph at DDP's bucket boundaries by default (torch._dynamo.config.optimize_ddp), so
that each bucket's all-reduce can start while backward goes on. The steps are timed the same way
(the compile happens in the warm-up steps: give enough of them, 5 by default); the hidden-
communication estimate is skipped (its no_sync steps would compile another graph). TrainScope's
compiled DDP step (`distributed ddp --exec compiled`) is compared with the best mode's.

Sizes are parsed as TrainScope parses them (distributed/src/allreduce_rows.cpp parseByteSize):
1MB = 10^6 bytes, 1MiB = 2^20 bytes; each line carries the exact bytes used.

Ranks: spawned here (torch.multiprocessing, --world N, one GPU per rank on NCCL), or, when RANK
and WORLD_SIZE are set (torchrun), this process is one rank. The environment is inherited as is
(NCCL_NVLS_ENABLE and the like reach every rank). Rank 0 prints one JSON object per line on
stdout; progress goes to stderr.
"""
import argparse
import json
import math
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_bench import PRESETS, TransformerLM  # noqa: E402  the same model, not a copy

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
DEFAULT_SIZES = "1MiB,16MiB,64MiB,256MiB,1GiB"
UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_bytes(text):
    """As TrainScope's parseByteSize: a number and a unit (B, KB, MB, GB: powers of 10; KiB, MiB,
    GiB: powers of 2)."""
    t = text.strip()
    i = 0
    while i < len(t) and (t[i].isdigit() or t[i] == "."):
        i += 1
    number, unit = t[:i], t[i:].strip().lower()
    if not number or number.startswith(".") or number.count(".") > 1 or unit not in UNITS:
        raise ValueError(f"'{text}' is not a size (1MB, 16MiB, 1GB, or bytes)")
    value = float(number) * UNITS[unit]
    if value != math.floor(value) or value <= 0:
        raise ValueError(f"'{text}' is not a whole number of bytes above 0")
    return int(value)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(obj):
    print(json.dumps(obj), flush=True)


class Timer:
    """Per-call times in ms: CUDA events on the current stream, read after one synchronisation;
    on the CPU time.perf_counter around the call."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.pairs, self.cpu = [], []

    def start(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.pairs.append([e, None])
        else:
            self.cpu.append([time.perf_counter(), None])

    def stop(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.pairs[-1][1] = e
        else:
            self.cpu[-1][1] = time.perf_counter()

    def ms(self):
        if self.cuda:
            if self.pairs:
                self.pairs[-1][1].synchronize()
            return [a.elapsed_time(b) for a, b in self.pairs]
        return [(b - a) * 1e3 for a, b in self.cpu]


def gather_floats(values, device):
    """Every rank's list of floats (all the same length) to every rank: [rank][i]."""
    world = dist.get_world_size()
    mine = torch.tensor(values, dtype=torch.float64, device=device)
    out = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(out, mine)
    return [o.cpu().tolist() for o in out]


def stats(xs):
    if not xs:
        return {"count": 0, "mean": 0.0, "std": 0.0, "median": 0.0, "min": 0.0, "max": 0.0}
    return {"count": len(xs), "mean": statistics.fmean(xs), "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "median": statistics.median(xs), "min": min(xs), "max": max(xs)}


# ---- all-reduce ----

def run_allreduce(args, rank, world, device):
    sizes = [parse_bytes(s) for s in args.sizes.split(",")]
    dtypes = args.dtypes.split(",")
    total, done = len(sizes) * len(dtypes), 0
    for name in dtypes:  # as TrainScope: dtypes outside, sizes inside
        dtype = DTYPES[name]
        esize = torch.tensor([], dtype=dtype).element_size()
        for size in sizes:
            elements = max(1, size // esize)
            nbytes = elements * esize
            # One checked all-reduce first: every rank adds rank + 1.
            x = torch.full((elements,), float(rank + 1), dtype=dtype, device=device)
            dist.all_reduce(x)
            want, got = world * (world + 1) / 2, x[0].item()
            if got != want:
                raise RuntimeError(f"rank {rank}: the check all-reduce summed to {got}, not {want}")
            x.zero_()
            for _ in range(args.warmup):
                dist.all_reduce(x)
            timer = Timer(device)
            for _ in range(args.iters):
                timer.start()
                dist.all_reduce(x)
                timer.stop()
            ms = timer.ms()
            per_rank = gather_floats([statistics.fmean(ms), min(ms), max(ms)], device)
            done += 1
            if rank == 0:
                t = max(r[0] for r in per_rank)
                algbw = nbytes / (t * 1e-3) / 1e9
                emit({"impl": "pytorch", "experiment": "allreduce", "backend": args.backend, "bytes": nbytes,
                      "elements": elements, "dtype": name, "world_size": world, "iters": args.iters,
                      "time_ms": t, "rank_mean_min_ms": min(r[0] for r in per_rank),
                      "fastest_ms": min(r[1] for r in per_rank), "slowest_ms": max(r[2] for r in per_rank),
                      "algbw_gbps": algbw, "busbw_gbps": algbw * 2 * (world - 1) / world,
                      "ranks": [{"rank": i, "mean_ms": r[0], "min_ms": r[1], "max_ms": r[2]}
                                for i, r in enumerate(per_rank)],
                      "status": "ok"})
                log(f"[{done}/{total}] {nbytes} B {name}: {t:.3f} ms, busbw {algbw * 2 * (world - 1) / world:.2f} GB/s")
            del x
            if device.type == "cuda":
                torch.cuda.empty_cache()


# ---- training steps: ddp and single ----

def default_bucket_split(grad_sizes, cap_bytes, first_cap_bytes=1 << 20):
    """PyTorch's default bucket assignment, roughly: parameters in reverse order, a 1 MiB first
    bucket, then buckets of cap_bytes (a tensor never split)."""
    buckets, cur, cap = [], 0, first_cap_bytes
    for s in reversed(grad_sizes):
        cur += s
        if cur >= cap:
            buckets.append(cur)
            cur, cap = 0, cap_bytes
    if cur:
        buckets.append(cur)
    return buckets


def ddp_bucket_sizes(model, params):
    """The buckets' bytes as DDP reports them after its first iterations (its rebuilt buckets);
    our estimate of its default split when that is not readable."""
    grad_bytes = [p.numel() * p.element_size() for p in params]
    try:
        data = model._get_ddp_logging_data()
        sizes = [int(s) for s in str(data.get("bucket_sizes", "")).split(",") if s.strip()]
        cap = int(data.get("bucket_cap_bytes", 25 << 20))
        if sizes and sum(sizes) == sum(grad_bytes):
            return sizes, "ddp logging data"
    except Exception:  # a private API: its absence only costs the exact split
        cap = 25 << 20
    return default_bucket_split(grad_bytes, cap), "estimated (1 MiB first, then 25 MiB)"


def optimizer_state_bytes(opt):
    inner = getattr(opt, "optim", opt)  # ZeroRedundancyOptimizer keeps this rank's shard in .optim
    n = 0
    for st in inner.state.values():
        for v in st.values():
            if torch.is_tensor(v):
                n += v.numel() * v.element_size()
    return n


def run_train(args, rank, world, device, distributed):
    size, ctx = args.size, args.context_length
    d, f, layers, h = PRESETS[size]
    cuda = device.type == "cuda"
    torch.manual_seed(args.seed)
    model = TransformerLM(args.vocab_size, ctx, d, f, layers, h, args.attention, device)
    params = list(model.parameters())
    parameter_bytes = sum(p.numel() * p.element_size() for p in params)
    # The global batch of b·world rows from one seed; this rank takes rows [rank·b, (rank+1)·b).
    g = torch.Generator().manual_seed(args.seed + 1)
    xs = torch.randint(args.vocab_size, (args.batch * world, ctx), generator=g)
    ys = torch.randint(args.vocab_size, (args.batch * world, ctx), generator=g)
    x = xs[rank * args.batch:(rank + 1) * args.batch].to(device)
    y = ys[rank * args.batch:(rank + 1) * args.batch].to(device)
    net = model
    if distributed:
        # PyTorch's defaults: 25 MiB buckets (1 MiB first), buffers broadcast each forward.
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if cuda else None)
    ddp_net = net
    if args.compile != "none":
        # torch.compile over DDP (DDPOptimizer splits the graph at the buckets: optimize_ddp).
        net = torch.compile(net, mode=None if args.compile == "default" else args.compile)
    cudagraphs = args.compile == "reduce-overhead"
    opt_kwargs = dict(lr=args.lr, weight_decay=0.01)
    if cuda:
        opt_kwargs["fused"] = True
    if args.zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(net.parameters(), optimizer_class=torch.optim.AdamW, **opt_kwargs)
    else:
        opt = torch.optim.AdamW(net.parameters(), **opt_kwargs)
    dtype = {"bf16": torch.bfloat16, "fp32": None}[args.precision]

    def step_once(t_fwd, t_bwd, t_opt, t_tot):
        opt.zero_grad(set_to_none=True)
        if cudagraphs:
            torch.compiler.cudagraph_mark_step_begin()  # a new step: the last one's outputs may go
        t_tot.start()
        t_fwd.start()
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            loss = F.cross_entropy(net(x).reshape(-1, args.vocab_size), y.reshape(-1))
        t_fwd.stop()
        t_bwd.start()
        loss.backward()  # DDP: the buckets' all-reduces run during it; it ends once they are waited for
        t_bwd.stop()
        t_opt.start()
        opt.step()
        t_opt.stop()
        t_tot.stop()
        return loss

    def timed_steps(n, sync=True):
        timers = [Timer(device) for _ in range(4)]
        losses = []
        for _ in range(n):
            if sync or not distributed:
                losses.append(step_once(*timers))
            else:
                with ddp_net.no_sync():
                    losses.append(step_once(*timers))
            if cuda:
                torch.cuda.synchronize()
        return [t.ms() for t in timers], losses

    for _ in range(args.warmup):
        timed_steps(1)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    (fwd, bwd, optm, tot), losses = timed_steps(args.steps)
    peak = torch.cuda.max_memory_allocated() if cuda else 0
    local_loss = losses[-1].item()  # the last step's: cudagraph trees keep its output
    opt_state = optimizer_state_bytes(opt)

    out = {"impl": "pytorch", "experiment": "ddp" if distributed else "single", "backend": args.backend if distributed else None,
           "strategy": ("pytorch-ddp-zero" if args.zero else "pytorch-ddp") if distributed else "single",
           "sharded": bool(args.zero), "size": size, "context": ctx, "batch_per_rank": args.batch,
           "precision": args.precision, "attention": args.attention, "world_size": world,
           "device": str(device) if not distributed else device.type, "warmup": args.warmup, "steps": args.steps,
           "compile": args.compile}
    if not distributed:
        out.update(step_ms=statistics.fmean(tot), step_std_ms=stats(tot)["std"], forward_ms=statistics.fmean(fwd),
                   backward_ms=statistics.fmean(bwd), optimizer_ms=statistics.fmean(optm), total=stats(tot),
                   memory_peak=peak, parameter_bytes=parameter_bytes, optimizer_state_bytes=opt_state,
                   loss=local_loss, status="ok")
        emit(out)
        return

    # Per step the slowest rank (a step ends when every rank's does), per phase likewise.
    n = args.steps
    rows = gather_floats(fwd + bwd + optm + tot, device)
    phase = lambda k, i: max(r[k * n + i] for r in rows)
    step_max = [phase(3, i) for i in range(n)]
    mem = gather_floats([float(peak), float(opt_state), local_loss], device)
    bucket_sizes, bucket_source = ddp_bucket_sizes(ddp_net, params)
    if bucket_source.startswith("ddp"):
        bucket_cap = int(ddp_net._get_ddp_logging_data().get("bucket_cap_bytes", 25 << 20))
    else:
        bucket_cap = 25 << 20

    hidden = None
    if args.hidden_estimate and args.compile == "none":
        # Hidden communication, estimated (PyTorch does not report it): the same steps without
        # gradient synchronisation (DDP's no_sync) give the compute; the exposed communication is
        # the step's excess over it; all-reducing DDP's buckets alone, one after another, gives
        # the communication's own time; hidden = own − exposed, its share = hidden / own.
        (_, _, _, tot_ns), _ = timed_steps(n, sync=False)
        rows_ns = gather_floats(tot_ns, device)
        nosync = statistics.fmean(max(r[i] for r in rows_ns) for i in range(n))
        bufs = [torch.zeros(max(1, b // 4), dtype=torch.float32, device=device) for b in bucket_sizes]
        for _ in range(2):
            for b in bufs:
                dist.all_reduce(b)
        timer = Timer(device)
        for _ in range(n):
            timer.start()
            for b in bufs:
                dist.all_reduce(b)
            timer.stop()
        comm_rows = gather_floats(timer.ms(), device)
        comm = statistics.fmean(max(r[i] for r in comm_rows) for i in range(n))
        del bufs
        step = statistics.fmean(step_max)
        exposed = min(max(0.0, step - nosync), comm)
        hidden = {"nosync_step_ms": nosync, "comm_alone_ms": comm, "exposed_ms": exposed,
                  "hidden_ms": comm - exposed, "hidden_share": (comm - exposed) / comm if comm > 0 else 0.0,
                  "method": "estimate: step − no_sync step = exposed; buckets all-reduced alone = total"}
    if rank == 0:
        out.update(step_ms=statistics.fmean(step_max), step_std_ms=stats(step_max)["std"],
                   forward_ms=statistics.fmean(phase(0, i) for i in range(n)),
                   backward_ms=statistics.fmean(phase(1, i) for i in range(n)),
                   optimizer_ms=statistics.fmean(phase(2, i) for i in range(n)), total=stats(step_max),
                   bucket_cap_bytes=bucket_cap, bucket_sizes=bucket_sizes, bucket_source=bucket_source,
                   comm_bytes=sum(bucket_sizes), parameter_bytes=parameter_bytes,
                   memory_peak=max(int(m[0]) for m in mem), memory_peak_per_rank=[int(m[0]) for m in mem],
                   optimizer_state_bytes=max(int(m[1]) for m in mem),
                   optimizer_state_bytes_per_rank=[int(m[1]) for m in mem],
                   global_loss=statistics.fmean(m[2] for m in mem), status="ok")
        if hidden:
            out.update(hidden_ms=hidden["hidden_ms"], hidden_share=hidden["hidden_share"], hidden_estimate=hidden)
        emit(out)


# ---- ranks ----

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(local_rank, args, rank=None, world=None):
    rank = local_rank if rank is None else rank
    world = args.world if world is None else world
    local_rank = int(os.environ.get("LOCAL_RANK", local_rank))
    device = torch.device("cpu")
    init = dict(backend=args.backend, rank=rank, world_size=world)
    if args.backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        init["device_id"] = device
    distributed = args.cmd != "single"
    if distributed:
        dist.init_process_group(**init)
    try:
        if args.cmd == "allreduce":
            run_allreduce(args, rank, world, device)
        else:
            try:
                run_train(args, rank, world if distributed else 1, device, distributed)
            except torch.OutOfMemoryError as e:
                # Every rank meets the same OOM at the same size, so none is left waiting.
                if rank == 0:
                    emit({"impl": "pytorch", "experiment": args.cmd, "size": args.size, "precision": args.precision,
                          "sharded": bool(getattr(args, "zero", False)), "world_size": world, "status": "OOM",
                          "error": str(e).splitlines()[0]})
    finally:
        if distributed and dist.is_initialized():
            if sys.exc_info()[0] is None:
                dist.barrier()  # no rank tears its group down while another still talks to it
            dist.destroy_process_group()
    # A finished rank leaves at once: with Gloo, c10d's teardown at interpreter exit now and then
    # aborts ("terminate called without an active exception", after the results are out), which
    # would fail the whole spawn for nothing.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--backend", choices=["gloo", "nccl"], default=argparse.SUPPRESS,
                        help="gloo (CPU tensors) | nccl (one GPU per rank); default nccl when a GPU is present")
    common.add_argument("--world", type=int, default=argparse.SUPPRESS,
                        help="ranks to spawn (default: the GPUs on NCCL, 2 on Gloo); ignored under torchrun")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                parents=[common])
    sub = p.add_subparsers(dest="cmd", required=True)
    ar = sub.add_parser("allreduce", parents=[common], help="time dist.all_reduce per size and dtype")
    ar.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma list (default {DEFAULT_SIZES}; MB = 10^6, MiB = 2^20)")
    ar.add_argument("--dtypes", default="fp32,bf16")
    ar.add_argument("--warmup", type=int, default=5)
    ar.add_argument("--iters", type=int, default=20)
    for name, helptext in (("ddp", "DistributedDataParallel training steps (default buckets)"),
                           ("single", "the same training step on one device, no DDP")):
        t = sub.add_parser(name, parents=[common], help=helptext)
        t.add_argument("--size", default="xl-2025", choices=list(PRESETS))
        t.add_argument("--context-length", type=int, default=256)
        t.add_argument("--batch", "--batch-size", dest="batch", type=int, default=4, help="rows per rank")
        t.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
        t.add_argument("--attention", default="naive", choices=["naive", "sdpa"])
        t.add_argument("--vocab-size", type=int, default=10000)
        t.add_argument("--warmup", type=int, default=5)
        t.add_argument("--steps", type=int, default=10)
        t.add_argument("--lr", type=float, default=1e-4)
        t.add_argument("--seed", type=int, default=0)
        t.add_argument("--zero", action="store_true", help="ZeroRedundancyOptimizer(AdamW)" if name == "ddp" else argparse.SUPPRESS)
        t.add_argument("--compile", default="none", choices=["none", "default", "reduce-overhead", "max-autotune-no-cudagraphs"],
                       help="torch.compile the model (inside DDP for ddp) at this mode")
        t.add_argument("--no-hidden-estimate", dest="hidden_estimate", action="store_false",
                       help="skip the estimate of hidden communication (no_sync steps and the buckets alone)"
                       if name == "ddp" else argparse.SUPPRESS)
    args = p.parse_args()
    if not hasattr(args, "backend"):
        args.backend = "nccl" if torch.cuda.is_available() else "gloo"
    if args.cmd == "single":
        args.world = 1
    elif not hasattr(args, "world"):
        args.world = torch.cuda.device_count() if args.backend == "nccl" else 2
    if args.cmd == "allreduce":
        try:
            [parse_bytes(s) for s in args.sizes.split(",")]
        except ValueError as e:
            p.error(f"--sizes: {e}")
        for d in args.dtypes.split(","):
            if d not in DTYPES:
                p.error(f"--dtypes: '{d}' is not one of fp32, bf16")
    if args.backend == "nccl" and not torch.cuda.is_available():
        p.error("--backend nccl needs CUDA GPUs")

    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun (or srun) started us
        rank_main(int(os.environ.get("LOCAL_RANK", os.environ["RANK"])), args,
                  rank=int(os.environ["RANK"]), world=int(os.environ["WORLD_SIZE"]))
        return 0
    if args.world < 1:
        p.error("--world must be at least 1")
    if args.backend == "nccl" and args.world > torch.cuda.device_count():
        p.error(f"--world {args.world}: only {torch.cuda.device_count()} GPUs")
    if args.cmd == "single":
        rank_main(0, args, rank=0, world=1)
        return 0
    # The children inherit os.environ (spawn starts fresh interpreters with this environment).
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT") or str(free_port())
    import torch.multiprocessing as mp
    mp.spawn(rank_main, args=(args,), nprocs=args.world, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
