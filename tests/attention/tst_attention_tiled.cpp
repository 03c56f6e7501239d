// The tiled reference (FlashAttention-2's algorithm in LibTorch ops) against naive attention
// in float64, on the CPU: forward O and L, backward dQ, dK, dV; causal and not; lengths that
// are not multiples of the tile; query and key lengths that differ.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kernels/attention_testing.h"
#include "nn/attention.h"
#include "nn/attention_tiled.h"

namespace {

struct Shape {
    int64_t b, h, sq, sk, d;
};

const Shape kShapes[] = {{2, 3, 64, 64, 16},
                         {1, 2, 97, 97, 32},
                         {2, 1, 50, 131, 16},
                         {1, 1, 131, 40, 32},
                         {1, 2, 1, 33, 16}};

TEST(TiledReference, MatchesFloat64NaiveForwardAndBackward) {
    at::manual_seed(1);
    for (const Shape& s : kShapes)
        for (bool causal : {false, true})
            for (int64_t tile : {16, 32}) {
                SCOPED_TRACE(::testing::Message()
                             << "b" << s.b << " h" << s.h << " sq" << s.sq << " sk" << s.sk << " d"
                             << s.d << " causal " << causal << " tile " << tile);
                const auto opts = at::TensorOptions().dtype(at::kDouble);
                at::Tensor q = at::randn({s.b, s.h, s.sq, s.d}, opts);
                at::Tensor k = at::randn({s.b, s.h, s.sk, s.d}, opts);
                at::Tensor v = at::randn({s.b, s.h, s.sk, s.d}, opts);
                at::Tensor dout = at::randn({s.b, s.h, s.sq, s.d}, opts);
                const auto ref = ts::test::float64Reference(q, k, v, dout, causal);
                const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
                const ts::TiledTiles tiles{tile, tile};
                const auto f = ts::tiledForward(q, k, v, causal, scale, tiles);
                EXPECT_LT(ts::test::maxAbsErr(f.out, ref.out), 1e-12);
                EXPECT_LT(ts::test::maxAbsErr(f.lse, ref.lse), 1e-12);
                const auto g = ts::tiledBackward(dout, q, k, v, f.out, f.lse, causal, scale, tiles);
                EXPECT_LT(ts::test::maxAbsErr(g.dq, ref.dq), 1e-11);
                EXPECT_LT(ts::test::maxAbsErr(g.dk, ref.dk), 1e-11);
                EXPECT_LT(ts::test::maxAbsErr(g.dv, ref.dv), 1e-11);
            }
}

TEST(TiledReference, Float32ThroughAutogradAndAttend) {
    at::manual_seed(2);
    for (bool causal : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "causal " << causal);
        at::Tensor q = at::randn({2, 2, 150, 32}).requires_grad_(true);
        at::Tensor k = at::randn({2, 2, 150, 32}).requires_grad_(true);
        at::Tensor v = at::randn({2, 2, 150, 32}).requires_grad_(true);
        at::Tensor dout = at::randn({2, 2, 150, 32});
        const auto ref = ts::test::float64Reference(q, k, v, dout, causal);
        at::Tensor out = ts::attend(q, k, v, ts::AttentionImpl::Tiled, causal);
        EXPECT_EQ(out.scalar_type(), at::kFloat);
        out.backward(dout);
        EXPECT_LT(ts::test::maxAbsErr(out, ref.out), 1e-5);
        EXPECT_LT(ts::test::maxAbsErr(q.grad(), ref.dq), 1e-4);
        EXPECT_LT(ts::test::maxAbsErr(k.grad(), ref.dk), 1e-4);
        EXPECT_LT(ts::test::maxAbsErr(v.grad(), ref.dv), 1e-4);
    }
}

TEST(TiledReference, AgreesWithNaiveBackend) {
    at::manual_seed(3);
    at::Tensor q = at::randn({1, 4, 77, 16}), k = at::randn({1, 4, 77, 16}),
               v = at::randn({1, 4, 77, 16});
    for (bool causal : {false, true}) {
        const at::Tensor a = ts::attend(q, k, v, ts::AttentionImpl::Tiled, causal);
        const at::Tensor b = ts::attend(q, k, v, ts::AttentionImpl::Naive, causal);
        EXPECT_LT(ts::test::maxAbsErr(a, b), 1e-5);
    }
}

TEST(FlashBackend, ReportsWhyItCannotRunOnTheCpu) {
    at::Tensor q = at::randn({1, 1, 8, 16});
    try {
        ts::attend(q, q, q, ts::AttentionImpl::Flash, false);
        FAIL() << "expected an error on CPU tensors";
    } catch (const std::exception& e) {
        const std::string msg = e.what();
        EXPECT_TRUE(msg.find("CUDA") != std::string::npos) << msg;
    }
}

}  // namespace
