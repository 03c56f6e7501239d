// The accumulation experiment's arithmetic, without LibTorch: rounding to fp16 / bf16, the
// ulp, the course's four sums, the running error and the steps where an add rounds or stalls.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "precision/precision.h"

namespace {

using ts::NumFormat;

ts::AccumulationResult sumOf(NumFormat acc, NumFormat addend, bool cast, double x = 0.01,
                             int64_t n = 1000) {
    return ts::accumulate({acc, addend, cast}, x, n);
}

TEST(Rounding, NearestTiesToEvenWithSubnormalsAndOverflow) {
    // fp16: 11 significand bits, so 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even wins.
    EXPECT_EQ(ts::roundTo(1 + std::ldexp(1, -11), NumFormat::FP16), 1.0);
    EXPECT_EQ(ts::roundTo(1 + 3 * std::ldexp(1, -11), NumFormat::FP16), 1 + std::ldexp(1, -9));
    EXPECT_EQ(ts::roundTo(1 + std::ldexp(1, -11) + std::ldexp(1, -20), NumFormat::FP16),
              1 + std::ldexp(1, -10));
    EXPECT_EQ(ts::roundTo(65519, NumFormat::FP16), 65504);
    EXPECT_TRUE(
        std::isinf(ts::roundTo(65520, NumFormat::FP16)));  // the tie with 65536 goes up: overflow
    EXPECT_EQ(ts::roundTo(std::ldexp(1, -24), NumFormat::FP16),
              std::ldexp(1, -24));  // smallest subnormal
    EXPECT_EQ(ts::roundTo(std::ldexp(1, -26), NumFormat::FP16), 0.0);
    // bf16: 8 bits, ulp 2^-7 at 1; 1.5 ulp is a tie between 1 and 2 ulp: even (2) wins; 0.75 ulp
    // → 1.
    EXPECT_EQ(ts::roundTo(-1 - std::ldexp(3, -8), NumFormat::BF16), -1 - std::ldexp(1, -6));
    EXPECT_EQ(ts::roundTo(-1 - std::ldexp(3, -9), NumFormat::BF16), -1 - std::ldexp(1, -7));
    EXPECT_EQ(ts::roundTo(0.1, NumFormat::FP32), static_cast<double>(0.1f));
}

TEST(Rounding, UlpIsTheSpacingAtTheValue) {
    EXPECT_EQ(ts::ulpOf(1.0, NumFormat::FP32), std::ldexp(1, -23));
    EXPECT_EQ(ts::ulpOf(1.0, NumFormat::FP16), std::ldexp(1, -10));
    EXPECT_EQ(ts::ulpOf(1.0, NumFormat::BF16), std::ldexp(1, -7));
    EXPECT_EQ(ts::ulpOf(10.0, NumFormat::FP16), std::ldexp(1, -7));  // in [8, 16)
    EXPECT_EQ(ts::ulpOf(0.0, NumFormat::FP16), std::ldexp(1, -24));  // subnormal spacing
    for (auto f : {NumFormat::FP32, NumFormat::FP16, NumFormat::BF16})
        for (double x : {0.3, 3.0, 1000.0}) {
            const double u = ts::ulpOf(x, f), r = ts::roundTo(x, f);
            EXPECT_LE(std::fabs(r - x), u / 2) << ts::toString(f) << " " << x;
            EXPECT_EQ(ts::roundTo(r + u, f), r + u);  // the next value up is representable
        }
}

// The course's four results, printed as the course prints them, and bit for bit: the fp32 sum
// equals a plain float loop, and the fp32 accumulator fed fp16 values equals a float loop of
// the fp16 value of 0.01 (the widening is exact).
TEST(Accumulation, TheCoursesFourSums) {
    const auto fp32 = sumOf(NumFormat::FP32, NumFormat::FP32, false);
    const auto fp16 = sumOf(NumFormat::FP16, NumFormat::FP16, false);
    const auto mixed = sumOf(NumFormat::FP32, NumFormat::FP16, false);
    const auto cast = sumOf(NumFormat::FP32, NumFormat::FP16, true);
    EXPECT_EQ(fmt::format("{:.4f}", fp32.value), "10.0001");
    EXPECT_EQ(fmt::format("{:.4f}", fp16.value), "9.9531");
    EXPECT_EQ(fmt::format("{:.4f}", mixed.value), "10.0021");
    EXPECT_EQ(fmt::format("{:.4f}", cast.value), "10.0021");

    float f = 0, g = 0;
    const float half_of_0_01 = static_cast<float>(ts::roundTo(0.01, NumFormat::FP16));
    for (int i = 0; i < 1000; ++i) {
        f += 0.01f;
        g += half_of_0_01;
    }
    EXPECT_EQ(fp32.value, static_cast<double>(f));
    EXPECT_EQ(mixed.value, static_cast<double>(g));
    EXPECT_EQ(cast.value, mixed.value);  // the cast is what type promotion does anyway
    EXPECT_EQ(half_of_0_01,
              0.01000213623046875f);  // 0.01 in fp16: 1.0100100000 × 2^-7 ... to within 2^-18
    EXPECT_EQ(fp32.exact, 10.0);
    EXPECT_EQ(fp16.error, fp16.value - 10.0);
}

TEST(Accumulation, RunningErrorEveryStep) {
    const auto r = sumOf(NumFormat::FP32, NumFormat::FP32, false);
    ASSERT_EQ(r.running_error.size(), 1000u);
    EXPECT_EQ(r.running_error_stride, 1);
    float s = 0;
    for (int i = 0; i < 1000; ++i) {
        s += 0.01f;
        ASSERT_EQ(r.running_error[i], static_cast<double>(s) - (i + 1) * 0.01) << "step " << i + 1;
    }
    EXPECT_EQ(r.running_error.back(), r.error);
    // Long sums keep at most kMaxRunningErrorPoints points, evenly spaced, the last at the end.
    const auto long_sum = sumOf(NumFormat::FP16, NumFormat::FP16, false, 0.01, 25'000);
    EXPECT_EQ(long_sum.running_error_stride, 3);
    EXPECT_LE(static_cast<int64_t>(long_sum.running_error.size()), ts::kMaxRunningErrorPoints);
}

// The first rounding step of the fp32 sum is the first step of a plain float loop whose
// increment is not exactly 0.01f.
TEST(Accumulation, FirstRoundingStepOfFp32) {
    const auto r = sumOf(NumFormat::FP32, NumFormat::FP32, false);
    float s = 0;
    int64_t first = 0;
    for (int64_t i = 1; i <= 1000 && !first; ++i) {
        const float next = s + 0.01f;
        if (static_cast<double>(next) - s != static_cast<double>(0.01f)) first = i;
        s = next;
    }
    ASSERT_GT(first, 0);
    EXPECT_EQ(r.first_rounding_step, first);
    EXPECT_EQ(r.first_stall_step, 0);  // fp32 never stalls in 1000 steps
}

// fp16 fed 0.01 (stored as 0.01000213623046875): while half an ulp of the sum is below the
// addend every add moves the sum, rounded to a multiple of the ulp; the sum stalls in the first
// binade [2^k, 2^(k+1)) whose half ulp exceeds the addend, at its start 2^k, and stays there.
TEST(Accumulation, Fp16StallsWhereHalfAnUlpExceedsTheAddend) {
    const double a = ts::roundTo(0.01, NumFormat::FP16);
    double p = 1;
    while (ts::ulpOf(p, NumFormat::FP16) / 2 <= a) p *= 2;
    EXPECT_EQ(p, 32.0);  // ulp 2^-5 from 32 on: half of it, 0.015625, exceeds 0.01
    const auto r = sumOf(NumFormat::FP16, NumFormat::FP16, false, 0.01, 10'000);
    ASSERT_GT(r.first_stall_step, 0);
    EXPECT_EQ(r.sum_at_stall, p);
    EXPECT_EQ(r.value, p);  // stalled for good
    EXPECT_EQ(r.ulp_at_stall, ts::ulpOf(p, NumFormat::FP16));
    // The course's 1000-step sum ends below 16: it never stalls, but rounds from early on.
    const auto course = sumOf(NumFormat::FP16, NumFormat::FP16, false);
    EXPECT_EQ(course.first_stall_step, 0);
    EXPECT_GT(course.first_rounding_step, 0);
    EXPECT_LT(course.first_rounding_step, r.first_stall_step);
    // In [8, 16) each add of 0.01 rounds to one ulp, 2^-7 = 0.0078125, which is why the
    // course's fp16 sum falls short of 10.
    const auto& e = course.running_error;
    for (size_t i = 900; i < 999; ++i)
        EXPECT_NEAR((e[i + 1] + (i + 2) * 0.01) - (e[i] + (i + 1) * 0.01), 0.0078125, 1e-12) << i;
}

TEST(Accumulation, Bf16StallsAtFour) {
    const auto r = sumOf(NumFormat::BF16, NumFormat::BF16, false);
    const double a = ts::roundTo(0.01, NumFormat::BF16);
    double p = 1;
    while (ts::ulpOf(p, NumFormat::BF16) / 2 <= a) p *= 2;
    EXPECT_EQ(r.sum_at_stall, p);
    EXPECT_EQ(r.value, p);
    EXPECT_GT(r.first_stall_step, 0);
    EXPECT_EQ(r.ulp_end, ts::ulpOf(p, NumFormat::BF16));
}

// An addend that the accumulator holds exactly, summed where every partial sum is exact:
// no rounding, no stall, no error.
TEST(Accumulation, ExactAddendNeverRounds) {
    for (auto f : {NumFormat::FP32, NumFormat::FP16, NumFormat::BF16}) {
        const auto r = ts::accumulate({f, f, false}, 0.125, 64);
        EXPECT_EQ(r.value, 8.0) << ts::toString(f);
        EXPECT_EQ(r.first_rounding_step, 0);
        EXPECT_EQ(r.first_stall_step, 0);
        EXPECT_EQ(r.error, 0.0);
    }
}

TEST(Accumulation, VariantsAndValidation) {
    EXPECT_EQ(ts::accumulationVariants(true, false).size(), 4u);
    EXPECT_EQ(ts::accumulationVariants(true, true).size(), 7u);
    EXPECT_EQ(ts::accumulationVariants(false, false).size(), 1u);
    EXPECT_EQ(ts::accumulationVariants(true, true)[3].name(), "fp32 += fp16 (cast)");
    ts::AccumulationSpec s;
    EXPECT_TRUE(ts::validateAccumulationSpec(s).empty());
    s.count = 0;
    EXPECT_FALSE(ts::validateAccumulationSpec(s).empty());
    s.count = 10;
    s.addend = 1e300;  // finite, but not in fp32
    EXPECT_FALSE(ts::validateAccumulationSpec(s).empty());
}

}  // namespace
