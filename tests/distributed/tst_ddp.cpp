// DDP strategies and optimizer sharding at the tensor level (distributed/ alone): Gloo ranks as
// threads, a small two-layer network, gradients compared with one process's over the whole batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <numeric>

#include "thread_ranks.h"
#include "trainscope/distributed/buckets.h"
#include "trainscope/distributed/ddp.h"
#include "trainscope/distributed/sharding.h"

using namespace ts::dist;

namespace {

// Parameters of a two-layer tanh network, the same on every rank (fixed generator).
std::vector<at::Tensor> makeParams() {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
    std::vector<at::Tensor> p{at::randn({16, 8}, gen), at::randn({16}, gen),
                              at::randn({4, 16}, gen), at::randn({4}, gen)};
    for (auto& t : p) t.requires_grad_(true);
    return p;
}

// A global batch of 4·world rows; rank r takes rows [4r, 4r+4).
std::pair<at::Tensor, at::Tensor> globalBatch(int world) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    return {at::randn({4 * world, 8}, gen), at::randn({4 * world, 4}, gen)};
}

at::Tensor lossOf(const std::vector<at::Tensor>& p, const at::Tensor& x, const at::Tensor& y) {
    auto h = at::tanh(at::linear(x, p[0], p[1]));
    return at::mse_loss(at::linear(h, p[2], p[3]), y);
}

// The reference: the gradients of the whole global batch in one process.
std::vector<at::Tensor> referenceGrads(int world) {
    auto p = makeParams();
    auto [x, y] = globalBatch(world);
    lossOf(p, x, y).backward();
    std::vector<at::Tensor> g;
    for (auto& t : p) g.push_back(t.grad().clone());
    return g;
}

struct RankResult {
    std::vector<at::Tensor> grads;
    SyncCounters counters;
};

std::vector<RankResult> syncOnRanks(const std::string& strategy, int world, double bucket_mb = 25.0,
                                    int steps = 2) {
    std::vector<RankResult> results(static_cast<size_t>(world));
    auto errors = runThreadRanks(world, [&](Group& g) {
        auto p = makeParams();
        auto [x, y] = globalBatch(world);
        auto sync = makeGradientSync(strategy, bucket_mb);
        sync->prepare(g, p);
        for (int s = 0; s < steps; ++s) {  // twice: the hooks and buffers are reused
            for (auto& t : p) t.mutable_grad() = at::Tensor();
            sync->beforeBackward();
            lossOf(p, x.narrow(0, 4 * g.rank, 4), y.narrow(0, 4 * g.rank, 4)).backward();
            sync->afterBackward();
        }
        auto& r = results[static_cast<size_t>(g.rank)];
        for (auto& t : p) r.grads.push_back(t.grad().clone());
        r.counters = sync->counters();
    });
    EXPECT_NO_RANK_ERRORS(errors);
    return results;
}

void expectAveraged(const std::vector<RankResult>& results, int world) {
    const auto ref = referenceGrads(world);
    for (size_t r = 0; r < results.size(); ++r) {
        ASSERT_EQ(results[r].grads.size(), ref.size()) << "rank " << r;
        for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_TRUE(at::allclose(results[r].grads[i], ref[i], 1e-5, 1e-6))
                << "rank " << r << " parameter " << i;
    }
}

}  // namespace

class Strategy : public ::testing::TestWithParam<std::string> {};

TEST_P(Strategy, AveragesGradientsLikeOneProcessOverTheGlobalBatch) {
    for (int world : {2, 3}) {
        SCOPED_TRACE(world);
        auto results = syncOnRanks(GetParam(), world, 1e-4);  // tiny buckets: several of them
        expectAveraged(results, world);
        const auto& c = results[0].counters;
        EXPECT_GT(c.collectives, 0);
        EXPECT_EQ(c.bytes, (16 * 8 + 16 + 4 * 16 + 4) * 4);
    }
}

INSTANTIATE_TEST_SUITE_P(All, Strategy, ::testing::Values("naive", "flat", "overlap", "bucketed"));

TEST(Strategies, OverlappedOnesLaunchDuringBackward) {
    auto overlap = syncOnRanks("overlap", 2);
    EXPECT_EQ(overlap[0].counters.collectives, 4);
    EXPECT_EQ(overlap[0].counters.launched_before_sync, 4);  // every gradient from its hook
    EXPECT_GE(overlap[0].counters.hidden_ms, 0.0);           // Gloo: measured
    // 512, 64, 256, 16 bytes in buckets of 300, last parameter first: {3, 2, 1} (336), {0}.
    auto bucketed = syncOnRanks("bucketed", 2, 300.0 / (1024 * 1024));
    EXPECT_EQ(bucketed[0].counters.collectives, 2);
    EXPECT_EQ(bucketed[0].counters.launched_before_sync, 2);
    auto flat = syncOnRanks("flat", 2);
    EXPECT_EQ(flat[0].counters.collectives, 1);
    EXPECT_EQ(flat[0].counters.launched_before_sync, 0);
    auto naive = syncOnRanks("naive", 2);
    EXPECT_EQ(naive[0].counters.collectives, 4);
    EXPECT_EQ(naive[0].counters.launched_before_sync, 0);
}

TEST(Strategies, GradientsAreViewsIntoTheirBucketsNothingCopied) {
    // See Note [gradients as bucket views]: bucketed at 25 MiB holds the whole network (1 KB) in
    // its first bucket, so every averaged gradient is a view into one tensor, the same one each
    // step; overlap's gradients are each their own bucket, also kept from step to step.
    for (const std::string strategy : {"bucketed", "overlap"}) {
        SCOPED_TRACE(strategy);
        std::vector<std::vector<std::vector<const void*>>> pointers(2);
        std::vector<int> copies(2, -1);
        std::vector<bool> one_storage(2, false);
        auto errors = runThreadRanks(2, [&](Group& g) {
            auto p = makeParams();
            auto [x, y] = globalBatch(2);
            auto sync = makeGradientSync(strategy, 25.0);
            sync->prepare(g, p);
            for (int s = 0; s < 3; ++s) {
                for (auto& t : p) t.mutable_grad() = at::Tensor();  // the step's zero_grad
                sync->beforeBackward();
                lossOf(p, x.narrow(0, 4 * g.rank, 4), y.narrow(0, 4 * g.rank, 4)).backward();
                sync->afterBackward();
                std::vector<const void*> ptrs;
                for (auto& t : p) ptrs.push_back(t.grad().const_data_ptr());
                pointers[static_cast<size_t>(g.rank)].push_back(ptrs);
            }
            copies[static_cast<size_t>(g.rank)] = sync->counters().gradient_copies;
            bool shared = true;
            for (auto& t : p) shared = shared && t.grad().is_alias_of(p[0].grad());
            one_storage[static_cast<size_t>(g.rank)] = shared;
        });
        EXPECT_NO_RANK_ERRORS(errors);
        for (int r = 0; r < 2; ++r) {
            EXPECT_EQ(copies[static_cast<size_t>(r)], 0);
            const auto& steps = pointers[static_cast<size_t>(r)];
            ASSERT_EQ(steps.size(), 3u);
            EXPECT_EQ(steps[0], steps[1]);
            EXPECT_EQ(steps[1], steps[2]);
            EXPECT_EQ(one_storage[static_cast<size_t>(r)], strategy == "bucketed");
        }
    }
}

TEST(Strategies, GradientsArriveAsTheirOwnAndAreFilledIntoTheirBucket) {
    // See Note [a bucket's gradients in one copy]: beforeBackward() drops every gradient, even
    // views set before it, so AccumulateGrad keeps what backward gives; each bucket is filled
    // with them in one copy when it is complete, every gradient its view after, averaged, and
    // nothing copied one by one.
    std::vector<SyncCounters> counters(2);
    std::vector<std::vector<at::Tensor>> grads(2);
    auto errors = runThreadRanks(2, [&](Group& g) {
        auto p = makeParams();
        auto [x, y] = globalBatch(2);
        auto sync = makeGradientSync("bucketed", 25.0);
        sync->prepare(g, p);
        for (auto& t : p) t.mutable_grad() = at::full_like(t, 100.0);  // stale: must not count
        sync->beforeBackward();
        for (auto& t : p) EXPECT_FALSE(t.grad().defined());
        lossOf(p, x.narrow(0, 4 * g.rank, 4), y.narrow(0, 4 * g.rank, 4)).backward();
        sync->afterBackward();
        counters[static_cast<size_t>(g.rank)] = sync->counters();
        for (auto& t : p) {
            EXPECT_TRUE(t.grad().is_alias_of(p[0].grad()));
            grads[static_cast<size_t>(g.rank)].push_back(t.grad().clone());
        }
    });
    EXPECT_NO_RANK_ERRORS(errors);
    const auto ref = referenceGrads(2);
    for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(counters[static_cast<size_t>(r)].gradient_copies, 0);
        for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_TRUE(at::allclose(grads[static_cast<size_t>(r)][i], ref[i], 1e-5, 1e-6)) << i;
    }
}

TEST(Strategies, TheOldFillByAddingIntoViewsAveragesTheSame) {
    // TRAINSCOPE_DDP_FILL=add (See Note [a bucket's gradients in one copy]): each gradient its
    // zeroed view from backward's start, AccumulateGrad adding into it; the same averages.
    ::setenv("TRAINSCOPE_DDP_FILL", "add", 1);
    for (const std::string strategy : {"bucketed", "overlap"}) {
        SCOPED_TRACE(strategy);
        std::vector<std::vector<at::Tensor>> grads(2);
        auto errors = runThreadRanks(2, [&](Group& g) {
            auto p = makeParams();
            auto [x, y] = globalBatch(2);
            auto sync = makeGradientSync(strategy, 25.0);
            sync->prepare(g, p);
            for (int step = 0; step < 2; ++step) {
                sync->beforeBackward();
                for (auto& t : p) EXPECT_TRUE(t.grad().defined());  // its view, zeroed
                lossOf(p, x.narrow(0, 4 * g.rank, 4), y.narrow(0, 4 * g.rank, 4)).backward();
                sync->afterBackward();
            }
            for (auto& t : p) grads[static_cast<size_t>(g.rank)].push_back(t.grad().clone());
        });
        EXPECT_NO_RANK_ERRORS(errors);
        const auto ref = referenceGrads(2);
        for (int r = 0; r < 2; ++r)
            for (size_t i = 0; i < ref.size(); ++i)
                EXPECT_TRUE(at::allclose(grads[static_cast<size_t>(r)][i], ref[i], 1e-5, 1e-6))
                    << i;
    }
    ::unsetenv("TRAINSCOPE_DDP_FILL");
}

TEST(Strategies, AParameterWithoutAGradientGetsAZeroSlotAndEveryBucketIsLaunched) {
    // Backward gives only p[0] a gradient: the other buckets are launched by afterBackward()
    // (every rank makes the same calls), and the others' gradients are zeroed views.
    for (const std::string strategy : {"bucketed", "overlap"}) {
        SCOPED_TRACE(strategy);
        std::vector<SyncCounters> counters(2);
        std::vector<std::vector<at::Tensor>> grads(2);
        auto errors = runThreadRanks(2, [&](Group& g) {
            auto p = makeParams();
            auto sync = makeGradientSync(strategy, 300.0 / (1024 * 1024));
            sync->prepare(g, p);
            sync->beforeBackward();
            (p[0].sum() * static_cast<double>(g.rank + 1)).backward();
            sync->afterBackward();
            counters[static_cast<size_t>(g.rank)] = sync->counters();
            for (auto& t : p) grads[static_cast<size_t>(g.rank)].push_back(t.grad().clone());
        });
        EXPECT_NO_RANK_ERRORS(errors);
        for (int r = 0; r < 2; ++r) {
            const auto& got = grads[static_cast<size_t>(r)];
            EXPECT_EQ(counters[static_cast<size_t>(r)].collectives, strategy == "overlap" ? 4 : 2);
            EXPECT_TRUE(at::allclose(got[0], at::full_like(got[0], 1.5)));
            for (size_t i = 1; i < got.size(); ++i)
                EXPECT_EQ(got[i].abs().sum().item<double>(), 0.0);
        }
    }
}

TEST(Strategies, AGradientReplacedAfterItsBucketIsCopiedIntoItsView) {
    // A backward outside the protocol's care: a gradient replaced after its bucket was filled
    // (here between backward and afterBackward) is a tensor of its own again; afterBackward()
    // puts it into its view, so that the optimizer still reads the buckets, and counts it.
    std::vector<SyncCounters> counters(2);
    auto errors = runThreadRanks(2, [&](Group& g) {
        auto p = makeParams();
        auto [x, y] = globalBatch(2);
        auto sync = makeGradientSync("overlap", 25.0);
        sync->prepare(g, p);
        const void* view = nullptr;
        for (int step = 0; step < 2; ++step) {
            sync->beforeBackward();
            lossOf(p, x.narrow(0, 4 * g.rank, 4), y.narrow(0, 4 * g.rank, 4)).backward();
            if (step == 1) p[2].mutable_grad() = at::full_like(p[2], 7.0);
            sync->afterBackward();
            if (step == 0) view = p[2].grad().const_data_ptr();
        }
        counters[static_cast<size_t>(g.rank)] = sync->counters();
        EXPECT_TRUE(at::equal(p[2].grad(), at::full_like(p[2], 7.0)));
        EXPECT_EQ(p[2].grad().const_data_ptr(), view);  // its view, the bucket of step 0
    });
    EXPECT_NO_RANK_ERRORS(errors);
    for (int r = 0; r < 2; ++r) EXPECT_EQ(counters[static_cast<size_t>(r)].gradient_copies, 1);
}

TEST(Strategies, MixedDtypesAreAveragedInTheirOwnDtype) {
    // A float and a double parameter: the flat and bucketed strategies keep one buffer per dtype.
    const int world = 2;
    auto make = [] {
        return std::vector<at::Tensor>{at::linspace(-1, 1, 6).requires_grad_(),
                                       at::linspace(0.5, 2, 5, at::kDouble).requires_grad_()};
    };
    auto lossOn = [](const std::vector<at::Tensor>& p, int rank) {
        const double x = rank + 1.5;
        return (p[0] * p[0] * x).sum() + (p[1].pow(3) * x).sum().to(at::kFloat);
    };
    auto ref = make();
    ((lossOn(ref, 0) + lossOn(ref, 1)) / world).backward();
    for (const std::string strategy : {"naive", "flat", "overlap", "bucketed"}) {
        std::vector<std::vector<at::Tensor>> got(world);
        std::vector<SyncCounters> counters(world);
        auto errors = runThreadRanks(world, [&](Group& g) {
            auto p = make();
            auto sync = makeGradientSync(strategy, 1.0);
            sync->prepare(g, p);
            sync->beforeBackward();
            lossOn(p, g.rank).backward();
            sync->afterBackward();
            got[static_cast<size_t>(g.rank)] = {p[0].grad(), p[1].grad()};
            counters[static_cast<size_t>(g.rank)] = sync->counters();
        });
        EXPECT_NO_RANK_ERRORS(errors);
        for (const auto& grads : got) {
            ASSERT_EQ(grads.size(), 2u) << strategy;
            EXPECT_EQ(grads[1].scalar_type(), at::kDouble) << strategy;
            EXPECT_TRUE(at::allclose(grads[0], ref[0].grad())) << strategy;
            EXPECT_TRUE(at::allclose(grads[1], ref[1].grad())) << strategy;
        }
        EXPECT_EQ(counters[0].collectives, 2) << strategy;  // two tensors, or two dtypes' buffers
        EXPECT_EQ(counters[0].bytes, 6 * 4 + 5 * 8) << strategy;
    }
}

TEST(Strategies, FactoryRefusesUnknownNamesAndBadBuckets) {
    try {
        makeGradientSync("ring");
        FAIL();
    } catch (const std::invalid_argument& e) {
        const std::string m = e.what();
        for (const char* n : {"'ring'", "naive", "flat", "overlap", "bucketed"})
            EXPECT_NE(m.find(n), std::string::npos) << m;
    }
    EXPECT_THROW(makeGradientSync("bucketed", 0), std::invalid_argument);
    EXPECT_THROW(makeGradientSync("bucketed", -1), std::invalid_argument);
    EXPECT_THROW(makeGradientSync("naive", 0), std::invalid_argument);
    for (const auto& n : gradientSyncNames()) EXPECT_EQ(makeGradientSync(n, 1.0)->name(), n);
}

TEST(Strategies, BroadcastGivesEveryRankRankZerosParameters) {
    std::vector<std::vector<at::Tensor>> got(3);
    auto errors = runThreadRanks(3, [&](Group& g) {
        std::vector<at::Tensor> p{at::full({3, 2}, float(g.rank + 1)).requires_grad_(),
                                  at::full({4}, double(g.rank + 10), at::kDouble)};
        broadcastParameters(g, p);
        got[static_cast<size_t>(g.rank)] = p;
    });
    EXPECT_NO_RANK_ERRORS(errors);
    for (const auto& p : got) {
        EXPECT_TRUE(at::equal(p[0], at::full({3, 2}, 1.0f)));
        EXPECT_TRUE(at::equal(p[1], at::full({4}, 10.0, at::kDouble)));
    }
}

TEST(Sharding, BalancedByBytesLargestFirst) {
    // Largest first to the lighter rank: 10→0, 9→1, 8→1, 7→0, then 1 to rank 0 (17 = 17: the
    // lower).
    EXPECT_EQ(shardParameters({7, 10, 1, 9, 8}, 2), (std::vector<int>{0, 0, 0, 1, 1}));
    const std::vector<int64_t> sizes{400, 30, 1200, 30, 800, 800, 5, 300, 64, 64, 1200, 16};
    for (int world : {1, 2, 3, 4, 16}) {
        const auto owner = shardParameters(sizes, world);
        std::vector<int64_t> load(static_cast<size_t>(world), 0);
        for (size_t i = 0; i < sizes.size(); ++i) {
            ASSERT_GE(owner[i], 0);
            ASSERT_LT(owner[i], world);
            load[static_cast<size_t>(owner[i])] += sizes[i];
        }
        const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
        for (int64_t l : load)
            EXPECT_LE(l, total / world + 1200) << "world " << world;  // mean + largest
    }
    EXPECT_THROW(shardParameters({1}, 0), std::invalid_argument);
}

TEST(Sharding, LargeParametersGoInPlaceAndSmallOnesInBoundedPacks) {
    // See Note [sharded broadcast]: a 2 MiB and a 1.5 MiB parameter go as they are; twenty of
    // 256 KiB (5 MiB in all) need two packs of at most 4 MiB. The step allocates no copy of the
    // model, and every rank ends with every owner's values.
    const int world = 2;
    auto make = [] {
        std::vector<at::Tensor> p;
        p.push_back(at::full({512, 1024}, 1.0f));
        for (int i = 0; i < 20; ++i) p.push_back(at::full({64, 1024}, 2.0f + i));
        p.push_back(at::full({384, 1024}, -1.0f));
        for (auto& t : p) t.set_requires_grad(true);
        return p;
    };
    std::vector<std::vector<at::Tensor>> got(world);
    std::vector<int64_t> packed(world), sent(world);
    auto errors = runThreadRanks(world, [&](Group& g) {
        auto p = make();
        for (auto& t : p) t.mutable_grad() = at::ones_like(t);
        ShardedOptimizer opt(g, p, [](std::vector<at::Tensor> shard) {
            return [shard] {
                at::NoGradGuard no_grad;
                for (const auto& t : shard) t.sub_(t.grad() * 0.5);
            };
        });
        opt.step();
        packed[static_cast<size_t>(g.rank)] = opt.lastPackedBytes();
        sent[static_cast<size_t>(g.rank)] = opt.lastBroadcastBytes();
        got[static_cast<size_t>(g.rank)] = p;
    });
    EXPECT_NO_RANK_ERRORS(errors);
    const auto ref = make();
    int64_t total = 0;
    for (const auto& t : ref) total += t.numel() * 4;
    for (int r = 0; r < world; ++r) {
        EXPECT_EQ(sent[static_cast<size_t>(r)], total);
        EXPECT_GT(packed[static_cast<size_t>(r)], 0);
        EXPECT_LE(packed[static_cast<size_t>(r)], int64_t{4} << 20);
        for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_TRUE(at::equal(got[static_cast<size_t>(r)][i], ref[i].detach() - 0.5))
                << "rank " << r << " parameter " << i;
    }
}

TEST(Sharding, OwnersStepTheirShardAndEveryRankEndsEqual) {
    // SGD as the local step: p -= 0.1·grad on the shard only, then broadcast by owner.
    const int world = 3;
    std::vector<std::vector<at::Tensor>> got(world);
    std::vector<size_t> shard_sizes(world);
    auto errors = runThreadRanks(world, [&](Group& g) {
        auto p = makeParams();
        for (auto& t : p) t.mutable_grad() = at::ones_like(t);
        ShardedOptimizer opt(g, p, [](std::vector<at::Tensor> shard) {
            return [shard] {
                at::NoGradGuard no_grad;
                for (const auto& t : shard) t.sub_(t.grad() * 0.1);
            };
        });
        shard_sizes[static_cast<size_t>(g.rank)] = opt.localShard().size();
        opt.step();
        got[static_cast<size_t>(g.rank)] = p;
    });
    EXPECT_NO_RANK_ERRORS(errors);
    auto ref = makeParams();
    EXPECT_EQ(shard_sizes[0] + shard_sizes[1] + shard_sizes[2], ref.size());
    for (int r = 0; r < world; ++r)
        for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_TRUE(at::allclose(got[static_cast<size_t>(r)][i], ref[i].detach() - 0.1))
                << r << " " << i;
}
