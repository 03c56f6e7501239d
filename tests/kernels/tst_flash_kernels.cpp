// The CUDA kernels against naive attention in float64 on the same (dtype-rounded) inputs.
// Each dtype is held to flash-attention's standard: the kernel's max error at most twice
// LibTorch's own scaled_dot_product_attention error in the same precision, plus the dtype's
// rounding floor. Outputs are poisoned with NaN before every run through the adapter; inputs
// are fresh for every case. Head dims the kernels are not built for go through
// ts::flashAttention (zero-padded to a built one) with autograd, under the same rule. Needs a
// GPU: exits 77 (SKIPPED) without one.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <array>
#include <cstdio>
#include <limits>

#include "kernels/attention_testing.h"
#include "nn/attention.h"
#include "nn/attention_tiled.h"
#include "trainscope/kernels/flash_attention.h"

namespace {

using ts::test::maxAbsErr;

struct Shape {
    int64_t b, h, sq, sk;
};

// Multiples of the tiles, uneven lengths, and query/key lengths that differ both ways.
const Shape kShapes[] = {{2, 3, 128, 128}, {1, 2, 197, 197}, {2, 2, 113, 259}, {1, 3, 300, 77}};

const char* name(at::ScalarType t) {
    return t == at::kBFloat16 ? "bf16" : t == at::kHalf ? "fp16" : "fp32";
}

at::Tensor poisoned(at::IntArrayRef sizes, const at::TensorOptions& o) {
    return at::full(sizes, std::numeric_limits<double>::quiet_NaN(), o);
}

struct Errors {
    double out = 0, lse = 0, dq = 0, dk = 0, dv = 0;
};

// How a case reaches the kernels: the adapter (built head dims; outputs NaN-poisoned first), or
// ts::flashAttention with autograd (any head dim up to 256: others are zero-padded to a built one).
enum class Via { Adapter, Autograd };

// Runs the kernels and checks one case; returns our errors.
Errors checkCase(const Shape& s, int64_t d, at::ScalarType dt, bool causal, bool print = false,
                 Via via = Via::Adapter) {
    const auto opts = at::TensorOptions().device(at::kCUDA).dtype(dt);
    at::Tensor q = at::randn({s.b, s.h, s.sq, d}, opts);
    at::Tensor k = at::randn({s.b, s.h, s.sk, d}, opts);
    at::Tensor v = at::randn({s.b, s.h, s.sk, d}, opts);
    at::Tensor dout = at::randn({s.b, s.h, s.sq, d}, opts);
    const auto ref = ts::test::float64Reference(q, k, v, dout, causal);

    // LibTorch's own error in this precision.
    at::Tensor qt = q.detach().requires_grad_(true), kt = k.detach().requires_grad_(true),
               vt = v.detach().requires_grad_(true);
    at::Tensor ot = at::scaled_dot_product_attention(qt, kt, vt, {}, 0.0, causal);
    ot.backward(dout);
    const Errors torch_err{maxAbsErr(ot, ref.out), 0, maxAbsErr(qt.grad(), ref.dq),
                           maxAbsErr(kt.grad(), ref.dk), maxAbsErr(vt.grad(), ref.dv)};

    at::Tensor out, lse, dq, dk, dv;
    if (via == Via::Adapter) {
        out = poisoned(q.sizes(), opts);
        lse = poisoned({s.b, s.h, s.sq}, opts.dtype(at::kFloat));
        ts::kernels::flashForward(q, k, v, causal, std::nullopt, out, lse);
        dq = poisoned(q.sizes(), opts), dk = poisoned(k.sizes(), opts),
        dv = poisoned(v.sizes(), opts);
        ts::kernels::flashBackward(dout, q, k, v, out, lse, causal, std::nullopt, dq, dk, dv);
    } else {
        at::Tensor qa = q.detach().requires_grad_(true), ka = k.detach().requires_grad_(true),
                   va = v.detach().requires_grad_(true);
        out = ts::flashAttention(qa, ka, va, causal);
        out.backward(dout);
        out = out.detach(), dq = qa.grad(), dk = ka.grad(), dv = va.grad();
        lse = ref.lse.to(at::kFloat);  // not returned by the wrapper
        EXPECT_EQ(out.sizes(), q.sizes());
    }
    torch::cuda::synchronize();

    for (const at::Tensor* t : {&out, &lse, &dq, &dk, &dv})
        EXPECT_TRUE(ts::test::allFinite(*t)) << "unwritten or non-finite output";
    const Errors ours{maxAbsErr(out, ref.out), maxAbsErr(lse, ref.lse), maxAbsErr(dq, ref.dq),
                      maxAbsErr(dk, ref.dk), maxAbsErr(dv, ref.dv)};
    auto bound = [&](double torch_e, const at::Tensor& r) {
        return 2.0 * torch_e + ts::test::roundingFloor(r, dt);
    };
    EXPECT_LE(ours.out, bound(torch_err.out, ref.out)) << "O: torch error " << torch_err.out;
    EXPECT_LE(ours.dq, bound(torch_err.dq, ref.dq)) << "dQ: torch error " << torch_err.dq;
    EXPECT_LE(ours.dk, bound(torch_err.dk, ref.dk)) << "dK: torch error " << torch_err.dk;
    EXPECT_LE(ours.dv, bound(torch_err.dv, ref.dv)) << "dV: torch error " << torch_err.dv;
    // L is computed in fp32 from the same rounded inputs: only fp32 rounding separates them.
    EXPECT_LE(ours.lse, dt == at::kFloat ? 1e-4 : 1e-3) << "L";
    if (print || ::testing::Test::HasFailure())
        std::printf(
            "%-4s d=%-3lld%s b%lld h%lld sq=%-4lld sk=%-4lld causal=%d | ours O %.2e L %.2e dQ "
            "%.2e dK %.2e dV %.2e"
            " | torch O %.2e dQ %.2e dK %.2e dV %.2e\n",
            name(dt), (long long)d, via == Via::Autograd ? " (autograd)" : "", (long long)s.b,
            (long long)s.h, (long long)s.sq, (long long)s.sk, causal, ours.out, ours.lse, ours.dq,
            ours.dk, ours.dv, torch_err.out, torch_err.dq, torch_err.dk, torch_err.dv);
    return ours;
}

class FlashKernels : public ::testing::TestWithParam<at::ScalarType> {};

// Every built head dim (kernels::kFlashHeadDims) through the adapter.
TEST_P(FlashKernels, AllHeadDimsShapesAndMasks) {
    at::manual_seed(42);
    for (int64_t d : ts::kernels::kFlashHeadDims)
        for (const Shape& s : kShapes)
            for (bool causal : {false, true}) {
                SCOPED_TRACE(::testing::Message() << name(GetParam()) << " d" << d << " sq" << s.sq
                                                  << " sk" << s.sk << " causal " << causal);
                checkCase(s, d, GetParam(), causal, s.sq == 197);
            }
}

// Head dims the presets and users need that the kernels are not built for run zero-padded
// in ts::flashAttention (80 → 96, 160 → 256; 8 → 16, 200 → 256; on Hopper 80 runs inside the
// 128 tile instead), checked with the same rule through autograd; the built 96 and 256 through
// the same path.
TEST_P(FlashKernels, PaddedHeadDimsThroughAutograd) {
    at::manual_seed(43);
    const Shape shapes[] = {{1, 2, 197, 197}, {2, 2, 113, 259}};
    for (int64_t d : {80, 96, 160, 256, 8, 200})
        for (const Shape& s : shapes)
            for (bool causal : {false, true}) {
                SCOPED_TRACE(::testing::Message()
                             << name(GetParam()) << " d" << d << " sq" << s.sq << " sk" << s.sk
                             << " causal " << causal << " (autograd)");
                checkCase(s, d, GetParam(), causal, s.sq == 197, Via::Autograd);
            }
}

// Hopper runs head dim 80 (the 2.7B preset's) inside its 128 tile, from the tensors as they are
// (see Note [head dims inside the tile]): through the adapter with poisoned outputs, every shape
// and mask; then with q, k, v and their gradients as strided views of one fused projection
// (batch, seq, 3 · heads · 80), as the compiled model passes them, against the same inputs
// made contiguous.
TEST_P(FlashKernels, HeadDim80InsideTheTileOnHopper) {
    const at::ScalarType dt = GetParam();
    const auto opts = at::TensorOptions().device(at::kCUDA).dtype(dt);
    if (ts::kernels::flashPaddedHeadDim(80, at::empty({1}, opts)) != 80)
        GTEST_SKIP() << "head dim 80 runs padded here (not the wgmma kernels, or fp32)";
    at::manual_seed(44);
    for (const Shape& s : kShapes)
        for (bool causal : {false, true}) {
            SCOPED_TRACE(::testing::Message()
                         << name(dt) << " d80 sq" << s.sq << " sk" << s.sk << " causal " << causal);
            checkCase(s, 80, dt, causal, s.sq == 197);
        }
    const int64_t b = 2, sq = 197, h = 3, d = 80;
    const at::Tensor qkv = at::randn({b, sq, 3 * h * d}, opts),
                     dout = at::randn({b, h, sq, d}, opts);
    auto views = [&](const at::Tensor& t) {
        const at::Tensor v = t.view({b, sq, 3, h, d});
        return std::array<at::Tensor, 3>{v.select(2, 0).transpose(1, 2),
                                         v.select(2, 1).transpose(1, 2),
                                         v.select(2, 2).transpose(1, 2)};
    };
    const auto in = views(qkv);
    for (bool causal : {false, true}) {
        SCOPED_TRACE(::testing::Message() << name(dt) << " d80 strided causal " << causal);
        const auto dense = ts::kernels::flashForward(in[0].contiguous(), in[1].contiguous(),
                                                     in[2].contiguous(), causal);
        const auto dense_g =
            ts::kernels::flashBackward(dout, in[0].contiguous(), in[1].contiguous(),
                                       in[2].contiguous(), dense.out, dense.lse, causal);
        const auto strided = ts::kernels::flashForward(in[0], in[1], in[2], causal);
        const at::Tensor dqkv = poisoned(qkv.sizes(), opts);
        const auto g = views(dqkv);
        ts::kernels::flashBackward(dout, in[0], in[1], in[2], strided.out, strided.lse, causal,
                                   std::nullopt, g[0], g[1], g[2]);
        EXPECT_TRUE(ts::test::allFinite(dqkv)) << "a gradient column left unwritten";
        EXPECT_TRUE(at::equal(strided.out, dense.out));
        EXPECT_TRUE(at::equal(strided.lse, dense.lse));
        EXPECT_TRUE(at::equal(g[1], dense_g.dk));
        EXPECT_TRUE(at::equal(g[2], dense_g.dv));
        // dQ sums fp32 atomics in no fixed order: equal up to its dtype's rounding.
        EXPECT_LE(maxAbsErr(g[0], dense_g.dq), 1e-2 * dense_g.dq.abs().max().item<double>());
    }
}

TEST_P(FlashKernels, LongerSequences) {
    at::manual_seed(7);
    for (int64_t d : {64, 128, 256}) {
        SCOPED_TRACE(::testing::Message() << "d" << d);
        checkCase({2, 4, 1000, 1000}, d, GetParam(), true, true);
        checkCase({1, 2, 2048, 2048}, d, GetParam(), false, true);
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FlashKernels,
                         ::testing::Values(at::kBFloat16, at::kHalf, at::kFloat),
                         [](const auto& info) { return std::string(name(info.param)); });

// The autograd wrapper behind attend(Flash), on strided inputs laid out as (b, s, h, d) in
// memory, as the LM's projections produce them.
TEST(FlashBackend, AutogradOnStridedInputs) {
    at::manual_seed(11);
    for (auto dt : {at::kBFloat16, at::kFloat})
        for (bool causal : {false, true}) {
            SCOPED_TRACE(::testing::Message() << name(dt) << " causal " << causal);
            const auto opts = at::TensorOptions().device(at::kCUDA).dtype(dt);
            at::Tensor q = at::randn({2, 150, 4, 64}, opts).transpose(1, 2).requires_grad_(true);
            at::Tensor k = at::randn({2, 150, 4, 64}, opts).transpose(1, 2).requires_grad_(true);
            at::Tensor v = at::randn({2, 150, 4, 64}, opts).transpose(1, 2).requires_grad_(true);
            at::Tensor dout = at::randn({2, 4, 150, 64}, opts);
            const auto ref = ts::test::float64Reference(q, k, v, dout, causal);
            at::Tensor out = ts::attend(q, k, v, ts::AttentionImpl::Flash, causal);
            out.backward(dout);
            const double tol = dt == at::kFloat ? 1e-4 : 5e-2;
            EXPECT_LT(maxAbsErr(out, ref.out), tol);
            EXPECT_LT(maxAbsErr(q.grad(), ref.dq), tol);
            EXPECT_LT(maxAbsErr(k.grad(), ref.dk), tol);
            EXPECT_LT(maxAbsErr(v.grad(), ref.dv), tol);
        }
}

// The tiled reference on the GPU agrees with the kernels' algorithm (same O and L).
TEST(FlashBackend, TiledReferenceOnGpuAgrees) {
    at::manual_seed(12);
    const auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
    at::Tensor q = at::randn({1, 2, 333, 32}, opts), k = at::randn({1, 2, 333, 32}, opts),
               v = at::randn({1, 2, 333, 32}, opts);
    for (bool causal : {false, true}) {
        const auto t = ts::tiledForward(q, k, v, causal, 1.0 / std::sqrt(32.0), {64, 64});
        const auto f = ts::kernels::flashForward(q, k, v, causal);
        EXPECT_LT(maxAbsErr(t.out, f.out), 1e-5);
        EXPECT_LT(maxAbsErr(t.lse, f.lse), 1e-5);
    }
}

TEST(FlashBackend, RejectsBadInputsWithAMessage) {
    const auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
    at::Tensor q = at::randn({1, 1, 16, 48}, opts);
    EXPECT_NE(ts::kernels::flashUnsupportedReason(q, q, q).find("head_dim 48"), std::string::npos);
    EXPECT_THROW(ts::kernels::flashForward(q, q, q, false), std::invalid_argument);
    // Above 256 no built head dim is left to pad to.
    at::Tensor wide = at::randn({1, 1, 16, 264}, opts);
    try {
        ts::flashAttention(wide, wide, wide, false);
        ADD_FAILURE() << "head_dim 264 ran";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("head_dim 264"), std::string::npos) << e.what();
    }
}

// Small cases for compute-sanitizer (memcheck, racecheck), one test per dtype.
void sanitizerCases(at::ScalarType dt) {
    at::manual_seed(5);
    for (int64_t d : {16, 64, 96, 128, 256})
        for (bool causal : {false, true}) checkCase({1, 2, 77, 141}, d, dt, causal);
}
TEST(Sanitizer, Bf16) { sanitizerCases(at::kBFloat16); }
TEST(Sanitizer, Fp16) { sanitizerCases(at::kHalf); }
TEST(Sanitizer, Fp32) { sanitizerCases(at::kFloat); }

}  // namespace

int main(int argc, char** argv) {
    if (!torch::cuda::is_available()) {
        std::printf("SKIPPED: no CUDA device\n");
        return 77;
    }
    if (!ts::kernels::flashKernelsBuilt()) {
        std::printf("SKIPPED: this build has no CUDA attention kernels\n");
        return 77;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
