// The fused CUDA kernels (kernels/src/fused_ops.cu) against LibTorch's own ops on the GPU and
// against their CPU reference, forward and backward, in fp32, bf16 and fp16; the fused model
// (with our attention reading the fused projection in place) against the eager model. Needs a
// GPU: exits 77 (SKIPPED) without one.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <string>
#include <tuple>

#include "nn/autocast.h"
#include "nn/fused.h"
#include "nn/fused_testing.h"
#include "nn/model.h"
#include "trainscope/kernels/flash_attention.h"
#include "trainscope/kernels/fused_ops.h"

namespace {

using ts::test::relErr;

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().requires_grad_(true); }

// One rounding to the dtype, relative: what separates the kernel (fp32 math, one rounding)
// from LibTorch computing in fp32 and rounding at the end.
double roundingOf(at::ScalarType t) {
    return t == at::kFloat ? 1e-5 : t == at::kBFloat16 ? 8e-3 : 1e-3;
}

const at::ScalarType kTypes[] = {at::kFloat, at::kBFloat16, at::kHalf};
const char* name(at::ScalarType t) {
    return t == at::kBFloat16 ? "bf16" : t == at::kHalf ? "fp16" : "fp32";
}

at::TensorOptions cuda() { return at::TensorOptions().device(at::kCUDA); }

// The model's shapes: 1,024 tokens of d 768 (small); d 4608 (10B's: more columns than a thread
// keeps in registers; See Note [vectorised fused kernels]); a width that is no multiple of four
// (the scalar kernels) with uneven rows.
TEST(FusedKernelsGpu, AddRmsNormForwardBackward) {
    for (auto rt : kTypes)
        for (auto [rows, cols] :
             {std::pair<int64_t, int64_t>{1024, 768}, {300, 4608}, {37, 1000}, {37, 1002}}) {
            const at::Tensor x = at::randn({rows, cols}, cuda()),
                             r = at::randn({rows, cols}, cuda()).to(rt);
            const at::Tensor w = 1 + 0.1 * at::randn({cols}, cuda());
            const at::Tensor gs = at::randn({rows, cols}, cuda()),
                             go = at::randn({rows, cols}, cuda()).to(rt);
            at::Tensor xa = leaf(x), ra = leaf(r), wa = leaf(w), xb = leaf(x), rb = leaf(r),
                       wb = leaf(w);
            auto [sum, out] = ts::fusedAddRmsNorm(xa, ra, wa, 1e-5, rt);
            const at::Tensor ref_sum = xb + rb,
                             ref_out = at::rms_norm(ref_sum, {cols}, wb, 1e-5).to(rt);
            const std::string what = std::string(name(rt)) + " " + std::to_string(cols);
            EXPECT_LT(relErr(sum, ref_sum), 1e-7) << what;
            EXPECT_LT(relErr(out, ref_out), roundingOf(rt)) << what;
            const auto gf = torch::autograd::grad({sum, out}, {xa, ra, wa}, {gs, go});
            const auto gr = torch::autograd::grad({ref_sum, ref_out}, {xb, rb, wb}, {gs, go});
            EXPECT_LT(relErr(gf[0], gr[0]), 1e-5) << what;
            EXPECT_LT(relErr(gf[1], gr[1]), roundingOf(rt)) << what;
            EXPECT_LT(relErr(gf[2], gr[2]), 1e-4)
                << what;  // a sum over 1,024 rows, in another order
            // The CUDA kernels compute what the CPU reference computes.
            const auto cpu = ts::kernels::rmsNormForward(x.cpu(), r.cpu(), w.cpu(), 1e-5, rt);
            const auto dev = ts::kernels::rmsNormForward(x, r, w, 1e-5, rt);
            EXPECT_LT(relErr(dev.out, cpu.out), roundingOf(rt)) << what;
            EXPECT_LT(relErr(dev.rstd, cpu.rstd), 1e-6) << what;
        }
}

// Each at a shape the vectorised kernels take (See Note [vectorised fused kernels]) and at one they
// leave to the scalar ones (a head dim, d_ff or vocabulary that is no multiple of 16 bytes).
TEST(FusedKernelsGpu, RopeSwigluCrossEntropyMatchLibTorch) {
    for (const int64_t odd : {0, 1}) {
        const int64_t b = 4, s = 256, h = 12, dh = odd ? 6 : 64, f = 3072 + odd,
                      vocab = 10000 + odd;
        at::Tensor pos = at::arange(s, at::kDouble).unsqueeze(1);
        at::Tensor freq =
            at::pow(10000.0, -2.0 * at::arange(dh / 2, at::kDouble) / dh).unsqueeze(0);
        const at::Tensor cos = (pos * freq).cos().to(at::kFloat).cuda(),
                         sin = (pos * freq).sin().to(at::kFloat).cuda();
        for (auto dt : kTypes) {
            const std::string what = std::string(name(dt)) + (odd ? " (odd shapes)" : "");
            {  // RoPE in place: the fp32 rotation of eager's applyRope, rounded once.
                const at::Tensor qkv = at::randn({b, s, 3 * h * dh}, cuda()).to(dt),
                                 g = at::randn_like(qkv);
                at::Tensor xa = leaf(qkv), xb = leaf(qkv.to(at::kFloat));
                const at::Tensor fused = ts::fusedRopeQkv(xa * 1, cos, sin, h);
                const at::Tensor t = xb.view({b, s, 3, h, dh});
                const auto part = [&](int i) { return t.select(2, i).transpose(1, 2); };
                const at::Tensor ref = at::stack({ts::applyRope(part(0), cos, sin).transpose(1, 2),
                                                  ts::applyRope(part(1), cos, sin).transpose(1, 2),
                                                  part(2).transpose(1, 2)},
                                                 2)
                                           .reshape({b, s, -1});
                EXPECT_LT(relErr(fused, ref), roundingOf(dt)) << what;
                const at::Tensor ga = torch::autograd::grad({fused}, {xa}, {g})[0];
                const at::Tensor gb = torch::autograd::grad({ref}, {xb}, {g.to(at::kFloat)})[0];
                EXPECT_LT(relErr(ga, gb), roundingOf(dt)) << what;
            }
            {  // SwiGLU
                const at::Tensor gu = at::randn({b * s, 2 * f}, cuda()).to(dt),
                                 g = at::randn({b * s, f}, cuda()).to(dt);
                at::Tensor a = leaf(gu), c = leaf(gu.to(at::kFloat));
                const at::Tensor fused = ts::fusedSwiglu(a);
                const auto halves = c.chunk(2, -1);
                const at::Tensor ref = at::silu(halves[0]) * halves[1];
                EXPECT_LT(relErr(fused, ref), roundingOf(dt)) << what;
                EXPECT_LT(relErr(torch::autograd::grad({fused}, {a}, {g})[0],
                                 torch::autograd::grad({ref}, {c}, {g.to(at::kFloat)})[0]),
                          roundingOf(dt))
                    << what;
            }
            {  // Cross-entropy on the course's vocabulary, without an fp32 copy of the logits.
                const at::Tensor logits = (2 * at::randn({b * s, vocab}, cuda())).to(dt);
                const at::Tensor targets = at::randint(vocab, {b * s}, cuda().dtype(at::kLong));
                at::Tensor a = leaf(logits), c = leaf(logits.to(at::kFloat));
                const at::Tensor fused = ts::fusedCrossEntropy(a, targets);
                const at::Tensor ref = at::cross_entropy_loss(c, targets);
                EXPECT_LT(relErr(fused, ref), 1e-5) << what;
                const at::Tensor g = at::full({}, 0.7, cuda());
                const at::Tensor ga = torch::autograd::grad({fused}, {a}, {g})[0];
                EXPECT_EQ(ga.scalar_type(), dt);
                // Against LibTorch's fp32 gradient in the logits' dtype, as eager's autocast casts
                // it: most entries are ~1e-7, subnormal in fp16, and both round them alike.
                EXPECT_LT(relErr(ga, torch::autograd::grad({ref}, {c}, {g})[0].to(dt)),
                          roundingOf(dt))
                    << what;
            }
        }
    }
}

// The fused LM head + loss (See Note [fused LM head and loss]) on the GPU, in chunks, through the
// fused cross-entropy: the loss and gradients of the logits path, in fp32 and under bf16.
TEST(FusedKernelsGpu, LinearCrossEntropyInChunksMatchesTheLogitsPath) {
    for (const int64_t vocab : {int64_t{10000}, int64_t{10001}})
        for (const ts::Precision precision : {ts::Precision::FP32, ts::Precision::BF16}) {
            at::manual_seed(3);
            const at::Tensor x0 = at::randn({2, 300, 64}, cuda()),
                             w0 = 0.3 * at::randn({vocab, 64}, cuda());
            const at::Tensor targets = at::randint(vocab, {2, 300}, cuda().dtype(at::kLong));
            auto run = [&](bool fused) {
                at::Tensor x = leaf(x0), w = leaf(w0), loss;
                {
                    ts::AutocastScope autocast(at::kCUDA, precision);
                    loss = fused ? ts::linearCrossEntropy(x, w, targets, 128 * vocab)
                                 : ts::crossEntropy(at::linear(x, w), targets);
                }
                const auto g = torch::autograd::grad({loss}, {x, w});
                return std::make_tuple(loss.item<double>(), g[0], g[1]);
            };
            const auto [ref, gx_ref, gw_ref] = run(false);
            const auto [loss, gx, gw] = run(true);
            const bool fp32 = precision == ts::Precision::FP32;
            const std::string what =
                std::to_string(vocab) + " " + std::string(ts::toString(precision));
            EXPECT_NEAR(loss, ref, (fp32 ? 1e-5 : 1e-2) * std::abs(ref)) << what;
            EXPECT_LT(relErr(gx, gx_ref), fp32 ? 1e-4 : 3e-2) << what;
            EXPECT_LT(relErr(gw, gw_ref), fp32 ? 1e-4 : 3e-2) << what;
        }
}

// The fused model on the GPU against the eager one: logits, loss and gradients, with every
// attention backend; with ours, attention reads the fused projection in place. Head dims 32
// (mini) and 80 (2.7B's: on Hopper our kernels run it in place, inside their 128 tile).
TEST(FusedModelGpu, MatchesEager) {
    for (const int64_t head_dim : {32, 80}) {
        for (auto attention :
             {ts::AttentionImpl::Naive, ts::AttentionImpl::Sdpa, ts::AttentionImpl::Flash})
            for (auto precision : {ts::Precision::FP32, ts::Precision::BF16}) {
                if (attention == ts::AttentionImpl::Flash && !ts::kernels::flashKernelsBuilt())
                    continue;
                ts::ModelConfig cfg = *ts::modelPreset("mini");
                cfg.context_length = 128;
                if (head_dim == 80) cfg.num_heads = 2, cfg.d_model = 160;
                at::manual_seed(9);
                ts::TransformerLM model(cfg, attention, cuda().dtype(at::kFloat));
                const at::Tensor tokens =
                    at::randint(cfg.vocab_size, {4, 128}, cuda().dtype(at::kLong));
                const at::Tensor targets =
                    at::randint(cfg.vocab_size, {4, 128}, cuda().dtype(at::kLong));
                // fp32: LibTorch's matmuls may use TF32-free cuBLAS paths in another order; 1e-4.
                const double tol = precision == ts::Precision::FP32 ? 1e-4 : 2e-2;
                ts::test::expectFusedMatchesEager(model, tokens, targets, precision, tol, 5 * tol,
                                                  std::string(ts::toString(attention)) + " " +
                                                      std::string(ts::toString(precision)) +
                                                      " head dim " + std::to_string(head_dim));
            }
    }
}

// See Note [attention kept through a checkpoint]: the fused model with our flash attention,
// checkpointed every block and every two, and nested, keeping attention's output through the
// checkpoints: the same loss and gradients as recomputing it (the same kernels, so equal up to
// the recompute's own determinism: flash backward's dq is accumulated atomically), in bf16; and
// nothing left kept after a forward alone.
TEST(FusedModelGpu, AttentionKeptThroughCheckpointsChangesNothing) {
    if (!ts::kernels::flashKernelsBuilt()) GTEST_SKIP() << "no flash kernels in this build";
    ts::ModelConfig cfg = *ts::modelPreset("mini");
    cfg.context_length = 256;
    const at::Tensor tokens = at::randint(cfg.vocab_size, {2, 256}, cuda().dtype(at::kLong));
    const at::Tensor targets = at::randint(cfg.vocab_size, {2, 256}, cuda().dtype(at::kLong));
    for (const char* policy : {"1", "2", "nested"}) {
        auto run = [&](bool keep) {
            at::manual_seed(9);
            ts::TransformerLM model(cfg, ts::AttentionImpl::Flash, cuda().dtype(at::kFloat));
            model->setFused(true);
            model->setCheckpointing(*ts::parseCheckpointing(policy));
            model->setKeepAttention(keep);
            {
                // A forward alone first: what it keeps must not reach the step below.
                at::NoGradGuard no_grad;
                ts::AutocastScope autocast(at::kCUDA, ts::Precision::BF16);
                (void)model->forwardLoss(tokens, targets);
            }
            at::Tensor loss;
            {
                ts::AutocastScope autocast(at::kCUDA, ts::Precision::BF16);
                loss = model->forwardLoss(tokens, targets);
            }
            loss.backward();
            std::vector<at::Tensor> grads;
            for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
            return std::make_pair(loss.item<double>(), grads);
        };
        const auto [ref_loss, ref_grads] = run(false);
        const auto [loss, grads] = run(true);
        EXPECT_NEAR(loss, ref_loss, 1e-6 * std::abs(ref_loss)) << policy;
        for (size_t i = 0; i < grads.size(); ++i)
            EXPECT_LT(relErr(grads[i], ref_grads[i]), 1e-2) << policy << " parameter " << i;
    }
}

// The naive attention's fused softmax against eager's chain on the GPU, at the course's
// context (256 keys: eight a lane) and a ragged one.
TEST(FusedKernelsGpu, AttentionSoftmaxMatchesTheNaiveAttentionsChain) {
    for (auto dt : {at::kFloat, at::kBFloat16, at::kHalf})
        for (bool causal : {true, false}) {
            const std::string what = std::string(name(dt)) + (causal ? " causal" : "");
            const double tol = dt == at::kFloat ? 1e-5 : dt == at::kBFloat16 ? 8e-3 : 1e-3;
            ts::test::expectAttentionSoftmaxMatchesEager(cuda(), dt, causal, 256, 256, tol, what);
            ts::test::expectAttentionSoftmaxMatchesEager(cuda(), dt, causal, 37, 45, tol,
                                                         what + " 37x45");
        }
}

// Our multi-tensor AdamW against LibTorch's _fused_adamw_ on the GPU: 300 tensors (13 launches
// of at most 24), sizes off the block size (a multiple of 4 or not: vector or scalar accesses),
// bf16 and fp16 copies and plain fp32 gradients.
TEST(FusedKernelsGpu, AdamWMatchesLibTorch) {
    for (auto copy_type : {at::kBFloat16, at::kHalf, at::kFloat}) {
        std::vector<at::Tensor> p1, p2, g32, g, m1, v1, m2, v2, s1, s2, copies;
        for (int i = 0; i < 300; ++i) {
            int64_t n = 1 + (int64_t{i} * 7919 * 37) % 300000;
            if (i % 2 == 0) n = (n + 3) / 4 * 4;  // half of them take the 4-wide accesses
            p1.push_back(at::randn({n}, cuda()));
            p2.push_back(p1.back().clone());
            g.push_back(at::randn({n}, cuda()).to(copy_type));
            g32.push_back(g.back().to(at::kFloat));
            for (auto* v : {&m1, &v1, &m2, &v2}) v->push_back(at::zeros({n}, cuda()));
            s1.push_back(at::zeros({}, cuda()));
            s2.push_back(at::zeros({}, cuda()));
            copies.push_back(copy_type == at::kFloat ? at::Tensor()
                                                     : at::full({n}, NAN, cuda().dtype(copy_type)));
        }
        const ts::kernels::AdamWSettings set{1e-3, 0.9, 0.999, 1e-8, 0.01};
        for (int step = 0; step < 3; ++step) {
            at::_foreach_add_(s1, 1);
            at::_foreach_add_(s2, 1);
            at::_fused_adamw_(p1, g32, m1, v1, {}, s1, set.lr, set.beta1, set.beta2,
                              set.weight_decay, set.eps, false, false, std::nullopt, std::nullopt);
            ts::kernels::adamWStep(p2, g, m2, v2, s2, copies, set);
        }
        for (size_t i = 0; i < p1.size(); ++i) {
            EXPECT_LT(relErr(p2[i], p1[i]), 1e-6) << name(copy_type) << " " << i;
            EXPECT_LT(relErr(v2[i], v1[i]), 1e-6) << name(copy_type) << " " << i;
            if (copies[i].defined())
                EXPECT_TRUE(at::equal(copies[i], p2[i].to(copy_type)))
                    << name(copy_type) << " " << i;
        }
    }
}

}  // namespace
