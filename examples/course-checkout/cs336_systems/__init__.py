"""The systems assignment's solutions: flash_attention (FlashAttention-2 in PyTorch and Triton;
Triton is imported under a guard), ddp (per-parameter and bucketed overlapped DDP),
sharded_optimizer (optimizer state sharding) and fsdp (fully sharded weights)."""
