// The fused ops on the CPU (the kernels' CPU reference, kernels/src/fused_ref.cpp) against
// LibTorch's own ops, forward and backward, and the fused model (see Note [fused model]) against
// the eager one. The same ops on the GPU: tst_fused_gpu.cpp.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <stdexcept>
#include <string>

#include "nn/autocast.h"
#include "nn/fused.h"
#include "nn/fused_testing.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "trainscope/kernels/fused_ops.h"

namespace {

using ts::test::relErr;

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().requires_grad_(true); }

std::vector<at::Tensor> grads(const at::Tensor& out, const std::vector<at::Tensor>& inputs,
                              const at::Tensor& g) {
    return torch::autograd::grad({out}, inputs, {g});
}

TEST(FusedOps, RmsNormMatchesLibTorch) {
    at::manual_seed(1);
    const at::Tensor x = at::randn({3, 5, 96}), w = at::randn({96}), g = at::randn({3, 5, 96});
    at::Tensor xa = leaf(x), wa = leaf(w), xb = leaf(x), wb = leaf(w);
    const at::Tensor fused = ts::fusedRmsNorm(xa, wa, 1e-5, at::kFloat);
    const at::Tensor ref = at::rms_norm(xb, {96}, wb, 1e-5);
    EXPECT_LT(relErr(fused, ref), 1e-6);
    const auto gf = grads(fused, {xa, wa}, g), gr = grads(ref, {xb, wb}, g);
    EXPECT_LT(relErr(gf[0], gr[0]), 1e-5);
    EXPECT_LT(relErr(gf[1], gr[1]), 1e-5);
}

// x fp32 + a bf16 projection → (fp32 sum, bf16 norm): the norm is eager's fp32 norm rounded once.
TEST(FusedOps, AddRmsNormMatchesLibTorchInEveryResidualDtype) {
    for (auto rt : {at::kFloat, at::kBFloat16, at::kHalf}) {
        at::manual_seed(2);
        const at::Tensor x = at::randn({4, 64}), r = at::randn({4, 64}).to(rt), w = at::randn({64});
        const at::Tensor g_sum = at::randn({4, 64}), g_out = at::randn({4, 64}).to(rt);
        at::Tensor xa = leaf(x), ra = leaf(r), wa = leaf(w), xb = leaf(x), rb = leaf(r),
                   wb = leaf(w);
        auto [sum, out] = ts::fusedAddRmsNorm(xa, ra, wa, 1e-5, rt);
        const at::Tensor ref_sum = xb + rb;  // promotes to fp32
        const at::Tensor ref_out = at::rms_norm(ref_sum, {64}, wb, 1e-5).to(rt);
        EXPECT_EQ(sum.scalar_type(), at::kFloat);
        EXPECT_EQ(out.scalar_type(), rt);
        EXPECT_LT(relErr(sum, ref_sum), 1e-7);
        // One rounding each: at most one unit in the last place of the output dtype apart.
        const double ulp = rt == at::kFloat ? 1e-6 : rt == at::kBFloat16 ? 8e-3 : 1e-3;
        EXPECT_LT(relErr(out, ref_out), ulp) << c10::toString(rt);
        // Both outputs' gradients reach x, the residual (in its dtype) and the weight.
        const auto gf = torch::autograd::grad({sum, out}, {xa, ra, wa}, {g_sum, g_out});
        const auto gr = torch::autograd::grad({ref_sum, ref_out}, {xb, rb, wb}, {g_sum, g_out});
        EXPECT_EQ(gf[1].scalar_type(), rt);
        EXPECT_LT(relErr(gf[0], gr[0]), 1e-5) << c10::toString(rt);
        EXPECT_LT(relErr(gf[1], gr[1]), ulp) << c10::toString(rt);
        EXPECT_LT(relErr(gf[2], gr[2]), 1e-5) << c10::toString(rt);
    }
}

// RoPE in place on the fused projection: q and k rotate as the eager applyRope, v is left as
// it was; the gradient flows back through the in-place op.
TEST(FusedOps, RopeInPlaceOnQkvMatchesApplyRope) {
    at::manual_seed(3);
    const int64_t b = 2, s = 9, h = 3, dh = 16, ctx = 12;
    const at::Tensor base = at::randn({b, s, 3 * h * dh});
    at::Tensor pos = at::arange(ctx, at::kDouble).unsqueeze(1);
    at::Tensor freq = at::pow(10000.0, -2.0 * at::arange(dh / 2, at::kDouble) / dh).unsqueeze(0);
    const at::Tensor cos = (pos * freq).cos().to(at::kFloat),
                     sin = (pos * freq).sin().to(at::kFloat);
    const at::Tensor g = at::randn({b, s, 3 * h * dh});

    at::Tensor xa = leaf(base), xb = leaf(base);
    const at::Tensor fused =
        ts::fusedRopeQkv(xa * 1.0, cos, sin, h);  // a non-leaf, rotated in place
    const at::Tensor t = xb.view({b, s, 3, h, dh});
    const auto heads = [&](int i) { return t.select(2, i).transpose(1, 2); };
    const at::Tensor q = ts::applyRope(heads(0), cos, sin), k = ts::applyRope(heads(1), cos, sin);
    const at::Tensor ref =
        at::stack({q.transpose(1, 2), k.transpose(1, 2), heads(2).transpose(1, 2)}, 2)
            .reshape({b, s, -1});
    EXPECT_LT(relErr(fused, ref), 1e-6);
    EXPECT_TRUE(at::equal(fused.view({b, s, 3, h, dh}).select(2, 2), t.select(2, 2)));
    EXPECT_LT(relErr(grads(fused, {xa}, g)[0], grads(ref, {xb}, g)[0]), 1e-6);
}

TEST(FusedOps, SwigluMatchesLibTorch) {
    for (auto dt : {at::kFloat, at::kBFloat16}) {
        at::manual_seed(4);
        const at::Tensor gu = at::randn({6, 2 * 40}).to(dt), g = at::randn({6, 40}).to(dt);
        at::Tensor a = leaf(gu), b = leaf(gu);
        const at::Tensor fused = ts::fusedSwiglu(a);
        // The reference in fp32, rounded once, as the kernel computes.
        const auto halves = b.to(at::kFloat).chunk(2, -1);
        const at::Tensor ref = (at::silu(halves[0]) * halves[1]).to(dt);
        const double tol = dt == at::kFloat ? 1e-6 : 8e-3;
        EXPECT_LT(relErr(fused, ref), tol);
        EXPECT_LT(relErr(grads(fused, {a}, g)[0], grads(ref, {b}, g)[0]), tol);
    }
}

TEST(FusedOps, AttentionSoftmaxMatchesTheNaiveAttentionsChain) {
    for (auto dt : {at::kFloat, at::kBFloat16, at::kHalf})
        for (bool causal : {true, false}) {
            const std::string what = std::string(c10::toString(dt)) + (causal ? " causal" : "");
            const double tol = dt == at::kFloat ? 1e-6 : dt == at::kBFloat16 ? 8e-3 : 1e-3;
            ts::test::expectAttentionSoftmaxMatchesEager(at::TensorOptions(), dt, causal, 9, 9, tol,
                                                         what);
            ts::test::expectAttentionSoftmaxMatchesEager(at::TensorOptions(), dt, causal, 5, 70,
                                                         tol, what + " 5x70");
        }
}

TEST(FusedOps, CrossEntropyMatchesLibTorchWithoutAnFp32CopyOfTheLogits) {
    for (auto dt : {at::kFloat, at::kBFloat16, at::kHalf}) {
        at::manual_seed(5);
        const at::Tensor logits = (3 * at::randn({2, 7, 50})).to(dt);
        const at::Tensor targets = at::randint(50, {2, 7}, at::kLong);
        at::Tensor a = leaf(logits), b = leaf(logits);
        const at::Tensor fused = ts::fusedCrossEntropy(a, targets);
        const at::Tensor ref =
            at::cross_entropy_loss(b.to(at::kFloat).reshape({-1, 50}), targets.reshape({-1}));
        EXPECT_EQ(fused.dim(), 0);
        EXPECT_LT(relErr(fused, ref), 1e-6) << c10::toString(dt);
        const at::Tensor g = at::full({}, 1.5);
        const at::Tensor ga = grads(fused, {a}, g)[0];
        EXPECT_EQ(ga.scalar_type(), dt);
        const double tol = dt == at::kFloat ? 1e-6 : dt == at::kBFloat16 ? 8e-3 : 1e-3;
        EXPECT_LT(relErr(ga, grads(ref, {b}, g)[0]), tol) << c10::toString(dt);
    }
}

TEST(FusedOps, BadInputsAreRefusedWithTheReason) {
    const auto message = [](auto&& f) {
        try {
            f();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_NE(message([] {
                  ts::kernels::rmsNormForward(at::randn({2, 8}).to(at::kDouble), {}, at::ones({8}),
                                              1e-5, at::kFloat);
              }).find("fp32"),
              std::string::npos);
    EXPECT_NE(
        message([] {
            ts::kernels::rmsNormForward(at::randn({2, 8}), {}, at::ones({7}), 1e-5, at::kFloat);
        }).find("weight"),
        std::string::npos);
    EXPECT_NE(message([] {
                  ts::kernels::swigluForward(at::randn({2, 7}));
              }).find("even"),
              std::string::npos);
    EXPECT_NE(message([] {
                  ts::kernels::crossEntropyForward(at::randn({2, 5}), at::zeros({3}, at::kLong));
              }).find("targets"),
              std::string::npos);
    EXPECT_NE(message([] {
                  ts::kernels::attentionSoftmaxForward(at::randn({8}), 1.0, true);
              }).find("queries, keys"),
              std::string::npos);
    EXPECT_NE(message([] {
                  const at::Tensor s = at::randn({2, 4, 4});
                  ts::kernels::attentionSoftmaxBackward(s, s, at::zeros({3}), 1.0, true);
              }).find("lse"),
              std::string::npos);
    EXPECT_NE(message([] {
                  ts::kernels::ropeQkvInPlace(at::randn({1, 4, 10}), at::ones({4, 1}),
                                              at::ones({4, 1}), 2);
              }).find("qkv"),
              std::string::npos);
}

// A target outside the vocabulary gives NaN, never a read outside the row.
TEST(FusedOps, CrossEntropyTargetOutOfRangeIsNaN) {
    const auto r =
        ts::kernels::crossEntropyForward(at::randn({2, 5}), at::tensor({1, 7}, at::kLong));
    EXPECT_TRUE(std::isnan(r.loss.item<double>()));
}

// The fused model computes the eager model's function: logits, loss and every parameter's
// gradient, in fp32 to rounding and under bf16 autocast within bf16's.
void expectFusedModelMatchesEager(ts::Precision precision, ts::AttentionImpl attention,
                                  double tol) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 24;
    at::manual_seed(7);
    ts::TransformerLM model(cfg, attention, at::TensorOptions());
    const at::Tensor tokens = at::randint(cfg.vocab_size, {2, 24}, at::kLong);
    const at::Tensor targets = at::randint(cfg.vocab_size, {2, 24}, at::kLong);
    ts::test::expectFusedMatchesEager(
        model, tokens, targets, precision, tol, 10 * tol,
        std::string(ts::toString(precision)) + " " + std::string(ts::toString(attention)));
}

TEST(FusedModel, MatchesEagerInFp32) {
    expectFusedModelMatchesEager(ts::Precision::FP32, ts::AttentionImpl::Naive, 1e-5);
    expectFusedModelMatchesEager(ts::Precision::FP32, ts::AttentionImpl::Sdpa, 1e-5);
}

TEST(FusedModel, MatchesEagerUnderBf16Autocast) {
    expectFusedModelMatchesEager(ts::Precision::BF16, ts::AttentionImpl::Naive, 2e-2);
}

// The parameters are the eager model's: switching changes how, not what, it computes.
TEST(FusedModel, HasTheSameParameters) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions().device(at::kMeta));
    const auto before = model->parameters().size();
    model->setFused(true);
    EXPECT_TRUE(model->fused());
    EXPECT_EQ(model->parameters().size(), before);
}

// Our multi-tensor AdamW computes LibTorch's _fused_adamw_, and with a bf16 copy it takes the
// copy's bf16 gradient (eager's fp32 gradient is its cast) and writes the copy of the result.
TEST(FusedOps, AdamWMatchesLibTorchsFusedAdamW) {
    at::manual_seed(11);
    const std::vector<std::vector<int64_t>> shapes{{7, 5}, {4097}, {3}};
    std::vector<at::Tensor> p1, p2, g32, g16, m1, v1, m2, v2, s1, s2, copies;
    for (const auto& shape : shapes) {
        p1.push_back(at::randn(shape));
        p2.push_back(p1.back().clone());
        g16.push_back(at::randn(shape).to(at::kBFloat16));
        g32.push_back(g16.back().to(at::kFloat));
        for (auto* v : {&m1, &v1, &m2, &v2}) v->push_back(at::zeros(shape));
        s1.push_back(at::zeros({}));
        s2.push_back(at::zeros({}));
        copies.push_back(at::empty(shape, at::kBFloat16));
    }
    const ts::kernels::AdamWSettings set{3e-3, 0.9, 0.95, 1e-8, 0.1};
    for (int step = 0; step < 3; ++step) {
        at::_foreach_add_(s1, 1);
        at::_foreach_add_(s2, 1);
        at::_fused_adamw_(p1, g32, m1, v1, {}, s1, set.lr, set.beta1, set.beta2, set.weight_decay,
                          set.eps, false, false, std::nullopt, std::nullopt);
        ts::kernels::adamWStep(p2, g16, m2, v2, s2, copies, set);
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
        EXPECT_LT(relErr(p2[i], p1[i]), 1e-6) << i;
        EXPECT_LT(relErr(m2[i], m1[i]), 1e-6) << i;
        EXPECT_LT(relErr(v2[i], v1[i]), 1e-6) << i;
        EXPECT_TRUE(at::equal(copies[i], p2[i].to(at::kBFloat16))) << i;
    }
    // Without copies the gradients are fp32; a gradient in another dtype than its copy's is
    // refused.
    std::vector<at::Tensor> none(shapes.size());
    EXPECT_NO_THROW(ts::kernels::adamWStep(p2, g32, m2, v2, s2, none, set));
    EXPECT_THROW(ts::kernels::adamWStep(p2, g32, m2, v2, s2, copies, set), std::invalid_argument);
}

// The fused model with bf16 weight copies trains as the eager model does under bf16 autocast:
// the same losses over a few AdamW steps, within bf16's rounding.
TEST(FusedModel, WeightCopiesTrainLikeEager) {
    ts::ModelConfig cfg = *ts::modelPreset("tiny");
    cfg.context_length = 16;
    const at::Tensor tokens = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    const at::Tensor targets = at::randint(cfg.vocab_size, {2, 16}, at::kLong);
    const auto train = [&](bool fused) {
        at::manual_seed(12);
        ts::TransformerLM model(cfg, ts::AttentionImpl::Naive, at::TensorOptions());
        auto params = model->parameters();
        ts::FusedAdamW opt(params, 3e-3);
        if (fused) {
            model->setFused(true);
            std::vector<at::Tensor> copies(params.size());
            for (const auto& [w, c] : model->makeLowPrecisionCopies(at::kBFloat16))
                for (size_t i = 0; i < params.size(); ++i)
                    if (params[i].is_same(w)) copies[i] = c;
            opt.setLowPrecisionCopies(copies);
        }
        std::vector<double> losses;
        for (int step = 0; step < 4; ++step) {
            opt.zeroGrad();
            at::Tensor loss;
            {
                ts::AutocastScope autocast(at::kCPU, ts::Precision::BF16);
                const at::Tensor logits = model->forward(tokens);
                loss = fused ? ts::fusedCrossEntropy(logits, targets)
                             : ts::crossEntropy(logits, targets);
            }
            loss.backward();
            opt.step();
            losses.push_back(loss.item<double>());
        }
        return losses;
    };
    const auto eager = train(false), fused = train(true);
    for (size_t i = 0; i < eager.size(); ++i)
        EXPECT_NEAR(fused[i], eager[i], 1e-2 * eager[i]) << "step " << i;
    EXPECT_LT(fused.back(), fused.front());
}

}  // namespace
