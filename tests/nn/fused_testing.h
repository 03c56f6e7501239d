// What the fused-op tests share (tst_fused on the CPU, tst_fused_gpu): the relative error, and
// the fused model held against the eager one on the same weights and batch.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn/autocast.h"
#include "nn/fused.h"
#include "nn/model.h"
#include "trainscope/kernels/fused_ops.h"

namespace ts::test {

// ‖a − b‖ / ‖b‖ in float64 on the CPU; a non-finite a never passes.
inline double relErr(const at::Tensor& a, const at::Tensor& b) {
    const at::Tensor x = a.to(at::kCPU, at::kDouble), y = b.to(at::kCPU, at::kDouble);
    if (!at::isfinite(x).all().item<bool>()) return 1e30;
    return (x - y).norm().item<double>() / std::max(y.norm().item<double>(), 1e-30);
}

struct ModelStep {
    at::Tensor logits, loss;
    std::vector<at::Tensor> grads;  // every parameter's, in parameters() order
};

// One forward (under autocast for `precision`), loss and backward of `model`, fused or eager.
inline ModelStep runModelStep(TransformerLM& model, bool fused, const at::Tensor& tokens,
                              const at::Tensor& targets, Precision precision) {
    model->setFused(fused);
    model->zero_grad();
    at::Tensor logits, loss;
    {
        AutocastScope autocast(tokens.device().type(), precision);
        logits = model->forward(tokens);
        loss = fused ? fusedCrossEntropy(logits, targets) : crossEntropy(logits, targets);
    }
    loss.backward();
    ModelStep s{logits.detach(), loss.detach(), {}};
    for (const auto& p : model->parameters()) s.grads.push_back(p.grad().clone());
    return s;
}

// The fused model's logits and loss within `tol` of the eager model's, each gradient within
// `grad_tol`.
inline void expectFusedMatchesEager(TransformerLM& model, const at::Tensor& tokens,
                                    const at::Tensor& targets, Precision precision, double tol,
                                    double grad_tol, const std::string& what) {
    const ModelStep eager = runModelStep(model, false, tokens, targets, precision);
    const ModelStep fused = runModelStep(model, true, tokens, targets, precision);
    EXPECT_EQ(fused.logits.scalar_type(), eager.logits.scalar_type()) << what;
    EXPECT_LT(relErr(fused.logits, eager.logits), tol) << what;
    EXPECT_LT(relErr(fused.loss, eager.loss), tol) << what;
    const auto names = model->named_parameters().keys();
    for (size_t i = 0; i < eager.grads.size(); ++i)
        EXPECT_LT(relErr(fused.grads[i], eager.grads[i]), grad_tol) << what << " " << names[i];
}

// The naive attention's fused scale, mask and softmax (kernels::attentionSoftmaxForward and
// its backward) against eager's chain as naiveAttention runs it under autocast: the scaling in
// the scores' dtype, the causal mask, the softmax in fp32 and the cast back; the gradient by
// autograd through that chain. Scores (2, 3, queries, keys) on `options`' device.
inline void expectAttentionSoftmaxMatchesEager(const at::TensorOptions& options,
                                               at::ScalarType dtype, bool causal, int64_t queries,
                                               int64_t keys, double tol, const std::string& what) {
    at::manual_seed(7);
    const at::Tensor scores = (4 * at::randn({2, 3, queries, keys}, options)).to(dtype);
    const at::Tensor g = at::randn({2, 3, queries, keys}, options).to(dtype);
    const double scale = 1.0 / std::sqrt(16.0);
    const at::Tensor b = scores.detach().clone().requires_grad_(true);
    at::Tensor x = b * scale;
    if (causal)
        x = x.masked_fill(at::ones({queries, keys}, options.dtype(at::kBool)).triu(1),
                          -std::numeric_limits<double>::infinity());
    const at::Tensor ref = at::softmax(x.to(at::kFloat), -1).to(dtype);
    const at::Tensor ref_grad = torch::autograd::grad({ref}, {b}, {g})[0];

    const kernels::SoftmaxForward r = kernels::attentionSoftmaxForward(scores, scale, causal);
    EXPECT_EQ(r.probs.scalar_type(), dtype) << what;
    EXPECT_LT(relErr(r.probs, ref), tol) << what;
    if (causal)  // masked keys are exactly zero
        EXPECT_EQ(r.probs.masked_select(at::ones({queries, keys}, options.dtype(at::kBool)).triu(1))
                      .abs()
                      .sum()
                      .item<double>(),
                  0.0)
            << what;
    const at::Tensor grad = kernels::attentionSoftmaxBackward(g, scores, r.lse, scale, causal);
    EXPECT_EQ(grad.scalar_type(), dtype) << what;
    EXPECT_LT(relErr(grad, ref_grad), tol) << what;
}

}  // namespace ts::test
