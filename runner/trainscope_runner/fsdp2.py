"""The distributed lab's reference for fully sharded training: PyTorch's FSDP2 (`fully_shard`)
on a model of TrainScope's own shape, one rank of a world the local launcher started (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set as torchrun sets them). It speaks the
distributed workers' lines (distributed/worker_lines.h): a "ready" line, then one
{"event":"result","experiment":"ddp","row":{...}} per step with the fields of the lab's
DdpStepRow, so that its rows sit in the same tables and lanes as the lab's own strategies.

The model is the course's Transformer as TrainScope builds it (lm.py's TransformerLM: see
there). Each block is its own FSDP unit, the root holds the embedding, the final norm and
the LM head, as FSDP2's documentation wraps a Transformer. Attention: "naive" materialises the
scores as TrainScope's naive attention does; every other choice runs PyTorch's SDPA.
Checkpointing: every k blocks or sqrt (torch.utils.checkpoint, non-reentrant); not nested."""

import math
import os
import sys

import torch
import torch.nn.functional as F

from .lm import CheckpointedBlock, StepClock, TransformerLM, join_world, rms_norm
from .protocol import UserError, emit
from .rank_trace import RankTrace
from .ranges import StepRanges


def _local_bytes(tensors):
    total = 0
    for t in tensors:
        local = t.to_local() if hasattr(t, "to_local") else t
        total += local.numel() * local.element_size()
    return total


def run(spec):
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    backend = spec.get("backend", "gloo")
    rank, world, device = join_world(backend)
    emit("ready", rank=rank, world_size=world, backend=backend,
         device=str(device))

    ddp, m = spec["ddp"], spec["model"]  # the model's shape as the lab resolved its size
    d, f, layers, heads = (int(m[k]) for k in ("d_model", "d_ff", "num_layers", "num_heads"))
    context, vocab = int(m["context_length"]), int(m["vocab_size"])
    b = int(ddp.get("batch_per_rank", 4))
    precision = ddp.get("precision", "fp32")
    checkpoint = str(ddp.get("checkpoint", "none"))
    if checkpoint == "none":
        every = 0
    elif checkpoint == "sqrt":
        every = max(1, math.ceil(math.sqrt(layers)))
    elif checkpoint.isdigit():
        every = min(int(checkpoint), layers)
    else:
        raise UserError("runner", f"fsdp2's reference checkpoints every k blocks or sqrt, not '{checkpoint}'")

    torch.manual_seed(int(ddp.get("seed", 0)))
    # Attention: naive as TrainScope's naive; any other choice is PyTorch's SDPA (its best kernel).
    model = TransformerLM(vocab, context, d, f, layers, heads, device, every,
                          naive=ddp.get("attention", "naive") == "naive")
    global_batch = b * world
    inputs = torch.randint(vocab, (global_batch, context), device=device)[rank * b:(rank + 1) * b]
    targets = torch.randint(vocab, (global_batch, context), device=device)[rank * b:(rank + 1) * b]

    bf16_params = ddp.get("param_dtype", "fp32") == "bf16"
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16 if bf16_params else None,
                                  reduce_dtype=torch.bfloat16 if bf16_params else None)
    compiled = bool(ddp.get("compile", False))
    if compiled and every not in (0, 1):
        raise UserError("runner", "fsdp2 compiled checkpoints every block or none "
                        f"(torch.compile traces a block's checkpoint), not every {every}")
    for i, block in enumerate(model.blocks):
        if compiled:  # as torchtitan: each block checkpointed, compiled, then sharded
            if every == 1:
                block = CheckpointedBlock(block)
            block = torch.compile(block)
            model.blocks.register_module(str(i), block)
        fully_shard(block, mp_policy=policy)
    if compiled:
        model.checkpoint_every = 0  # inside the blocks now
    fully_shard(model, mp_policy=policy)

    def head_and_loss(hidden, weight, target):
        logits = F.linear(rms_norm(hidden, model.norm_final.weight), weight)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1))

    if compiled:
        head_and_loss = torch.compile(head_and_loss)
    lr = float(ddp.get("learning_rate", 1e-4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, eps=1e-8)
    autocast = precision == "bf16"

    cuda = device.type == "cuda"

    clock = StepClock(device)
    mark, ms, allocated = clock.mark, clock.ms, clock.allocated

    params = list(model.parameters())
    memory_after_model = allocated()
    warmup, measured = int(ddp.get("warmup_steps", 2)), int(ddp.get("measured_steps", 5))
    # See Note [capture ranges]: the rank's warm-up and measured steps, as the C++ ranks'.
    ranges = StepRanges(device, ddp.get("cuda_profiler_range"))
    trace = RankTrace(ddp, rank, world, backend, "fsdp2", device)
    for step in range(warmup + measured):
        ranges.begin(step, step < warmup)
        trace.before_step(step)
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)
        optimizer.zero_grad(set_to_none=True)
        m0 = mark()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = model(inputs, lambda h: head_and_loss(h, model.lm_head.weight, targets))
        m1 = mark()
        after_forward = allocated()
        loss.backward()
        m2 = mark()
        after_backward = allocated()
        optimizer.step()
        m3 = mark()
        if cuda:
            m3.synchronize()
        state = [t for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t)]
        agreed = torch.tensor([loss.item(), 0.0], dtype=torch.float64, device=device)
        dist.all_reduce(agreed)
        row = {
            "rank": rank, "world_size": world, "step": step, "warmup": step < warmup,
            "forward_ms": ms(m0, m1), "backward_ms": ms(m1, m2), "comm_wait_ms": 0.0,
            "optimizer_ms": ms(m2, m3), "total_ms": ms(m0, m3), "comm_hidden_ms": -1.0,
            "collectives": 0, "launched_before_sync": 0, "comm_bytes": 0, "broadcast_bytes": 0,
            "loss": loss.item(), "global_loss": agreed[0].item() / world,
            "memory_after_model": memory_after_model, "memory_after_forward": after_forward,
            "memory_after_backward": after_backward, "memory_after_optimizer": allocated(),
            "memory_peak": torch.cuda.max_memory_allocated(device) if cuda else 0,
            "parameter_bytes": _local_bytes(params),
            "gradient_bytes": _local_bytes([p.grad for p in params if p.grad is not None]),
            "optimizer_state_bytes": _local_bytes(state), "comm_buffer_bytes": 0,
        }
        trace.after_step(step)
        ranges.end()
        emit("result", rank=rank, experiment="ddp", row=row)
    trace.finish()
    ranges.finish()
    # Every rank has sent its rows. Gloo's teardown can abort a rank whose peer already closed
    # its connections ("terminate called without an active exception", seen once in 20 runs
    # on the 2-core CI machine): meet once more, then leave without tearing the group down
    # (the process ends here; the launcher reaps it).
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
