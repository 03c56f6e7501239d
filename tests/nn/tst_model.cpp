// The Transformer LM: parameter counts, shapes, that it learns, autocast dtypes, the optimizer.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>

#include "core/point.h"
#include "nn/autocast.h"
#include "nn/model.h"
#include "nn/optimizer.h"

namespace {

int64_t countParameters(ts::TransformerLM& model) {
    int64_t n = 0;
    for (const auto& p : model->parameters()) n += p.numel();
    return n;
}

TEST(Model, EveryPresetHasTheFormulaParameterCount) {
    // On the meta device: shapes without memory, so even 2.7B is instant.
    for (const auto& name : ts::modelPresetNames()) {
        ts::ModelConfig cfg = *ts::modelPreset(name);
        ts::TransformerLM model(cfg, ts::AttentionImpl::Naive,
                                at::TensorOptions().device(at::kMeta));
        EXPECT_EQ(countParameters(model), ts::parameterCount(cfg)) << name;
    }
}

TEST(Model, OutputShapes) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 16;
    ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
    at::Tensor tokens = at::randint(cfg.vocab_size, {3, 16}, at::kLong);
    at::Tensor logits = model->forward(tokens);
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 16, cfg.vocab_size}));
    EXPECT_EQ(logits.scalar_type(), at::kFloat);
    // Shorter sequences than the context work; longer ones are refused.
    EXPECT_EQ(model->forward(tokens.slice(1, 0, 5)).size(1), 5);
    EXPECT_THROW(model->forward(at::randint(10, {1, 17}, at::kLong)), c10::Error);
}

TEST(Model, CausalNoFutureLeak) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 12;
    ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
    at::Tensor a = at::randint(cfg.vocab_size, {1, 12}, at::kLong);
    at::Tensor b = a.clone();
    b.index_put_({0, 11}, (a.index({0, 11}) + 1) % cfg.vocab_size);  // change only the last token
    at::Tensor la = model->forward(a), lb = model->forward(b);
    EXPECT_TRUE(at::allclose(la.slice(1, 0, 11), lb.slice(1, 0, 11), 1e-5, 1e-5));
    EXPECT_FALSE(at::allclose(la.slice(1, 11, 12), lb.slice(1, 11, 12), 1e-5, 1e-5));
}

TEST(Model, NaiveAndSdpaAttentionAgree) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 20;
    at::manual_seed(1);
    ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
    at::Tensor tokens = at::randint(cfg.vocab_size, {2, 20}, at::kLong);
    at::Tensor naive = model->forward(tokens);
    model->setAttention(ts::AttentionImpl::Sdpa);
    EXPECT_TRUE(at::allclose(naive, model->forward(tokens), 1e-4, 1e-4));
}

TEST(Model, LossFallsOverAdamWStepsOnAFixedBatch) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 32;
    at::manual_seed(0);
    ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
    ts::FusedAdamW opt(model->parameters(), 3e-3);
    at::Tensor x = at::randint(cfg.vocab_size, {4, 32}, at::kLong);
    at::Tensor y = at::randint(cfg.vocab_size, {4, 32}, at::kLong);
    double first = 0, last = 0;
    for (int i = 0; i < 30; ++i) {
        opt.zeroGrad();
        at::Tensor loss = ts::crossEntropy(model->forward(x), y);
        loss.backward();
        opt.step();
        (i == 0 ? first : last) = loss.item<double>();
    }
    EXPECT_NEAR(first, std::log(10000.0), 1.5);  // about uniform at the start
    EXPECT_LT(last, first - 1.0);
}

// See Note [activation checkpointing]: every policy gives the same loss and gradients as none (the
// recompute is the same computation), in fp32 and under bf16 autocast on the CPU.
TEST(Model, CheckpointingKeepsLossAndGradients) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 16;
    cfg.num_layers = 5;  // odd: uneven segments and halves
    at::manual_seed(3);
    at::Tensor tokens = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    at::Tensor targets = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    for (const ts::Precision precision : {ts::Precision::FP32, ts::Precision::BF16}) {
        auto lossAndGrads = [&](const char* policy) {
            at::manual_seed(7);
            ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
            model->setCheckpointing(*ts::parseCheckpointing(policy));
            at::Tensor loss;
            {
                ts::AutocastScope autocast(at::kCPU, precision);
                loss = ts::crossEntropy(model->forward(tokens), targets);
            }
            loss.backward();
            std::vector<at::Tensor> grads;
            for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
            return std::make_pair(loss.item<double>(), grads);
        };
        const auto [ref_loss, ref_grads] = lossAndGrads("none");
        for (const char* policy : {"1", "2", "sqrt", "nested", "8"}) {
            const auto [loss, grads] = lossAndGrads(policy);
            EXPECT_DOUBLE_EQ(loss, ref_loss) << policy << " " << ts::toString(precision);
            ASSERT_EQ(grads.size(), ref_grads.size());
            const double tol = precision == ts::Precision::FP32 ? 1e-6 : 1e-2;
            for (size_t i = 0; i < grads.size(); ++i) {
                ASSERT_TRUE(grads[i].defined()) << policy << " parameter " << i;
                EXPECT_TRUE(at::allclose(grads[i], ref_grads[i], tol, tol))
                    << policy << " " << ts::toString(precision) << " parameter " << i << ": "
                    << (grads[i] - ref_grads[i]).abs().max().item<double>();
            }
        }
    }
}

TEST(Model, FusedLmHeadAndLossMatchesTheLogitsPath) {
    // See Note [fused LM head and loss]: the same loss and gradients as crossEntropy of the
    // logits, in one chunk (the default, 2^29 logits) and in three of at most 128 tokens (300
    // tokens: 128, 128, 44), in fp32 and under bf16 autocast.
    for (const auto& [tokens, chunk] :
         {std::pair<int64_t, int64_t>{3, int64_t{1} << 29}, {300, 64 * 128}}) {
        const int64_t vocab = 64;
        at::manual_seed(1);
        const at::Tensor x0 = at::randn({1, tokens, 8});
        const at::Tensor w0 = at::randn({vocab, 8}) * 0.3;
        const at::Tensor targets = at::randint(vocab, {1, tokens}, at::kLong);
        for (const ts::Precision precision : {ts::Precision::FP32, ts::Precision::BF16}) {
            auto run = [&](bool fused) {
                at::Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
                at::Tensor loss;
                {
                    ts::AutocastScope autocast(at::kCPU, precision);
                    loss = fused ? ts::linearCrossEntropy(x, w, targets, chunk)
                                 : ts::crossEntropy(at::linear(x, w), targets);
                }
                loss.backward();
                return std::make_tuple(loss.item<double>(), x.grad(), w.grad());
            };
            const auto [ref, gx_ref, gw_ref] = run(false);
            const auto [loss, gx, gw] = run(true);
            const bool fp32 = precision == ts::Precision::FP32;
            EXPECT_NEAR(loss, ref, (fp32 ? 1e-6 : 1e-2) * std::abs(ref)) << tokens;
            // Gradients relative to their largest element.
            const double gx_max = gx_ref.abs().max().item<double>(),
                         gw_max = gw_ref.abs().max().item<double>();
            EXPECT_LT((gx - gx_ref).abs().max().item<double>(), (fp32 ? 1e-5 : 3e-2) * gx_max)
                << tokens << " " << ts::toString(precision);
            EXPECT_LT((gw - gw_ref).abs().max().item<double>(), (fp32 ? 1e-5 : 3e-2) * gw_max)
                << tokens << " " << ts::toString(precision);
        }
    }
    // In the model: forwardLoss against forward then crossEntropy, every parameter's gradient.
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 16;
    cfg.vocab_size = 128;
    const at::Tensor tokens = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    const at::Tensor targets = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    auto run = [&](bool fused) {
        at::manual_seed(7);
        ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
        at::Tensor loss = fused ? model->forwardLoss(tokens, targets)
                                : ts::crossEntropy(model->forward(tokens), targets);
        loss.backward();
        std::vector<at::Tensor> grads;
        for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
        return std::make_pair(loss.item<double>(), grads);
    };
    const auto [ref_loss, ref_grads] = run(false);
    const auto [loss, grads] = run(true);
    EXPECT_NEAR(loss, ref_loss, 1e-6);
    ASSERT_EQ(grads.size(), ref_grads.size());
    for (size_t i = 0; i < grads.size(); ++i)
        EXPECT_TRUE(at::allclose(grads[i], ref_grads[i], 1e-5, 1e-6)) << "parameter " << i;
}

TEST(Model, FusedModelCheckpointsAndFusesItsLoss) {
    // The fused model (its kernels' CPU reference here) with checkpoint segments, each computing
    // its first norm again from its input, and with the fused LM head and loss: the same loss
    // and gradients as the fused model without them.
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 16;
    cfg.num_layers = 5;
    at::manual_seed(3);
    const at::Tensor tokens = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    const at::Tensor targets = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    auto lossAndGrads = [&](const char* policy, bool fused_loss) {
        at::manual_seed(7);
        ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
        model->setFused(true);
        model->setCheckpointing(*ts::parseCheckpointing(policy));
        at::Tensor loss = fused_loss ? model->forwardLoss(tokens, targets)
                                     : ts::crossEntropy(model->forward(tokens), targets);
        loss.backward();
        std::vector<at::Tensor> grads;
        for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
        return std::make_pair(loss.item<double>(), grads);
    };
    const auto [ref_loss, ref_grads] = lossAndGrads("none", false);
    for (const auto& [policy, fused_loss] : {std::pair<const char*, bool>{"1", false},
                                             {"2", false},
                                             {"nested", false},
                                             {"none", true},
                                             {"1", true}}) {
        const auto [loss, grads] = lossAndGrads(policy, fused_loss);
        EXPECT_NEAR(loss, ref_loss, 1e-6) << policy << " " << fused_loss;
        ASSERT_EQ(grads.size(), ref_grads.size());
        for (size_t i = 0; i < grads.size(); ++i)
            EXPECT_TRUE(at::allclose(grads[i], ref_grads[i], 1e-5, 1e-6))
                << policy << " " << fused_loss << " parameter " << i << ": "
                << (grads[i] - ref_grads[i]).abs().max().item<double>();
    }
}

TEST(Model, CheckpointingPolicies) {
    using K = ts::Checkpointing::Kind;
    EXPECT_EQ(ts::parseCheckpointing("none")->kind, K::None);
    EXPECT_EQ(ts::parseCheckpointing("4")->every, 4);
    EXPECT_EQ(ts::parseCheckpointing("nested")->kind, K::Nested);
    EXPECT_FALSE(ts::parseCheckpointing("0"));
    EXPECT_FALSE(ts::parseCheckpointing("every"));
    EXPECT_FALSE(ts::parseCheckpointing("-2"));
    EXPECT_EQ(ts::checkpointSegment(*ts::parseCheckpointing("sqrt"), 32), 6);  // ⌈√32⌉
    EXPECT_EQ(ts::checkpointSegment(*ts::parseCheckpointing("64"), 32), 32);
    EXPECT_EQ(ts::checkpointSegment(*ts::parseCheckpointing("nested"), 32), 0);
    for (const char* p : {"none", "3", "sqrt", "nested"})
        EXPECT_EQ(ts::toString(*ts::parseCheckpointing(p)), p);
}

TEST(Optimizer, FusedAdamWMatchesLibTorchAdamW) {
    at::manual_seed(3);
    std::vector<at::Tensor> a = {at::randn({5, 7}).requires_grad_(),
                                 at::randn({3}).requires_grad_()};
    std::vector<at::Tensor> b = {a[0].detach().clone().requires_grad_(),
                                 a[1].detach().clone().requires_grad_()};
    ts::FusedAdamW ours(a, 1e-2, 0.9, 0.999, 1e-8, 0.01);
    torch::optim::AdamW theirs(
        b, torch::optim::AdamWOptions(1e-2).betas({0.9, 0.999}).eps(1e-8).weight_decay(0.01));
    for (int step = 0; step < 5; ++step) {
        std::vector<at::Tensor> g = {at::randn({5, 7}), at::randn({3})};
        for (size_t i = 0; i < 2; ++i) {
            a[i].mutable_grad() = g[i].clone();
            b[i].mutable_grad() = g[i].clone();
        }
        ours.step();
        theirs.step();
    }
    for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(at::allclose(a[i], b[i], 1e-5, 1e-6)) << i;
    EXPECT_EQ(ours.stepCount(), 5);
}

TEST(Optimizer, GradScalerSkipsAStepWithInfAndBacksOff) {
    at::Tensor p = at::ones({4}).requires_grad_();
    ts::FusedAdamW opt({p}, 0.1);
    ts::GradScaler scaler(at::TensorOptions(), 1024.0);
    p.mutable_grad() = at::full({4}, std::numeric_limits<float>::infinity());
    scaler.step(opt, {p});
    EXPECT_TRUE(at::equal(p.detach(), at::ones({4})));  // skipped
    EXPECT_DOUBLE_EQ(scaler.currentScale(), 512.0);
    p.mutable_grad() = at::full({4}, 512.0f);  // scaled gradient of 1.0
    scaler.step(opt, {p});
    EXPECT_TRUE(at::all(p.detach() < 1.0).item<bool>());  // stepped
    EXPECT_DOUBLE_EQ(scaler.currentScale(), 512.0);
}

TEST(Autocast, Bf16OnTheCpu) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 8;
    ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
    at::Tensor tokens = at::randint(cfg.vocab_size, {2, 8}, at::kLong);
    at::Tensor logits, loss;
    {
        ts::AutocastScope scope(at::kCPU, ts::Precision::BF16);
        EXPECT_TRUE(at::autocast::is_autocast_enabled(at::kCPU));
        logits = model->forward(tokens);
        loss = ts::crossEntropy(logits, at::randint(cfg.vocab_size, {2, 8}, at::kLong));
        // Matmuls run in bf16; the norm and the loss stay in fp32.
        EXPECT_EQ(at::linear(at::randn({2, 4}), at::randn({3, 4})).scalar_type(), at::kBFloat16);
        EXPECT_EQ(ts::rmsNorm(at::randn({2, 4}), at::ones({4})).scalar_type(), at::kFloat);
    }
    EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    EXPECT_EQ(loss.scalar_type(), at::kFloat);
    EXPECT_EQ(model->forward(tokens).scalar_type(), at::kFloat);  // off again after the scope
}

}  // namespace
