// The ring all-reduce on send/recv (distributed/ring_allreduce.h) against the backend's own
// all-reduce, on Gloo ranks that are threads of this process: world 2, 3 and 4, sizes that
// N does not divide (and smaller than N), fp32 and bf16. Integer-valued data sums exactly in
// any order, so the two must be equal bit for bit; random data is exact for 2 ranks (one
// addition commutes) and within rounding of a float64 sum beyond.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "distributed/thread_ranks.h"
#include "trainscope/distributed/ring_allreduce.h"

using ts::dist::Group;

TEST(RingChunks, CoverTheTensorInNearlyEqualParts) {
    for (int n : {1, 2, 3, 4, 7})
        for (int64_t e : {0, 1, 2, 3, 5, 10, 1000003}) {
            int64_t next = 0;
            for (int c = 0; c < n; ++c) {
                const auto [first, count] = ts::dist::ringChunk(e, n, c);
                EXPECT_EQ(first, next);
                EXPECT_GE(count, e / n);
                EXPECT_LE(count, e / n + 1);
                next = first + count;
            }
            EXPECT_EQ(next, e) << n << " chunks of " << e;
        }
}

namespace {

// Each rank's tensor of `elements`, integer-valued in [-4, 4] (exact in bf16 and any sum of
// four of them) or random normal.
at::Tensor rankData(int rank, int64_t elements, at::ScalarType dtype, bool integers) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1234 + rank);
    const at::Tensor x = integers ? at::randint(-4, 5, {elements}, gen, at::kFloat)
                                  : at::randn({elements}, gen, at::kFloat);
    return x.to(dtype);
}

void checkAgainstBackend(int world, int64_t elements, at::ScalarType dtype, bool integers) {
    const auto errors = runThreadRanks(world, [&](Group& g) {
        const at::Tensor x = rankData(g.rank, elements, dtype, integers);
        at::Tensor theirs = x.clone(), ours = x.clone();
        std::vector<at::Tensor> ts{theirs};
        g.backend->allreduce(ts)->wait();
        ts::dist::ringAllReduce(g, ours);
        if (integers || world == 2) {
            if (!at::equal(theirs, ours))
                throw std::runtime_error(
                    "differs from the backend's all-reduce, max |diff| " +
                    std::to_string((theirs.to(at::kDouble) - ours.to(at::kDouble))
                                       .abs()
                                       .max()
                                       .item<double>()));
        } else {
            // Any order of fp32 additions is within a few ulps of the exact sum.
            at::Tensor exact = at::zeros({elements}, at::kDouble);
            for (int r = 0; r < world; ++r)
                exact += rankData(r, elements, dtype, false).to(at::kDouble);
            const double err = (ours.to(at::kDouble) - exact).abs().max().item<double>();
            if (err > 1e-5)
                throw std::runtime_error("off the float64 sum by " + std::to_string(err));
        }
        // The input is left alone: the sums were made in copies.
        if (!at::equal(x, rankData(g.rank, elements, dtype, integers)))
            throw std::runtime_error("the input changed");
    });
    EXPECT_NO_RANK_ERRORS(errors);
}

}  // namespace

TEST(RingAllReduce, EqualsGlooExactlyFp32) {
    for (int world : {2, 3, 4})
        for (int64_t elements : {1, 3, 5, 1027, 100003}) {
            SCOPED_TRACE(testing::Message()
                         << "world " << world << ", " << elements << " elements");
            checkAgainstBackend(world, elements, at::kFloat, /*integers=*/true);
        }
}

TEST(RingAllReduce, EqualsGlooExactlyBf16) {
    for (int world : {2, 3, 4})
        for (int64_t elements : {2, 7, 4099}) {
            SCOPED_TRACE(testing::Message()
                         << "world " << world << ", " << elements << " elements");
            checkAgainstBackend(world, elements, at::kBFloat16, /*integers=*/true);
        }
}

TEST(RingAllReduce, RandomDataMatchesTheSum) {
    checkAgainstBackend(2, 10001, at::kFloat, /*integers=*/false);  // exact: one addition
    checkAgainstBackend(3, 10001, at::kFloat, /*integers=*/false);
    checkAgainstBackend(4, 999, at::kFloat, /*integers=*/false);
}

TEST(RingAllReduce, ShapedTensorsAndRefusals) {
    const auto errors = runThreadRanks(3, [](Group& g) {
        at::Tensor x = at::full({5, 7}, static_cast<double>(g.rank + 1), at::kFloat);
        ts::dist::ringAllReduce(g, x);
        if (!at::equal(x, at::full({5, 7}, 6.0, at::kFloat)))
            throw std::runtime_error("a 5×7 tensor was not summed: 1 + 2 + 3 = 6");
        at::Tensor t = at::zeros({4, 4}, at::kFloat).t();
        try {
            ts::dist::ringAllReduce(g, t);
            throw std::runtime_error("a transposed tensor was accepted");
        } catch (const std::invalid_argument& e) {
            if (std::string(e.what()).find("contiguous") == std::string::npos) throw;
        }
    });
    EXPECT_NO_RANK_ERRORS(errors);
}
