// The model's element-wise chains as single differentiable ops over the fused kernels
// (kernels/, see Note [fused element-wise kernels] in kernels/src/fused.h), for the compiled mode's
// model (see Note [fused model] in model.cpp). On CPU tensors they run the kernels' CPU reference,
// so the whole fused model is tested in CI against the eager one.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <utility>

namespace ts {

// RMSNorm computed in fp32 (x fp32), returned in out_dtype (autocast's, so that the next
// linear's cast is a no-op).
at::Tensor fusedRmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps,
                        at::ScalarType out_dtype);

// (x + residual, RMSNorm(x + residual)): the residual add fused with the norm that follows it.
// x fp32; residual fp32, bf16 or fp16.
std::pair<at::Tensor, at::Tensor> fusedAddRmsNorm(const at::Tensor& x, const at::Tensor& residual,
                                                  const at::Tensor& weight, double eps,
                                                  at::ScalarType out_dtype);

// RoPE applied in place to the q and k parts of the fused projection qkv (batch, seq,
// 3·heads·head_dim); returns qkv. The tables are the model's (context, head_dim / 2) fp32.
at::Tensor fusedRopeQkv(const at::Tensor& qkv, const at::Tensor& cos, const at::Tensor& sin,
                        int64_t heads);

// silu(g) · u of gu = [g | u] (..., 2f).
at::Tensor fusedSwiglu(const at::Tensor& gu);

// q, k, v (batch, heads, seq, head_dim) as views of the fused projection qkv (batch, seq,
// 3·heads·head_dim), whose gradients the backward writes into one tensor in one pass (Note [one
// gradient for q, k and v] in fused.cpp).
std::array<at::Tensor, 3> splitQkv(const at::Tensor& qkv, int64_t heads);

// The course's naive attention (q·kᵀ, scale, causal mask, softmax, ·v) with the scale, mask and
// softmax as one op (kernels::attentionSoftmaxForward): the two matmuls stay LibTorch's, as
// torch.compile keeps them. q, k, v (batch, heads, seq, head_dim).
at::Tensor fusedNaiveAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               bool causal);

// Mean cross-entropy of logits (..., vocab) against targets (...), without an fp32 copy of the
// logits.
at::Tensor fusedCrossEntropy(const at::Tensor& logits, const at::Tensor& targets);

// Causal attention with this project's kernels straight on the fused projection qkv (batch,
// seq, 3·heads·head_dim): q, k and v are read in place, the output is written as (batch, seq,
// heads·head_dim) and the backward writes dq, dk, dv into one (batch, seq, 3·…) gradient, so
// no transpose or copy runs either way. Empty when the kernels do not take these inputs
// (another device or dtype, a head dim they are not built for): then the caller attends the
// usual way.
//
// Note [attention kept through a checkpoint]: with `kept`, a checkpoint's recompute does not
// run attention's forward again. In a checkpoint's first pass (no gradients recorded) the output
// and its log-sum-exp are computed and kept in `kept`; in the recompute (recorded) they are taken
// from it, with q, k and v recomputed as before, and attention's backward reads them (a slot
// filled already is used in a first pass too: nested checkpoints). What is kept per block is one
// (batch, seq, d_model) output and a float per head and token; what is saved is one attention
// forward per block and step (at the leaderboard's 32,768 tokens the largest op there is).
struct KeptAttention {
    at::Tensor out, lse;
};
at::Tensor flashAttentionQkv(const at::Tensor& qkv, int64_t heads, KeptAttention* kept = nullptr,
                             bool first_pass = false);

}  // namespace ts
