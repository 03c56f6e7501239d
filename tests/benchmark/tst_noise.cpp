// See Note [noisy measurement]: a benchmark result whose step time varies by more than 5% is
// flagged with its likely cause, in the report's tables (text, Markdown, CSV).
#include <gtest/gtest.h>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_report.h"

namespace {

// A finished result whose measured totals are `totals` (ms), on `device`.
ts::BenchResult withTotals(const std::vector<double>& totals, const std::string& device = "cuda") {
    ts::BenchResult r;
    r.config.model = *ts::modelPreset("small");
    r.config.device = device;
    r.config.steps = static_cast<int>(totals.size());
    int i = 0;
    for (double t : totals) {
        ts::StepSample s;
        s.index = i++;
        s.forward_ms = t / 3;
        s.backward_ms = t / 3;
        s.optimizer_ms = t / 3;
        s.total_ms = t;
        r.steps.push_back(s);
    }
    ts::summarize(r);
    return r;
}

TEST(Noise, SteadyStepsAreNotFlagged) {
    const auto r = withTotals({100, 101, 99, 100, 100, 101, 99, 100});
    EXPECT_LE(r.total.cv, ts::kNoisyCv);
    EXPECT_FALSE(ts::noiseFlag(r));
    EXPECT_EQ(ts::noiseText(r), "");
    EXPECT_EQ(ts::formatResults({r}, ts::TableFormat::Text).find("noise"), std::string::npos);
}

TEST(Noise, EachCauseFromTheResultItself) {
    // Three steps: too few to say more.
    auto few = ts::noiseFlag(withTotals({100, 120, 90}));
    ASSERT_TRUE(few);
    EXPECT_EQ(few->cause, "too few steps (3 measured): measure more");
    // One step far above the median: other load.
    auto outlier = ts::noiseFlag(withTotals({100, 100, 101, 99, 100, 100, 180, 100}));
    ASSERT_TRUE(outlier);
    EXPECT_NE(outlier->cause.find("outliers (slowest step 180.0 ms, median 100.0 ms)"),
              std::string::npos)
        << outlier->cause;
    // Short GPU steps with jitter: launch-bound.
    auto launch = ts::noiseFlag(withTotals({20, 24, 19, 23, 21, 25, 18, 22}));
    ASSERT_TRUE(launch);
    EXPECT_NE(launch->cause.find("launch-bound (21.5 ms steps"), std::string::npos)
        << launch->cause;
    // The same on the CPU: shared cores.
    auto cpu = ts::noiseFlag(withTotals({20, 24, 19, 23, 21, 25, 18, 22}, "cpu"));
    ASSERT_TRUE(cpu);
    EXPECT_EQ(cpu->cause, "the CPU is shared (other processes, frequency scaling)");
    // Long GPU steps with a spread and no outlier.
    auto spread = ts::noiseFlag(withTotals({200, 240, 190, 230, 210, 250, 180, 220}));
    ASSERT_TRUE(spread);
    EXPECT_EQ(spread->cause, "a steady spread between steps");
    // A failed point is not "noisy".
    auto failed = withTotals({100, 120, 90});
    failed.status = ts::Status::OOM;
    EXPECT_FALSE(ts::noiseFlag(failed));
}

TEST(Noise, TheReportShowsItWhereAnyResultIsNoisy) {
    const auto steady = withTotals({100, 101, 99, 100, 100, 101, 99, 100});
    const auto noisy = withTotals({20, 24, 19, 23, 21, 25, 18, 22});
    const std::string text = ts::formatResults({steady, noisy}, ts::TableFormat::Text);
    EXPECT_NE(text.find("noise"), std::string::npos) << text;
    EXPECT_NE(text.find("CV 11%: launch-bound"), std::string::npos) << text;
    const std::string csv = ts::formatResults({steady}, ts::TableFormat::Csv);
    EXPECT_NE(csv.substr(0, csv.find('\n')).find(",noise,"), std::string::npos) << csv;
}

}  // namespace
