// computeStats and summarize (result.cpp): sample statistics over the measured steps.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "benchmark/benchmark.h"

using namespace ts;

TEST(Stats, EmptyIsAllZero) {
    const Stats s = computeStats({});
    EXPECT_EQ(s.count, 0);
    EXPECT_EQ(s.mean, 0);
    EXPECT_EQ(s.std, 0);
    EXPECT_EQ(s.median, 0);
    EXPECT_EQ(s.min, 0);
    EXPECT_EQ(s.max, 0);
    EXPECT_EQ(s.cv, 0);
}

TEST(Stats, SingleValueHasNoSpread) {
    const Stats s = computeStats({4.25});
    EXPECT_EQ(s.count, 1);
    EXPECT_DOUBLE_EQ(s.mean, 4.25);
    EXPECT_EQ(s.std, 0);
    EXPECT_DOUBLE_EQ(s.median, 4.25);
    EXPECT_DOUBLE_EQ(s.min, 4.25);
    EXPECT_DOUBLE_EQ(s.max, 4.25);
    EXPECT_EQ(s.cv, 0);
}

TEST(Stats, KnownSampleEvenCountUnsorted) {
    // 2 4 4 4 5 5 7 9: mean 5, sum of squares 32, sample variance 32/7, median (4+5)/2.
    const Stats s = computeStats({9, 4, 2, 5, 4, 7, 4, 5});
    EXPECT_EQ(s.count, 8);
    EXPECT_DOUBLE_EQ(s.mean, 5.0);
    EXPECT_DOUBLE_EQ(s.std, std::sqrt(32.0 / 7.0));  // Bessel's correction, not 32/8
    EXPECT_DOUBLE_EQ(s.median, 4.5);
    EXPECT_DOUBLE_EQ(s.min, 2.0);
    EXPECT_DOUBLE_EQ(s.max, 9.0);
    EXPECT_DOUBLE_EQ(s.cv, std::sqrt(32.0 / 7.0) / 5.0);
}

TEST(Stats, OddCountMedianIsMiddleValue) {
    // Sorted: 1 3 10 20 100. Mean 26.8; the median is the middle, not the mean.
    const Stats s = computeStats({100, 1, 20, 3, 10});
    EXPECT_EQ(s.count, 5);
    EXPECT_DOUBLE_EQ(s.median, 10.0);
    EXPECT_DOUBLE_EQ(s.mean, 26.8);
    double ss = 0;
    for (double x : {100.0, 1.0, 20.0, 3.0, 10.0}) ss += (x - 26.8) * (x - 26.8);
    EXPECT_DOUBLE_EQ(s.std, std::sqrt(ss / 4.0));
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 100.0);
}

TEST(Stats, TwoValues) {
    const Stats s = computeStats({1.0, 3.0});
    EXPECT_DOUBLE_EQ(s.mean, 2.0);
    EXPECT_DOUBLE_EQ(s.median, 2.0);
    EXPECT_DOUBLE_EQ(s.std, std::sqrt(2.0));  // ((1)^2 + (1)^2) / (2 - 1)
    EXPECT_DOUBLE_EQ(s.cv, std::sqrt(2.0) / 2.0);
}

TEST(Stats, ConstantValuesHaveZeroSpread) {
    const Stats s = computeStats({7.5, 7.5, 7.5, 7.5});
    EXPECT_DOUBLE_EQ(s.mean, 7.5);
    EXPECT_DOUBLE_EQ(s.std, 0.0);
    EXPECT_DOUBLE_EQ(s.cv, 0.0);
}

TEST(Stats, ZeroMeanGivesZeroCv) {
    const Stats s = computeStats({-1.0, 1.0});
    EXPECT_DOUBLE_EQ(s.mean, 0.0);
    EXPECT_GT(s.std, 0.0);
    EXPECT_EQ(s.cv, 0.0);  // not inf or NaN
}

TEST(Summarize, IgnoresWarmupSteps) {
    BenchResult r;
    auto step = [](int i, bool warm, double f, double b, double o) {
        StepSample s;
        s.index = i;
        s.warmup = warm;
        s.forward_ms = f;
        s.backward_ms = b;
        s.optimizer_ms = o;
        s.total_ms = f + b + o;
        return s;
    };
    // Warm-up steps are huge (compilation, allocator growth) and must not show.
    r.steps.push_back(step(0, true, 1000, 2000, 3000));
    r.steps.push_back(step(1, true, 500, 500, 500));
    r.steps.push_back(step(2, false, 1, 2, 0.5));
    r.steps.push_back(step(3, false, 3, 4, 0.5));
    r.steps.push_back(step(4, false, 2, 6, 0.5));
    summarize(r);

    EXPECT_EQ(r.forward.count, 3);
    EXPECT_DOUBLE_EQ(r.forward.mean, 2.0);
    EXPECT_DOUBLE_EQ(r.forward.median, 2.0);
    EXPECT_DOUBLE_EQ(r.forward.min, 1.0);
    EXPECT_DOUBLE_EQ(r.forward.max, 3.0);
    EXPECT_DOUBLE_EQ(r.forward.std, 1.0);

    EXPECT_EQ(r.backward.count, 3);
    EXPECT_DOUBLE_EQ(r.backward.mean, 4.0);
    EXPECT_DOUBLE_EQ(r.backward.max, 6.0);

    EXPECT_EQ(r.optimizer.count, 3);
    EXPECT_DOUBLE_EQ(r.optimizer.mean, 0.5);
    EXPECT_DOUBLE_EQ(r.optimizer.std, 0.0);

    EXPECT_EQ(r.total.count, 3);
    EXPECT_DOUBLE_EQ(r.total.mean, (3.5 + 7.5 + 8.5) / 3.0);
    EXPECT_DOUBLE_EQ(r.total.median, 7.5);
    EXPECT_DOUBLE_EQ(r.total.max, 8.5);
}

TEST(Summarize, OnlyWarmupGivesEmptyStatsAndOverwritesOldOnes) {
    BenchResult r;
    r.forward.count = 99;  // stale numbers must be replaced, not kept
    r.forward.mean = 12;
    StepSample s;
    s.warmup = true;
    s.forward_ms = 10;
    r.steps = {s, s};
    summarize(r);
    EXPECT_EQ(r.forward.count, 0);
    EXPECT_EQ(r.forward.mean, 0);
    EXPECT_EQ(r.total.count, 0);
}
