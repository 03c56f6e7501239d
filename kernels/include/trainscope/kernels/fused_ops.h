// The fused element-wise kernels of the compiled mode (RMSNorm with the residual add, RoPE on
// the fused q/k/v projection, SwiGLU, the naive attention's softmax, cross-entropy), behind a
// LibTorch adapter that checks the tensors, fills the kernels' parameter structs and launches
// on the current CUDA stream. CPU tensors run the same computation in plain C++ (the reference
// the CPU tests hold against LibTorch). Every function computes in fp32 and rounds once to the
// output's dtype; see Note [fused element-wise kernels] in kernels/src/fused.h. Bad inputs
// throw std::invalid_argument with the reason.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

namespace ts::kernels {

// Whether this build has the CUDA versions (a CUDA toolkit and a CUDA LibTorch were found).
bool fusedKernelsBuilt();

struct RmsNormForward {
    at::Tensor out;   // like x, in out_dtype
    at::Tensor sum;   // x + residual (fp32); undefined without a residual
    at::Tensor rstd;  // (rows) fp32: 1 / sqrt(mean(sum²) + eps)
};
// x: (..., cols) fp32; residual: undefined or x's shape in fp32, bf16 or fp16; weight: (cols)
// fp32. out = (x + residual) · rstd · weight.
RmsNormForward rmsNormForward(const at::Tensor& x, const at::Tensor& residual,
                              const at::Tensor& weight, double eps, at::ScalarType out_dtype);

struct RmsNormBackward {
    at::Tensor dx;         // fp32, like the normalised input
    at::Tensor dresidual;  // in residual_dtype, when one is given
    at::Tensor dweight;    // (cols) fp32
};
// From the forward's normalised input (x, or the sum) and rstd; grad_sum (optional, fp32) is a
// gradient that reaches the sum itself (the residual stream's), added to dx.
RmsNormBackward rmsNormBackward(const at::Tensor& grad_out, const at::Tensor& grad_sum,
                                const at::Tensor& normed_input, const at::Tensor& rstd,
                                const at::Tensor& weight,
                                std::optional<at::ScalarType> residual_dtype);

// RoPE in place on the q and k thirds of qkv (batch, seq, 3·heads·head_dim), contiguous, with
// the tables cos, sin (>= seq, head_dim / 2) fp32 on the same device.
void ropeQkvInPlace(const at::Tensor& qkv, const at::Tensor& cos, const at::Tensor& sin,
                    int64_t heads);
// The gradient of that: grad rotated back on q and k, v's copied, into a new tensor.
at::Tensor ropeQkvBackward(const at::Tensor& grad, const at::Tensor& cos, const at::Tensor& sin,
                           int64_t heads);

// gu (..., 2f) = [g | u] → silu(g) · u (..., f), and its gradient with respect to gu.
at::Tensor swigluForward(const at::Tensor& gu);
at::Tensor swigluBackward(const at::Tensor& grad_h, const at::Tensor& gu);

struct SoftmaxForward {
    at::Tensor probs;  // like scores
    at::Tensor lse;    // (rows) fp32: log Σ exp of each row's unmasked scaled scores
};
// The naive attention's scale, causal mask and softmax in one pass: scores (..., queries, keys)
// contiguous fp32 / bf16 / fp16 (q·kᵀ, unscaled); probs = softmax(scores · scale) over the keys,
// those after the query masked when causal (key j of query i, j > i), in the scores' dtype;
// computed as eager computes it under autocast (the product rounded to the scores' dtype, the
// softmax in fp32), with no fp32 copy. The backward recomputes the probabilities from the
// scores and lse and returns the gradient with respect to the unscaled scores.
SoftmaxForward attentionSoftmaxForward(const at::Tensor& scores, double scale, bool causal);
at::Tensor attentionSoftmaxBackward(const at::Tensor& grad_probs, const at::Tensor& scores,
                                    const at::Tensor& lse, double scale, bool causal);

struct CrossEntropyForward {
    at::Tensor loss;  // () fp32: the mean over rows
    at::Tensor lse;   // (rows) fp32
};
// logits (rows, vocab), last dimension contiguous, fp32 / bf16 / fp16; targets (rows) int64 in
// [0, vocab) (a target outside makes the loss NaN). No fp32 copy of the logits is made.
CrossEntropyForward crossEntropyForward(const at::Tensor& logits, const at::Tensor& targets);
// dlogits = (softmax − onehot) · grad_loss / rows, in the logits' dtype; grad_loss a one-value
// fp32 tensor on the logits' device (read there: no synchronisation).
at::Tensor crossEntropyBackward(const at::Tensor& grad_loss, const at::Tensor& logits,
                                const at::Tensor& targets, const at::Tensor& lse);

struct AdamWSettings {
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;
};
// One AdamW step, LibTorch's _fused_adamw_ arithmetic, over every parameter i in few launches:
// params[i], exp_avgs[i], exp_avg_sqs[i] fp32 and contiguous; steps[i] the step number this
// update is (fp32, one value, on the device: advanced by the caller, as PyTorch does); grads[i]
// fp32 or, where copies[i] is defined, the copy's dtype; copies[i] (undefined, or a bf16 / fp16
// tensor of the parameter's shape) receives the updated parameter. Note [low-precision weight
// copies] in kernels/src/fused_ops.cu says why.
void adamWStep(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
               const std::vector<at::Tensor>& exp_avgs, const std::vector<at::Tensor>& exp_avg_sqs,
               const std::vector<at::Tensor>& steps, const std::vector<at::Tensor>& copies,
               const AdamWSettings& settings);

}  // namespace ts::kernels
