#include <gtest/gtest.h>

#include "trainscope/distributed/buckets.h"

TEST(Buckets, ReverseOrderClosedAtTheLimit) {
    // Parameters 0..4 of 4, 4, 4, 4, 4 bytes; first bucket 4 bytes, then 8.
    auto b = ts::dist::assignBuckets({4, 4, 4, 4, 4}, 8, 4);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0], (std::vector<int>{4}));
    EXPECT_EQ(b[1], (std::vector<int>{3, 2}));
    EXPECT_EQ(b[2], (std::vector<int>{1, 0}));
}

TEST(Buckets, LargeParameterClosesTheBucketItJoinsAndNothingIsLost) {
    auto b = ts::dist::assignBuckets({1, 100, 1, 1}, 10, 10);
    int seen = 0;
    for (const auto& bucket : b) seen += static_cast<int>(bucket.size());
    EXPECT_EQ(seen, 4);
    EXPECT_EQ(b[0], (std::vector<int>{3, 2, 1}));  // 1 + 1 + 100 closes the first bucket
    EXPECT_EQ(b[1], (std::vector<int>{0}));
    EXPECT_THROW(ts::dist::assignBuckets({1}, 0, 1), std::invalid_argument);
}

TEST(Buckets, EveryBucketFilledToItsLimitByItsLastParameterAndInReverseOrder) {
    std::vector<int64_t> sizes;
    for (int i = 0; i < 200; ++i)
        sizes.push_back(1 + (i * 7919) % 997);  // 1 .. 997 bytes, scrambled
    const int64_t first = 1000, rest = 4000;
    const auto b = ts::dist::assignBuckets(sizes, rest, first);
    int expected = static_cast<int>(sizes.size()) - 1;
    for (size_t k = 0; k < b.size(); ++k) {
        const int64_t limit = k == 0 ? first : rest;
        int64_t filled = 0;
        for (int i : b[k]) {
            EXPECT_EQ(i, expected--);  // one run of indices, last parameter first
            filled += sizes[static_cast<size_t>(i)];
        }
        if (k + 1 < b.size()) EXPECT_GE(filled, limit) << "bucket " << k;
        EXPECT_LT(filled - sizes[static_cast<size_t>(b[k].back())], limit)
            << "bucket " << k;  // closed at once
    }
    EXPECT_EQ(expected, -1);
}

// ---- The bucket-size model (see Note [bucket-size model]) ----

#include <cmath>

#include "trainscope/distributed/bucket_model.h"

using ts::dist::BucketSpan;
using ts::dist::fitLatencyBandwidth;
using ts::dist::GradientReady;
using ts::dist::predictBucketed;

TEST(BucketModel, TheFitRecoversLatencyAndBandwidthFromNoisyTimes) {
    // t = 0.05 ms + n / (2 GB/s), with ±1% noise that does not average out to zero exactly.
    const double alpha = 0.05, beta = 2e6;  // bytes per ms
    std::vector<std::pair<int64_t, double>> samples;
    int k = 0;
    for (int64_t n :
         {int64_t{1} << 16, int64_t{1} << 18, int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24})
        for (int rep = 0; rep < 3; ++rep, ++k) {
            const double t = alpha + static_cast<double>(n) / beta;
            samples.emplace_back(n, t * (1.0 + 0.01 * std::sin(1.7 * k)));
        }
    const auto fit = fitLatencyBandwidth(samples);
    ASSERT_TRUE(fit.ok);
    EXPECT_EQ(fit.points, 15);
    EXPECT_NEAR(fit.beta_bytes_per_ms, beta, 0.02 * beta);
    EXPECT_NEAR(fit.betaGbps(), 2.0, 0.04);
    EXPECT_NEAR(fit.alpha_ms, alpha, 0.03);
    EXPECT_GT(fit.rms_residual_ms, 0.0);
    EXPECT_LT(fit.rms_residual_ms, 0.02 * (alpha + (1 << 24) / beta));
    EXPECT_GT(fit.r2, 0.99);
    // Exact times: exact parameters, no residual.
    const auto exact =
        fitLatencyBandwidth({{1000, 1.0 + 1000 / 500.0}, {9000, 1.0 + 9000 / 500.0}});
    ASSERT_TRUE(exact.ok);
    EXPECT_NEAR(exact.alpha_ms, 1.0, 1e-9);
    EXPECT_NEAR(exact.beta_bytes_per_ms, 500.0, 1e-6);
    EXPECT_NEAR(exact.rms_residual_ms, 0.0, 1e-9);
    EXPECT_FALSE(exact.through_origin);
    // One size cannot tell latency from bandwidth; nor can no time at all.
    EXPECT_FALSE(fitLatencyBandwidth({{1000, 1.0}, {1000, 1.1}}).ok);
    EXPECT_FALSE(fitLatencyBandwidth({{1000, 0.0}, {9000, 0.0}}).ok);
    EXPECT_FALSE(fitLatencyBandwidth({{1000, 1.0}}).ok);
    // A negative intercept is no latency: the line through the origin, t = n / beta with
    // beta = Σn² / Σnt; so is a time falling with size.
    const auto origin = fitLatencyBandwidth({{1000, 0.5}, {2000, 1.5}, {3000, 2.5}});
    ASSERT_TRUE(origin.ok);
    EXPECT_TRUE(origin.through_origin);
    EXPECT_EQ(origin.alpha_ms, 0.0);
    EXPECT_NEAR(origin.beta_bytes_per_ms, 14e6 / 11000, 1e-6);
    const auto falling = fitLatencyBandwidth({{1000, 2.0}, {9000, 1.0}});
    ASSERT_TRUE(falling.ok);
    EXPECT_TRUE(falling.through_origin);
    EXPECT_NEAR(falling.beta_bytes_per_ms, 82e6 / 11000, 1e-6);
}

TEST(BucketModel, ABucketQueuedBehindAnotherIsChargedItsOwnTimeOnly) {
    std::vector<BucketSpan> spans(3);
    spans[0] = {0, 100, 1, 1.0, 1.0, 3.0};
    spans[1] = {1, 200, 1, 2.0, 2.0, 6.0};   // queued until 3: its own time is 3
    spans[2] = {2, 300, 1, 8.0, 8.0, 10.0};  // launched after the channel was free
    const auto times = ts::dist::bucketServiceTimes(spans);
    ASSERT_EQ(times.size(), 3u);
    EXPECT_EQ(times[0], (std::pair<int64_t, double>{100, 2.0}));
    EXPECT_EQ(times[1], (std::pair<int64_t, double>{200, 3.0}));
    EXPECT_EQ(times[2], (std::pair<int64_t, double>{300, 2.0}));
}

TEST(BucketModel, PredictionFollowsTheBucketsAndTheChannel) {
    // Four gradients of 1000 bytes ready at 1, 2, 3, 4 ms from backward's start in reverse order
    // (the last parameter first), backward 4 ms; an all-reduce of n bytes takes 0.5 + n/1000 ms.
    ts::dist::LatencyBandwidthFit fit;
    fit.ok = true;
    fit.alpha_ms = 0.5;
    fit.beta_bytes_per_ms = 1000;
    const std::vector<GradientReady> grads = {{1000, 4.0}, {1000, 3.0}, {1000, 2.0}, {1000, 1.0}};
    // One gradient a bucket: launched at 1, 2, 3, 4; each 1.5 ms on one channel: ends 2.5, 4,
    // 5.5, 7; 3 ms after backward.
    auto small = predictBucketed(grads, 4.0, 1000, 1000, fit);
    EXPECT_EQ(small.buckets, 4);
    EXPECT_NEAR(small.comm_end_ms, 7.0, 1e-12);
    EXPECT_NEAR(small.exposed_ms, 3.0, 1e-12);
    // Two a bucket: ready at 2 and 4, each 2.5 ms: 4.5, then 7: 3 ms after backward too.
    auto pairs = predictBucketed(grads, 4.0, 2000, 2000, fit);
    EXPECT_EQ(pairs.buckets, 2);
    EXPECT_NEAR(pairs.exposed_ms, 3.0, 1e-12);
    // One bucket: launched at 4, 4.5 ms: all of it after backward.
    auto one = predictBucketed(grads, 4.0, 4000, 4000, fit);
    EXPECT_EQ(one.buckets, 1);
    EXPECT_NEAR(one.exposed_ms, 4.5, 1e-12);
    // A first bucket smaller than the rest, as BucketedSync makes them: 1000, then 3000 bytes.
    auto first = predictBucketed(grads, 4.0, 4000, 1000, fit);
    EXPECT_EQ(first.buckets, 2);
    EXPECT_NEAR(first.comm_end_ms, 4.0 + 3.5, 1e-12);
    // The course's closed form: sqrt(s·alpha·beta) = sqrt(4000 · 0.5 · 1000).
    EXPECT_NEAR(ts::dist::courseOptimalBucketBytes(4000, fit), std::sqrt(2e6), 1e-9);
}
