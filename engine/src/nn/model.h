// The course's decoder-only Transformer LM in LibTorch: token embedding; pre-norm blocks of
// RMSNorm, causal multi-head self-attention with RoPE, RMSNorm, SwiGLU feed-forward; final
// RMSNorm; LM head. No biases.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <vector>

#include "core/config.h"

namespace ts {

// Note [fused projections]: q, k and v share one (3·d, d) weight and SwiGLU's W1 and W3
// one (2·d_ff, d) weight. That is the same function and the same parameter count as
// separate matrices (the rows are just stacked), with one larger GEMM instead of three or
// two smaller ones.
class TransformerBlockImpl : public torch::nn::Module {
public:
    TransformerBlockImpl(const ModelConfig& cfg, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                       AttentionImpl attention);

private:
    int64_t d_model_, num_heads_, d_ff_;
    at::Tensor norm1_, w_qkv_, w_o_, norm2_, w_13_, w_2_;
};
TORCH_MODULE(TransformerBlock);

class TransformerLMImpl : public torch::nn::Module {
public:
    // Random weights, created directly on the device of `options` (a 2.7B model never
    // passes through host memory).
    TransformerLMImpl(const ModelConfig& cfg, AttentionImpl attention,
                      const at::TensorOptions& options);
    // tokens (batch, seq) int64 → logits (batch, seq, vocab).
    at::Tensor forward(const at::Tensor& tokens);
    const ModelConfig& config() const { return cfg_; }
    void setAttention(AttentionImpl a) { attention_ = a; }

private:
    ModelConfig cfg_;
    AttentionImpl attention_;
    at::Tensor embedding_, norm_final_, lm_head_;
    at::Tensor rope_cos_, rope_sin_;  // (context_length, head_dim / 2), buffers
    std::vector<TransformerBlock> blocks_;
};
TORCH_MODULE(TransformerLM);

// Mean next-token cross-entropy of logits (batch, seq, vocab) against targets (batch, seq).
at::Tensor crossEntropy(const at::Tensor& logits, const at::Tensor& targets);

// RoPE on x (batch, heads, seq, head_dim), rotating interleaved pairs (x0,x1), (x2,x3), ...
at::Tensor applyRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// RMSNorm computed in float32, returned in x's dtype.
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps = 1e-5);

}  // namespace ts
