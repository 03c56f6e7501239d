// The benchmark's limits (torch-free): steps that would overflow, sweeps too big to expand,
// tensors no device holds, numbers that are not finite. Each refusal names the value and
// the limit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"

namespace {

ts::PointConfig tiny() {
    ts::PointConfig c;
    c.model = *ts::modelPreset("tiny");
    c.model.context_length = 8;
    c.batch_size = 1;
    c.device = "cpu";
    return c;
}

std::string problems(const ts::PointConfig& c) {
    std::string all;
    for (const auto& p : ts::validatePoint(c)) all += p + "\n";
    return all;
}

TEST(BenchLimits, TinyIsValid) { EXPECT_EQ(problems(tiny()), ""); }

TEST(BenchLimits, StepCountsBeyondTheLimitAreRefused) {
    auto c = tiny();
    c.warmup = 1;
    c.steps = std::numeric_limits<int>::max();  // warm-up + steps would overflow int
    EXPECT_NE(problems(c).find("steps 2147483647 is more than the limit of 1000000"),
              std::string::npos)
        << problems(c);
    c = tiny();
    c.warmup = ts::kMaxSteps + 1;
    EXPECT_NE(problems(c).find("warmup 1000001"), std::string::npos) << problems(c);
    c = tiny();
    c.warmup = ts::kMaxSteps;
    c.steps = ts::kMaxSteps;
    EXPECT_EQ(problems(c), "");
}

TEST(BenchLimits, NonFiniteNumbersAreRefused) {
    for (double bad : {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN(), -1.0}) {
        auto c = tiny();
        c.learning_rate = bad;
        EXPECT_NE(problems(c).find("learning_rate must be a positive finite number"),
                  std::string::npos)
            << bad;
        c = tiny();
        c.model.rope_theta = bad;
        EXPECT_NE(problems(c).find("rope_theta must be a positive finite number"),
                  std::string::npos)
            << bad;
    }
    // As they come from a sweep file.
    const auto spec = ts::sweepFromJson(nlohmann::json::parse(
        R"({"base": {"size": "tiny", "device": "cpu", "learning_rate": "Infinity", "rope_theta": "Infinity"}})"));
    const auto text = problems(ts::expandSweep(spec).front());
    EXPECT_NE(text.find("learning_rate must be a positive finite number (got inf)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("rope_theta must be a positive finite number (got inf)"), std::string::npos)
        << text;
}

TEST(BenchLimits, TensorsNoDeviceHoldsAreRefusedUpFront) {
    auto c = tiny();
    c.model.context_length = 99999999999999;
    EXPECT_NE(problems(c).find("attention scores"), std::string::npos) << problems(c);
    EXPECT_NE(problems(c).find("2^40 bytes"), std::string::npos);
    c = tiny();
    c.batch_size = 100000000;
    EXPECT_NE(problems(c).find("logits"), std::string::npos) << problems(c);
    c = tiny();
    c.model.d_model = c.model.num_heads * (int64_t{1} << 40);  // the product would overflow int64
    c.model.d_ff = int64_t{1} << 40;
    EXPECT_NE(problems(c).find("would take"), std::string::npos) << problems(c);
    // The estimate itself: logits of batch 4 × 256 × 10000 in fp32.
    auto s = tiny();
    s.batch_size = 4;
    s.model.context_length = 256;
    EXPECT_EQ(ts::largestTensor(s).bytes, 4.0 * 256 * 10000 * 4);
    EXPECT_NE(ts::largestTensor(s).name.find("logits"), std::string::npos);
    // The fused loss never holds the whole logits: 64 × 1,024 × the leaderboard's vocabulary of
    // 151,936 (10^10 logits, 40 GB in fp32) is one chunk of 2^29 at most, and a device of 24 GiB
    // takes it.
    auto leaderboard = tiny();
    leaderboard.batch_size = 64;
    leaderboard.model.context_length = 1024;
    leaderboard.model.vocab_size = 151936;
    EXPECT_NE(ts::deviceMemoryProblem(leaderboard, int64_t{24} << 30, "a GPU"), "");
    leaderboard.fused_loss = true;
    EXPECT_EQ(ts::largestTensor(leaderboard).bytes, 4.0 * (int64_t{1} << 29));
    EXPECT_NE(ts::largestTensor(leaderboard).name.find("chunk"), std::string::npos);
    EXPECT_EQ(ts::deviceMemoryProblem(leaderboard, int64_t{24} << 30, "a GPU"), "");
    // A small point's chunk is all of its logits.
    s.fused_loss = true;
    EXPECT_EQ(ts::largestTensor(s).bytes, 4.0 * 256 * 10000 * 4);
}

TEST(BenchLimits, SweepsAreCountedBeforeTheyAreExpanded) {
    ts::SweepSpec spec;
    spec.base = tiny();
    spec[ts::Dimension::Context].assign(100, "8");
    spec[ts::Dimension::Batch].assign(100, "1");
    EXPECT_EQ(ts::sweepPointCount(spec), 10000u);
    EXPECT_EQ(ts::expandSweep(spec).size(), 10000u);
    spec[ts::Dimension::Warmup].assign(2, "0");
    EXPECT_EQ(ts::sweepPointCount(spec), 20000u);
    try {
        ts::expandSweep(spec);
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("20000 points, more than the limit of 10000"),
                  std::string::npos)
            << e.what();
    }
    // 63 million points must be refused, not allocated; a count past size_t saturates.
    spec[ts::Dimension::Device].assign(3150, "cpu");
    EXPECT_EQ(ts::sweepPointCount(spec), 63000000u);
    EXPECT_THROW(ts::expandSweep(spec), std::invalid_argument);
    ts::SweepSpec huge;
    for (auto* v : {&huge[ts::Dimension::Context], &huge[ts::Dimension::Batch]})
        v->assign(1u << 20, "8");
    huge[ts::Dimension::Warmup].assign(1u << 20, "0");
    huge[ts::Dimension::Size].assign(1u << 20, "tiny");
    EXPECT_EQ(ts::sweepPointCount(huge), SIZE_MAX);
    EXPECT_THROW(ts::expandSweep(huge), std::invalid_argument);
}

TEST(BenchLimits, TensorsBeyondTheDevicesMemoryAreNamed) {
    auto c = tiny();
    c.device = "cuda:1";
    c.batch_size = 100000;
    c.model.context_length = 256;  // logits: 100000 × 256 × 10000 × 4 bytes = 953.7 GiB
    const std::string p = ts::deviceMemoryProblem(c, int64_t{80} << 30, "NVIDIA H100 80GB HBM3");
    EXPECT_NE(p.find("logits (batch 100000 × context 256 × vocab 10000) would take 953.7 GiB, more "
                     "than the 80.0 GiB "
                     "of cuda:1 (NVIDIA H100 80GB HBM3)"),
              std::string::npos)
        << p;
    EXPECT_EQ(ts::deviceMemoryProblem(c, 0, "cpu"), "") << "unknown memory never refuses";
    EXPECT_EQ(ts::deviceMemoryProblem(tiny(), int64_t{80} << 30, "H100"), "");
}

}  // namespace
