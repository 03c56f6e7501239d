// What the fused-op tests share (tst_fused on the CPU, tst_fused_gpu): the relative error, and
// the fused model held against the eager one on the same weights and batch.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/autocast.h"
#include "nn/fused.h"
#include "nn/model.h"

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
inline ModelStep runModelStep(TransformerLM& model, bool fused, const at::Tensor& tokens, const at::Tensor& targets,
                              Precision precision) {
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
inline void expectFusedMatchesEager(TransformerLM& model, const at::Tensor& tokens, const at::Tensor& targets,
                                    Precision precision, double tol, double grad_tol, const std::string& what) {
    const ModelStep eager = runModelStep(model, false, tokens, targets, precision);
    const ModelStep fused = runModelStep(model, true, tokens, targets, precision);
    EXPECT_EQ(fused.logits.scalar_type(), eager.logits.scalar_type()) << what;
    EXPECT_LT(relErr(fused.logits, eager.logits), tol) << what;
    EXPECT_LT(relErr(fused.loss, eager.loss), tol) << what;
    const auto names = model->named_parameters().keys();
    for (size_t i = 0; i < eager.grads.size(); ++i)
        EXPECT_LT(relErr(fused.grads[i], eager.grads[i]), grad_tol) << what << " " << names[i];
}

}  // namespace ts::test
