// JSON form of the engine's value types: round trips, defaults, and error messages that
// name the field and the bad value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "attention/attention_json.h"
#include "benchmark/benchmark_json.h"
#include "core/json.h"
#include "core/lab.h"

using nlohmann::json;
using namespace ts;

namespace {

// Runs `f`, expecting std::invalid_argument whose message contains every one of `parts`.
template <typename F>
void expectInvalid(F&& f, std::initializer_list<std::string> parts) {
    try {
        f();
        ADD_FAILURE() << "no exception; expected one mentioning " << *parts.begin();
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        for (const auto& p : parts)
            EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
    }
}

PointConfig unusualBench() {
    PointConfig c;
    c.model = *modelPreset("medium");
    c.model.context_length = 1024;
    c.model.vocab_size = 50257;
    c.model.rope_theta = 500000.5;
    c.batch_size = 3;
    c.warmup = 0;
    c.steps = 17;
    c.mode = Mode::ForwardBackward;
    c.precision = Precision::BF16;
    c.attention = AttentionImpl::Flash;
    c.device = "cuda:1";
    c.seed = std::numeric_limits<uint64_t>::max();  // beyond int64: must stay unsigned
    c.learning_rate = 3.0e-4 / 7.0;                 // needs all 17 digits to round-trip
    return c;
}

StepSample sampleStep(int i, bool warm) {
    StepSample s;
    s.index = i;
    s.warmup = warm;
    s.forward_ms = 1.0 / 3.0 + i;
    s.backward_ms = 2.0 / 7.0 + i;
    s.optimizer_ms = 0.1 * i;
    s.total_ms = s.forward_ms + s.backward_ms + s.optimizer_ms;
    s.loss = 9.21 - 0.01 * i;
    s.memory_allocated = (int64_t{1} << 33) + i;  // > 2^32: must not be narrowed
    s.memory_reserved = int64_t{1} << 34;
    s.memory_peak = (int64_t{1} << 33) + 12345;
    return s;
}

BenchResult sampleResult() {
    BenchResult r;
    r.config = unusualBench();
    r.status = Status::OOM;
    r.error = "CUDA out of memory. Tried to allocate 2.00 GiB \"quoted\" \n newline";
    r.oom_bytes = int64_t{2} << 30;
    r.parameter_count = parameterCount(r.config.model);
    for (int i = 0; i < 5; ++i) r.steps.push_back(sampleStep(i, i < 2));
    summarize(r);
    r.peak_memory = int64_t{70} << 30;
    r.environment = {
        "NVIDIA H100 80GB HBM3", "550.54",       "12.8", "2.11.0", "AMD EPYC 9654", "node-7",
        "2025-01-02T03:04:05Z",  "abcdef123456", "0.1.0"};
    return r;
}

void expectSameStats(const Stats& a, const Stats& b) {
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.mean, b.mean);
    EXPECT_EQ(a.std, b.std);
    EXPECT_EQ(a.median, b.median);
    EXPECT_EQ(a.min, b.min);
    EXPECT_EQ(a.max, b.max);
    EXPECT_EQ(a.cv, b.cv);
}

void expectSameStep(const StepSample& a, const StepSample& b) {
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.warmup, b.warmup);
    EXPECT_EQ(a.forward_ms, b.forward_ms);
    EXPECT_EQ(a.backward_ms, b.backward_ms);
    EXPECT_EQ(a.optimizer_ms, b.optimizer_ms);
    EXPECT_EQ(a.total_ms, b.total_ms);
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(a.memory_allocated, b.memory_allocated);
    EXPECT_EQ(a.memory_reserved, b.memory_reserved);
    EXPECT_EQ(a.memory_peak, b.memory_peak);
}

void expectSameEnv(const Environment& a, const Environment& b) {
    EXPECT_EQ(a.device_name, b.device_name);
    EXPECT_EQ(a.driver_version, b.driver_version);
    EXPECT_EQ(a.cuda_version, b.cuda_version);
    EXPECT_EQ(a.torch_version, b.torch_version);
    EXPECT_EQ(a.cpu, b.cpu);
    EXPECT_EQ(a.hostname, b.hostname);
    EXPECT_EQ(a.date, b.date);
    EXPECT_EQ(a.git_commit, b.git_commit);
    EXPECT_EQ(a.trainscope_version, b.trainscope_version);
}

void expectSameResult(const BenchResult& a, const BenchResult& b) {
    EXPECT_EQ(a.config, b.config);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.error, b.error);
    EXPECT_EQ(a.oom_bytes, b.oom_bytes);
    EXPECT_EQ(a.parameter_count, b.parameter_count);
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) expectSameStep(a.steps[i], b.steps[i]);
    expectSameStats(a.forward, b.forward);
    expectSameStats(a.backward, b.backward);
    expectSameStats(a.optimizer, b.optimizer);
    expectSameStats(a.total, b.total);
    EXPECT_EQ(a.peak_memory, b.peak_memory);
    expectSameEnv(a.environment, b.environment);
}

// Through text, as the store and the CLI do, not just through the json value.
json viaText(const json& j) { return json::parse(j.dump()); }

}  // namespace

TEST(JsonRoundTrip, ModelConfig) {
    for (const auto& name : modelPresetNames()) {
        ModelConfig m = *modelPreset(name);
        m.context_length = 333;
        m.rope_theta = 1e6 + 0.25;
        EXPECT_EQ(modelFromJson(viaText(toJson(m))), m) << name;
    }
    ModelConfig custom;
    custom.d_model = 96;
    custom.num_heads = 6;
    EXPECT_EQ(modelFromJson(viaText(toJson(custom))), custom);
}

TEST(JsonRoundTrip, BenchConfigDefaultAndUnusual) {
    EXPECT_EQ(pointFromJson(viaText(toJson(PointConfig{}))), PointConfig{});
    const PointConfig c = unusualBench();
    EXPECT_EQ(pointFromJson(viaText(toJson(c))), c);
}

TEST(JsonRoundTrip, EveryEnumValue) {
    for (Mode m : {Mode::Forward, Mode::ForwardBackward, Mode::Train})
        for (Precision p : {Precision::FP32, Precision::BF16, Precision::FP16})
            for (AttentionImpl a : {AttentionImpl::Naive, AttentionImpl::Sdpa, AttentionImpl::Tiled,
                                    AttentionImpl::Flash}) {
                PointConfig c;
                c.mode = m;
                c.precision = p;
                c.attention = a;
                const json j = toJson(c);
                EXPECT_EQ(j["mode"], std::string(toString(m)));
                EXPECT_EQ(j["precision"], std::string(toString(p)));
                EXPECT_EQ(j["attention"], std::string(toString(a)));
                EXPECT_EQ(pointFromJson(viaText(j)), c);
            }
    for (Status s : {Status::Ok, Status::OOM, Status::Failed, Status::Cancelled}) {
        BenchResult r;
        r.status = s;
        const json j = toJson(r);
        EXPECT_EQ(j["status"], std::string(toString(s)));
        EXPECT_EQ(resultFromJson(viaText(j)).status, s);
    }
}

TEST(JsonRoundTrip, StepStatsEnvironment) {
    const StepSample s = sampleStep(3, true);
    expectSameStep(stepFromJson(viaText(toJson(s))), s);

    Stats st = computeStats({1.0 / 3, 2.5, 7.25, 1e-9});
    expectSameStats(statsFromJson(viaText(toJson(st))), st);

    const Environment e = sampleResult().environment;
    expectSameEnv(environmentFromJson(viaText(toJson(e))), e);
}

TEST(JsonRoundTrip, BenchResult) {
    const BenchResult r = sampleResult();
    expectSameResult(resultFromJson(viaText(toJson(r))), r);
    expectSameResult(resultFromJson(viaText(toJson(BenchResult{}))), BenchResult{});
}

TEST(JsonRoundTrip, NonFiniteNumbersSurvive) {
    // A diverged fp16 run reports a NaN or infinite loss; it must not turn into an error.
    StepSample s;
    s.loss = std::numeric_limits<double>::quiet_NaN();
    s.forward_ms = std::numeric_limits<double>::infinity();
    s.backward_ms = -std::numeric_limits<double>::infinity();
    const StepSample back = stepFromJson(json::parse(toJson(s).dump()));
    EXPECT_TRUE(std::isnan(back.loss));
    EXPECT_EQ(back.forward_ms, std::numeric_limits<double>::infinity());
    EXPECT_EQ(back.backward_ms, -std::numeric_limits<double>::infinity());
    // null (what other writers produce for NaN) reads as NaN.
    EXPECT_TRUE(std::isnan(stepFromJson(json::parse(R"({"loss": null})")).loss));
}

TEST(JsonParse, MissingFieldsTakeDefaults) {
    EXPECT_EQ(pointFromJson(json::object()), PointConfig{});
    EXPECT_EQ(modelFromJson(json::object()), ModelConfig{});
    PointConfig expected;
    expected.batch_size = 8;
    expected.precision = Precision::FP16;
    EXPECT_EQ(pointFromJson(json::parse(R"({"batch_size": 8, "precision": "fp16"})")), expected);

    const StepSample s = stepFromJson(json::parse(R"({"index": 4, "total_ms": 1.5})"));
    EXPECT_EQ(s.index, 4);
    EXPECT_EQ(s.total_ms, 1.5);
    EXPECT_FALSE(s.warmup);
    EXPECT_EQ(s.forward_ms, 0);
    const BenchResult r = resultFromJson(json::parse(R"({"status": "failed", "error": "boom"})"));
    EXPECT_EQ(r.status, Status::Failed);
    EXPECT_EQ(r.error, "boom");
    EXPECT_EQ(r.config, PointConfig{});
    EXPECT_TRUE(r.steps.empty());
    EXPECT_EQ(environmentFromJson(json::object()).hostname, "");
    EXPECT_EQ(statsFromJson(json::object()).count, 0);
}

TEST(JsonParse, SizePresetWithOverrides) {
    const PointConfig c = pointFromJson(
        json::parse(R"({"size": "small", "context_length": 512, "vocab_size": 32000})"));
    ModelConfig expected = *modelPreset("small");
    expected.context_length = 512;
    expected.vocab_size = 32000;
    EXPECT_EQ(c.model, expected);
    EXPECT_EQ(c.model.name, "small");

    // Changing the shape of a preset makes it something else: "custom".
    const PointConfig d = pointFromJson(json::parse(R"({"size": "tiny", "num_layers": 3})"));
    EXPECT_EQ(d.model.name, "custom");
    EXPECT_EQ(d.model.num_layers, 3);
    EXPECT_EQ(d.model.d_model, modelPreset("tiny")->d_model);

    // The same inside a model object.
    const PointConfig e =
        pointFromJson(json::parse(R"({"model": {"size": "mini", "context_length": 64}})"));
    EXPECT_EQ(e.model.name, "mini");
    EXPECT_EQ(e.model.d_model, modelPreset("mini")->d_model);
    EXPECT_EQ(e.model.context_length, 64);

    // Top-level dimensions without a size adjust the default model.
    const PointConfig f = pointFromJson(json::parse(R"({"context_length": 128})"));
    EXPECT_EQ(f.model.context_length, 128);
    EXPECT_EQ(f.model.d_model, ModelConfig{}.d_model);
}

TEST(JsonParse, IntegralFloatsAcceptedFractionsNot) {
    EXPECT_EQ(pointFromJson(json::parse(R"({"batch_size": 4.0})")).batch_size, 4);
    EXPECT_EQ(modelFromJson(json::parse(R"({"vocab_size": 1e4})")).vocab_size, 10000);
    expectInvalid([] { pointFromJson(json::parse(R"({"batch_size": 4.5})")); },
                  {"batch_size", "4.5"});
}

TEST(JsonErrors, EnumMessagesNameFieldValueAndChoices) {
    expectInvalid([] { pointFromJson(json::parse(R"({"precision": "fp8"})")); },
                  {"precision: 'fp8' is not one of fp32, bf16, fp16"});
    expectInvalid([] { pointFromJson(json::parse(R"({"mode": "backward"})")); },
                  {"mode", "'backward'", "forward-backward", "train"});
    expectInvalid([] { pointFromJson(json::parse(R"({"attention": "xformers"})")); },
                  {"attention", "'xformers'", "naive", "sdpa", "tiled", "flash"});
    expectInvalid([] { resultFromJson(json::parse(R"({"status": "crashed"})")); },
                  {"status", "'crashed'", "ok", "OOM", "failed", "cancelled"});
    expectInvalid([] { pointFromJson(json::parse(R"({"size": "huge"})")); },
                  {"size", "'huge'", "tiny", "small", "2.7B"});
}

TEST(JsonErrors, WrongTypesNameTheField) {
    expectInvalid([] { pointFromJson(json::parse(R"({"batch_size": "4"})")); },
                  {"batch_size", "\"4\""});
    expectInvalid([] { pointFromJson(json::parse(R"({"warmup": 3000000000})")); },
                  {"warmup", "3000000000"});
    expectInvalid([] { pointFromJson(json::parse(R"({"seed": -1})")); }, {"seed", "-1"});
    expectInvalid([] { pointFromJson(json::parse(R"({"device": 0})")); }, {"device", "0"});
    expectInvalid([] { pointFromJson(json::parse(R"({"learning_rate": "fast"})")); },
                  {"learning_rate", "fast"});
    expectInvalid([] { pointFromJson(json::parse(R"({"precision": 16})")); }, {"precision", "16"});
    expectInvalid([] { pointFromJson(json::parse(R"({"model": {"d_model": true}})")); },
                  {"model.d_model", "true"});
    expectInvalid([] { pointFromJson(json::parse(R"({"model": [1, 2]})")); }, {"model", "[1,2]"});
    expectInvalid([] { pointFromJson(json::parse("[]")); }, {"expected an object"});
    expectInvalid([] { stepFromJson(json::parse(R"({"warmup": 1})")); }, {"warmup", "1"});
    expectInvalid([] { statsFromJson(json::parse(R"({"mean": "x"})")); }, {"mean", "\"x\""});
    expectInvalid([] { environmentFromJson(json::parse(R"({"hostname": 5})")); },
                  {"hostname", "5"});
    expectInvalid([] { resultFromJson(json::parse(R"({"steps": [{}, {"loss": "bad"}]})")); },
                  {"steps[1].loss", "bad"});
    expectInvalid([] { resultFromJson(json::parse(R"({"config": {"steps": "ten"}})")); },
                  {"config.steps", "ten"});
    expectInvalid([] { resultFromJson(json::parse(R"({"total": {"count": 1.5}})")); },
                  {"total.count", "1.5"});
}

TEST(JsonErrors, ConfigTyposAndAmbiguityRejected) {
    expectInvalid([] { pointFromJson(json::parse(R"({"batchsize": 4})")); },
                  {"batchsize", "unknown"});
    expectInvalid([] { pointFromJson(json::parse(R"({"model": {"dmodel": 4}})")); },
                  {"model.dmodel", "unknown"});
    expectInvalid([] { pointFromJson(json::parse(R"({"size": "tiny", "model": {}})")); },
                  {"size", "model"});
    expectInvalid([] { pointFromJson(json::parse(R"({"model": {}, "d_model": 64})")); },
                  {"d_model", "model"});
}

TEST(JsonParse, StoredResultsToleratesNewerFields) {
    // A result written by a newer build (extra keys) still reads.
    json j = toJson(sampleResult());
    j["future_field"] = 1;
    j["config"]["future_knob"] = "x";
    j["steps"][0]["energy_j"] = 3.5;
    expectSameResult(resultFromJson(j), sampleResult());
}

TEST(JsonAttention, CellRoundTripAndErrors) {
    AttentionCell c;
    c.impl = AttentionImpl::SdpaCudnn;
    c.dtype = Precision::FP16;
    c.causal = true;
    c.batch = 4;
    c.seq = 8192;
    c.head_dim = 64;
    c.status = Status::Unsupported;
    c.error = "Invalid backend";
    c.forward_ms = 0.5;
    c.err_out = std::numeric_limits<double>::quiet_NaN();
    const AttentionCell back = attentionCellFromJson(json::parse(toJson(c).dump()));
    EXPECT_EQ(back.impl, c.impl);
    EXPECT_EQ(back.dtype, c.dtype);
    EXPECT_EQ(back.causal, c.causal);
    EXPECT_EQ(back.batch, 4);
    EXPECT_EQ(back.seq, 8192);
    EXPECT_EQ(back.status, Status::Unsupported);
    EXPECT_EQ(back.error, "Invalid backend");
    EXPECT_DOUBLE_EQ(back.forward_ms, 0.5);
    EXPECT_TRUE(std::isnan(back.err_out));
    expectInvalid([] { attentionCellFromJson(json::parse(R"({"impl": "fastest"})")); },
                  {"impl", "fastest"});
    expectInvalid([] { attentionCellFromJson(json::parse(R"({"status": "great"})")); },
                  {"status", "great"});
}

TEST(JsonSweep, ParsesEveryList) {
    const SweepSpec s = sweepFromJson(json::parse(R"({
        "base": {"size": "tiny", "batch_size": 2, "steps": 3, "device": "cpu"},
        "sizes": ["tiny", "mini", "custom"],
        "context_lengths": [64, 128],
        "batch_sizes": [1, 4],
        "precisions": ["fp32", "bf16"],
        "attentions": ["naive", "sdpa", "tiled"],
        "modes": ["forward", "train"],
        "warmups": [0, 2],
        "devices": ["cpu", "cuda:0"]
    })"));
    EXPECT_EQ(s.base.model.name, "tiny");
    EXPECT_EQ(s.base.batch_size, 2);
    EXPECT_EQ(s.base.steps, 3);
    EXPECT_EQ(s[ts::Dimension::Size], (std::vector<std::string>{"tiny", "mini", "custom"}));
    EXPECT_EQ(s[ts::Dimension::Context], (std::vector<std::string>{"64", "128"}));
    EXPECT_EQ(s[ts::Dimension::Batch], (std::vector<std::string>{"1", "4"}));
    EXPECT_EQ(s[ts::Dimension::Precision], (std::vector<std::string>{"fp32", "bf16"}));
    EXPECT_EQ(s[ts::Dimension::Attention], (std::vector<std::string>{"naive", "sdpa", "tiled"}));
    EXPECT_EQ(s[ts::Dimension::Mode], (std::vector<std::string>{"forward", "train"}));
    EXPECT_EQ(s[ts::Dimension::Warmup], (std::vector<std::string>{"0", "2"}));
    EXPECT_EQ(s[ts::Dimension::Device], (std::vector<std::string>{"cpu", "cuda:0"}));
    EXPECT_EQ(expandSweep(s).size(), 3u * 2 * 2 * 2 * 3 * 2 * 2 * 2);
}

TEST(JsonSweep, EmptyAndBaseOnly) {
    const SweepSpec s = sweepFromJson(json::object());
    EXPECT_EQ(s.base, PointConfig{});
    EXPECT_TRUE(s[ts::Dimension::Size].empty() && s[ts::Dimension::Precision].empty() &&
                s[ts::Dimension::Device].empty());
    EXPECT_EQ(expandSweep(s).size(), 1u);
}

TEST(JsonSweep, UnknownKeysAndBadElementsNamed) {
    expectInvalid([] { sweepFromJson(json::parse(R"({"precision": ["bf16"]})")); },
                  {"precision", "unknown"});
    expectInvalid([] { sweepFromJson(json::parse(R"({"base": {"presicion": "bf16"}})")); },
                  {"base.presicion", "unknown"});
    expectInvalid([] { sweepFromJson(json::parse(R"({"precisions": ["fp32", "fp8"]})")); },
                  {"precisions[1]: 'fp8' is not one of fp32, bf16, fp16"});
    expectInvalid([] { sweepFromJson(json::parse(R"({"sizes": ["small", "huge"]})")); },
                  {"sizes[1]", "'huge'", "custom"});
    expectInvalid([] { sweepFromJson(json::parse(R"({"context_lengths": 128})")); },
                  {"context_lengths", "list"});
    expectInvalid([] { sweepFromJson(json::parse(R"({"warmups": [1, "two"]})")); },
                  {"warmups[1]", "two"});
    expectInvalid([] { sweepFromJson(json::parse(R"({"base": {"mode": "fwd"}})")); },
                  {"base.mode", "'fwd'"});
    expectInvalid([] { sweepFromJson(json::parse(R"("sweep")")); }, {"expected an object"});
}

namespace {

std::string nested(int levels, const char* open, const char* close) {
    std::string s;
    for (int i = 0; i < levels; ++i) s += open;
    for (int i = 0; i < levels; ++i) s += close;
    return s;
}

}  // namespace

TEST(JsonLimits, DeepNestingIsRefusedNotACrash) {
    const std::string deep = "{\"sizes\":" + nested(200000, "[", "]") + "}";
    expectInvalid([&] { parseJson(deep); }, {"nested more than 64 levels"});
    expectInvalid([&] { parseJson(nested(100000, "{\"a\":", "}")); }, {"64"});
    // Unbalanced: refused by the depth scan before the parser sees it.
    expectInvalid([&] { parseJson(std::string(300000, '[')); }, {"nested"});
    EXPECT_NO_THROW(parseJson(nested(kMaxJsonDepth, "[", "]")));
    // Brackets inside strings (escaped quotes included) do not count.
    const std::string text =
        "{\"label\":\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
    EXPECT_EQ(parseJson(text)["label"].get<std::string>().size(), 2001u);
    EXPECT_THROW(parseJson("{\"a\":"), json::parse_error);
}

TEST(JsonLimits, ShownValuesStayShortForDeepAndHugeValues) {
    // Built in memory (no text to scan), as a lab's code could: shown() must not recurse down it.
    json deep = json::array();
    for (int i = 0; i < 100000; ++i) deep = json::array({std::move(deep)});
    expectInvalid([&] { sweepFromJson(json{{"sizes", {deep}}}); }, {"sizes[0]", "[[[["});
    json big = json::array();
    for (int i = 0; i < 100000; ++i) big.push_back(i);
    expectInvalid(
        [&] {
            sweepFromJson(json{{"sizes", json::array({big})}});
        },
        {"sizes[0]", "[0,1,2", "..."});
    expectInvalid([&] { pointFromJson(json{{"steps", big}}); }, {"steps", "[0,1,2,3"});
    // A string of invalid UTF-8 is shown, not thrown on.
    expectInvalid(
        [&] {
            pointFromJson(json{{"steps", std::string("\xff\xfe bad")}});
        },
        {"steps", "bad"});
    // Let the deep value go without recursing, in case the library's destructor does.
    while (deep.is_array() && !deep.empty()) {
        json inner = std::move(deep[0]);
        deep = std::move(inner);
    }
}

// Reports and footers: the CUDA a machine without a GPU names is LibTorch's build, said so.
TEST(EnvironmentText, CudaWithoutAGpuIsTheBuildsOnly) {
    ts::Environment e;
    e.cuda_version = "13.0";
    EXPECT_EQ(ts::cudaLine(e), "13.0 (LibTorch's build; no GPU)");
    EXPECT_NE(
        ts::formatEnvironment(e, ts::TableFormat::Text).find("13.0 (LibTorch's build; no GPU)"),
        std::string::npos);
    e.driver_version = "580.159.04 (CUDA 13.0)";
    EXPECT_EQ(ts::cudaLine(e), "13.0");
    e.cuda_version.clear();
    EXPECT_EQ(ts::cudaLine(e), "-");
}
