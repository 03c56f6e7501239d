// Presets, validation messages, parameter counts and sweep expansion (no LibTorch needed).
#include <gtest/gtest.h>

#include "benchmark/benchmark.h"

namespace {

bool anyContains(const std::vector<std::string>& v, const std::string& needle) {
    for (const auto& s : v)
        if (s.find(needle) != std::string::npos) return true;
    return false;
}

TEST(Config, CoursePresetsHaveTheCourseDimensions) {
    struct Want { const char* name; int64_t d, f, l, h; };
    const Want want[] = {{"small", 768, 3072, 12, 12}, {"medium", 1024, 4096, 24, 16},
                         {"large", 1280, 5120, 36, 20}, {"xl", 1600, 6400, 48, 25},
                         {"2.7B", 2560, 10240, 32, 32}};
    for (const auto& w : want) {
        auto m = ts::modelPreset(w.name);
        ASSERT_TRUE(m) << w.name;
        EXPECT_EQ(m->d_model, w.d);
        EXPECT_EQ(m->d_ff, w.f);
        EXPECT_EQ(m->num_layers, w.l);
        EXPECT_EQ(m->num_heads, w.h);
        EXPECT_EQ(m->vocab_size, 10000);
        EXPECT_TRUE(ts::validateModel(*m).empty()) << w.name;
    }
    EXPECT_FALSE(ts::modelPreset("huge"));
}

TEST(Config, ParameterCountFormula) {
    // small: 2·10000·768 + 12·(4·768² + 3·768·3072 + 2·768) + 768
    auto m = *ts::modelPreset("small");
    EXPECT_EQ(ts::parameterCount(m), 2 * 10000 * 768 + 12 * (4 * 768 * 768 + 3 * 768 * 3072 + 2 * 768) + 768);
    // "2.7B" is the course's name; with a three-matrix SwiGLU of d_ff 10240 it holds 3.41e9.
    EXPECT_EQ(ts::parameterCount(*ts::modelPreset("2.7B")),
              2 * 10000 * 2560 + 32 * (4 * 2560LL * 2560 + 3 * 2560LL * 10240 + 2 * 2560) + 2560);
}

TEST(Config, InvalidDimensionsAreRefusedWithTheReason) {
    ts::ModelConfig m = *ts::modelPreset("small");
    m.num_heads = 7;
    EXPECT_TRUE(anyContains(ts::validateModel(m), "d_model 768 is not divisible by num_heads 7"));
    m = *ts::modelPreset("small");
    m.d_model = 36;
    m.num_heads = 4;  // head dim 9
    EXPECT_TRUE(anyContains(ts::validateModel(m), "head dimension d_model/num_heads = 9 is odd"));
    m = *ts::modelPreset("small");
    m.num_layers = 0;
    EXPECT_TRUE(anyContains(ts::validateModel(m), "num_layers must be positive (got 0)"));
    m = *ts::modelPreset("small");
    m.d_ff = -5;
    EXPECT_TRUE(anyContains(ts::validateModel(m), "d_ff must be positive (got -5)"));

    ts::BenchConfig c;
    c.batch_size = 0;
    c.steps = 0;
    c.device = "gpu";
    auto e = ts::validateBench(c);
    EXPECT_TRUE(anyContains(e, "batch_size must be positive (got 0)"));
    EXPECT_TRUE(anyContains(e, "steps must be positive (got 0)"));
    EXPECT_TRUE(anyContains(e, "device 'gpu' is not one of cpu, cuda, cuda:N"));
    c = ts::BenchConfig{};
    c.device = "cuda:1";
    EXPECT_TRUE(ts::validateBench(c).empty());
}

TEST(Config, EnumNamesRoundTrip) {
    for (auto m : {ts::Mode::Forward, ts::Mode::ForwardBackward, ts::Mode::Train})
        EXPECT_EQ(ts::parseMode(ts::toString(m)), m);
    for (auto p : {ts::Precision::FP32, ts::Precision::BF16, ts::Precision::FP16})
        EXPECT_EQ(ts::parsePrecision(ts::toString(p)), p);
    for (auto a : {ts::AttentionImpl::Naive, ts::AttentionImpl::Sdpa, ts::AttentionImpl::Tiled, ts::AttentionImpl::Flash})
        EXPECT_EQ(ts::parseAttentionImpl(ts::toString(a)), a);
    EXPECT_FALSE(ts::parsePrecision("fp8"));
}

TEST(Config, SweepExpandsEveryCombinationInOrder) {
    ts::SweepSpec s;
    s.base.model.context_length = 128;
    s.sizes = {"small", "medium"};
    s.context_lengths = {128, 256};
    s.precisions = {ts::Precision::FP32, ts::Precision::BF16};
    const auto points = ts::expandSweep(s);
    ASSERT_EQ(points.size(), 8u);
    EXPECT_EQ(points[0].model.name, "small");
    EXPECT_EQ(points[0].model.context_length, 128);
    EXPECT_EQ(points[1].precision, ts::Precision::BF16);
    EXPECT_EQ(points[2].model.context_length, 256);
    EXPECT_EQ(points[4].model.name, "medium");
    EXPECT_EQ(points[4].model.d_model, 1024);
    s.sizes = {"small"};
    s.context_lengths = {};
    s.precisions = {};
    s.batch_sizes = {1, 8};
    const auto batches = ts::expandSweep(s);
    ASSERT_EQ(batches.size(), 2u);
    EXPECT_EQ(batches[0].batch_size, 1);
    EXPECT_EQ(batches[1].batch_size, 8);
    s.sizes = {"enormous"};
    EXPECT_THROW(ts::expandSweep(s), std::invalid_argument);
}

}  // namespace
