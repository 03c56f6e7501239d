// The course's decoder-only Transformer LM in LibTorch: token embedding; pre-norm blocks of
// RMSNorm, causal multi-head self-attention with RoPE, RMSNorm, SwiGLU feed-forward; final
// RMSNorm; LM head. No biases.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <functional>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/point.h"
#include "nn/fused.h"

namespace ts {

// Note [fused projections]: q, k and v share one (3·d, d) weight and SwiGLU's W1 and W3
// one (2·d_ff, d) weight. That is the same function and the same parameter count as
// separate matrices (the rows are just stacked), with one larger GEMM instead of three or
// two smaller ones.
// Note [parameter units]: a wrapper that owns the weights (fully sharded data parallelism,
// distributed/fsdp.h) sees the model as units run in order: 0 the embedding, 1..N the blocks,
// N+1 the LM head. `enter(u)` runs before unit u's forward (a checkpoint's recompute included)
// and may set the unit's weights (unitWeights(): the model reads them through these slots);
// `leave(u, out)` runs after it with the unit's output and returns what the model goes on
// with (the same values; a wrapper may put a node in the graph that runs before the unit's
// backward). The norms' weights are not in any unit (replicatedWeights()).
struct UnitHooks {
    std::function<void(size_t unit)> enter;
    std::function<at::Tensor(size_t unit, const at::Tensor& out)> leave;
};

class TransformerBlockImpl : public torch::nn::Module {
public:
    TransformerBlockImpl(const ModelConfig& cfg, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                       AttentionImpl attention);
    // The fused model's block (see Note [fused model] in model.cpp): from the residual stream x
    // and its norm (this block's first), returns the next block's (x, norm), normalised with
    // `next_norm` (the next block's first norm's weight, or the final norm's).
    std::pair<at::Tensor, at::Tensor> forwardFused(
        const at::Tensor& x, const at::Tensor& normed, const at::Tensor& cos, const at::Tensor& sin,
        AttentionImpl attention, const at::Tensor& next_norm, at::ScalarType activations,
        KeptAttention* kept = nullptr, bool first_pass = false);
    const at::Tensor& firstNormWeight() const { return norm1_; }
    // The four linear weights, for their low-precision copies (forwardFused reads a weight's
    // copy where one is set: see Note [low-precision weight copies] in kernels/src/fused_ops.cu).
    std::vector<at::Tensor*> linearWeights() { return {&w_qkv_, &w_o_, &w_13_, &w_2_}; }
    std::vector<at::Tensor*> normWeights() { return {&norm1_, &norm2_}; }
    std::vector<at::Tensor*> linearWeightCopies() {
        return {&w_qkv_low_, &w_o_low_, &w_13_low_, &w_2_low_};
    }

private:
    int64_t d_model_, num_heads_, d_ff_;
    at::Tensor norm1_, w_qkv_, w_o_, norm2_, w_13_, w_2_;
    at::Tensor w_qkv_low_, w_o_low_, w_13_low_, w_2_low_;  // undefined unless set
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
    // The mean next-token cross-entropy against targets (batch, seq), the LM head and the loss
    // fused (linearCrossEntropy): the logits are never materialised whole.
    at::Tensor forwardLoss(const at::Tensor& tokens, const at::Tensor& targets);
    const ModelConfig& config() const { return cfg_; }
    void setAttention(AttentionImpl a) { attention_ = a; }
    // Fused: the element-wise chains run as this project's fused kernels (see Note [fused model]
    // in model.cpp); the compiled mode's model. Its loss is fusedCrossEntropy.
    void setFused(bool fused) { fused_ = fused; }
    bool fused() const { return fused_; }
    // See Note [activation checkpointing] (core/point.h): the blocks run as checkpointed segments
    // when gradients are recorded (the fused model's too: each segment's first norm is computed
    // again from its input).
    void setCheckpointing(const Checkpointing& c) { checkpoint_ = c; }
    // The fused model with our flash attention under checkpointing: attention's output is kept
    // through each checkpoint (see Note [attention kept through a checkpoint] in nn/fused.h).
    void setKeepAttention(bool keep) {
        keep_attention_ = keep;
        kept_.assign(keep ? blocks_.size() : 0, KeptAttention{});
    }
    // A checkpoint's first pass runs (SegmentCheckpoint, model.cpp).
    void setCheckpointFirstPass(bool on) { first_pass_ = on; }
    bool checkpointFirstPass() const { return first_pass_; }
    // See Note [parameter units].
    void setUnitHooks(UnitHooks hooks);
    size_t unitCount() const { return blocks_.size() + 2; }
    // Each unit's weight slots, in unit order; and every weight that is in no unit (the norms').
    std::vector<std::vector<at::Tensor*>> unitWeights();
    std::vector<at::Tensor*> replicatedWeights();
    // Blocks [begin, end) on x: checkpointed segments where the policy and grad mode say so,
    // else block by block (a checkpoint's own forward and its recompute call this).
    at::Tensor runBlocks(const at::Tensor& x, size_t begin, size_t end);
    // The fused model under autocast: the linear weights (blocks' and the LM head's) get copies
    // in `dtype` that forwardFused reads instead of casting each weight every step. Returns
    // (parameter, copy) pairs: the optimizer takes each copy's gradient for its parameter and
    // writes the updated parameter into it (FusedAdamW::setLowPrecisionCopies).
    std::vector<std::pair<at::Tensor, at::Tensor>> makeLowPrecisionCopies(at::ScalarType dtype);
    // Sets every copy from its parameter again (after the parameters were put back in place).
    void refreshLowPrecisionCopies();

private:
    at::Tensor forwardFused(const at::Tensor& x);
    // The fused model's blocks [begin, end) on the residual stream x (their first norm computed
    // from x), returning the stream after them: a checkpoint segment of the fused model.
    at::Tensor runFusedBlocks(const at::Tensor& x, size_t begin, size_t end);
    // The fused model's LM head input: the final norm's output, in the linears' dtype.
    at::Tensor forwardFusedHidden(const at::Tensor& tokens);
    // Embedding, blocks and the final norm: the LM head's input.
    at::Tensor forwardHidden(const at::Tensor& tokens);

    ModelConfig cfg_;
    AttentionImpl attention_;
    bool fused_ = false;
    Checkpointing checkpoint_;
    UnitHooks unit_hooks_;
    bool keep_attention_ = false, first_pass_ = false;
    std::vector<KeptAttention> kept_;                        // per block, while kept
    std::vector<std::pair<at::Tensor, at::Tensor>> copies_;  // (parameter, low-precision copy)
    at::Tensor lm_head_low_;
    at::Tensor embedding_, norm_final_, lm_head_;
    at::Tensor rope_cos_, rope_sin_;  // (context_length, head_dim / 2), buffers
    std::vector<TransformerBlock> blocks_;
};
TORCH_MODULE(TransformerLM);

// Mean next-token cross-entropy of logits (batch, seq, vocab) against targets (batch, seq).
at::Tensor crossEntropy(const at::Tensor& logits, const at::Tensor& targets);

// Note [fused LM head and loss]: crossEntropy(linear(x, weight), targets) without the logits.
// At the leaderboard's sequence of 32,768 tokens and a vocabulary of 151,936 the logits of one
// row are 10 GB in bf16 and twice that in fp32 for the loss, and backward wants their gradient
// as well. Here forward walks the tokens in chunks (≤ 2^29 logits each, about 2 GiB in fp32):
// a chunk's logits (a GEMM in the autocast dtype), their log-sum-exp and the chunk's loss in one
// pass of the fused cross-entropy (fp32 arithmetic, no fp32 copy of the logits); only x, the
// weight, the targets and one fp32 log-sum-exp per token are kept. Backward computes each
// chunk's logits again, softmax − one-hot scaled by the loss's gradient ÷ tokens in one pass
// (written in the logits' dtype), and from it the chunk's input gradient and its share of the
// weight's (summed in fp32). x
// (..., d), weight (vocab, d), targets (...) int64; returns the mean over tokens. `chunk_logits`:
// the most logits a chunk holds (tests make it small).
at::Tensor linearCrossEntropy(const at::Tensor& x, const at::Tensor& weight,
                              const at::Tensor& targets, int64_t chunk_logits = int64_t{1} << 29);

// RoPE on x (batch, heads, seq, head_dim), rotating interleaved pairs (x0,x1), (x2,x3), ...
at::Tensor applyRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// RMSNorm computed in float32, returned in x's dtype.
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps = 1e-5);

}  // namespace ts
