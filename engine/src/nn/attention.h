// Attention implementations behind one call, shared by the Transformer LM and the
// attention benchmark. Layout everywhere: (batch, heads, sequence, head_dim).
#pragma once

#include <ATen/core/Tensor.h>

#include "core/config.h"

namespace ts {

// Scaled dot-product attention with the chosen backend; `causal` masks key j > query i
// (aligned at the start when query and key lengths differ). Differentiable for every backend.
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, AttentionImpl impl,
                  bool causal);

// QKᵀ/√d, causal mask, softmax, ·V, as the course writes it.
at::Tensor naiveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal);

// LibTorch's fused scaled_dot_product_attention (LibTorch picks its backend).
at::Tensor sdpaAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         bool causal);

// FlashAttention-2's algorithm in LibTorch ops (attention_tiled.cpp), any device.
at::Tensor tiledAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal);

// This project's CUDA kernels (attention_flash.cpp); throws where they are not built.
at::Tensor flashAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          bool causal);

}  // namespace ts
