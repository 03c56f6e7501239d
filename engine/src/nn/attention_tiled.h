// FlashAttention-2's algorithm written with LibTorch ops (attention_tiled.cpp): the ground
// truth for the CUDA kernels' algorithm, runnable on any device. Layout (batch, heads, seq,
// head_dim). The forward and backward passes are exposed for the tests; tiledAttention()
// in attention.h wraps them as a differentiable function.
#pragma once

#include <ATen/core/Tensor.h>

namespace ts {

struct TiledTiles {
    int64_t block_m = 0;  // query rows per tile; 0: 64 on the CPU, 512 on a GPU (fewer launches)
    int64_t block_n = 0;  // key rows per tile; same default
};

struct TiledForwardResult {
    at::Tensor out;  // input dtype
    at::Tensor lse;  // (batch, heads, seqlen_q), float32 (float64 for float64 inputs)
};

// Online softmax over key tiles; saves the row logsumexp L. Computes in fp32 (fp64 for fp64).
TiledForwardResult tiledForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                bool causal, double scale, TiledTiles tiles = {});

struct TiledBackwardResult {
    at::Tensor dq, dk, dv;  // input dtype
};

// Recomputes P = exp(S − L) tile by tile, with D = rowsum(dO ∘ O).
TiledBackwardResult tiledBackward(const at::Tensor& dout, const at::Tensor& q, const at::Tensor& k,
                                  const at::Tensor& v, const at::Tensor& out, const at::Tensor& lse,
                                  bool causal, double scale, TiledTiles tiles = {});

}  // namespace ts
