// A tiny model profiled on the CPU: the phases and the model's ranges are found, the backward
// ops are attributed to the model's ranges, the matmuls carry the model's FLOPs, and the
// profile is stored and shown through the lab registry.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "core/lab.h"
#include "core/store.h"
#include "profiler/profiler.h"
#include "profiler/profiler_json.h"

namespace {

struct Quiet : ts::ProfileObserver {
    int steps = 0;
    bool collected = false;
    void stepFinished(const ts::StepSample&) override { ++steps; }
    void profileCollected() override { collected = true; }
};

ts::ProfileSpec tinySpec() {
    ts::ProfileSpec s;
    s.bench.model = *ts::modelPreset("tiny");
    s.bench.model.context_length = 16;
    s.bench.model.vocab_size = 500;
    s.bench.batch_size = 2;
    s.bench.warmup = 1;
    s.bench.device = "cpu";
    s.profile_steps = 2;
    return s;
}

// The matmul FLOPs of one forward pass, from the model's dimensions: per layer the q/k/v, output
// and two feed-forward projections and the two attention products; then the LM head.
double forwardMatmulFlops(const ts::ProfileSpec& s) {
    const auto& m = s.bench.model;
    const double tokens = static_cast<double>(s.bench.batch_size * m.context_length);
    const double d = m.d_model, f = m.d_ff, seq = m.context_length, v = m.vocab_size;
    const double per_layer = 2 * tokens * d * (3 * d) + 2 * tokens * d * d +
                             2 * tokens * d * (2 * f) + 2 * tokens * f * d +
                             2 * 2 * tokens * seq * d;
    return m.num_layers * per_layer + 2 * tokens * d * v;
}

class ProfilerCpu : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        Quiet q;
        ts::CancelToken cancel;
        result_ = new ts::ProfileResult(ts::runProfile(tinySpec(), q, cancel));
        ASSERT_EQ(q.steps, 3);
        ASSERT_TRUE(q.collected);
    }
    static void TearDownTestSuite() { delete result_; }
    static ts::ProfileResult* result_;
};
ts::ProfileResult* ProfilerCpu::result_ = nullptr;

TEST_F(ProfilerCpu, FindsThePhasesAndTheModelsRanges) {
    const auto& r = *result_;
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    EXPECT_FALSE(r.gpu);
    EXPECT_TRUE(r.trace.kernels.empty());
    ASSERT_EQ(r.steps.size(), 3u);
    EXPECT_TRUE(r.steps[0].warmup);
    EXPECT_FALSE(r.steps[1].warmup);
    std::multiset<std::string> names;
    for (const auto& range : r.trace.ranges) names.insert(range.name);
    for (const char* phase : {"forward", "backward", "optimizer", "loss", "lm_head", "embedding"})
        EXPECT_EQ(names.count(phase), 2u) << phase;  // once per profiled step
    const auto layers = r.spec.bench.model.num_layers;
    for (int64_t i = 0; i < layers; ++i) EXPECT_EQ(names.count("layer." + std::to_string(i)), 2u);
    for (const char* part : {"attention", "scores", "softmax", "values", "mlp"})
        EXPECT_EQ(names.count(part), 2u * layers) << part;
    EXPECT_EQ(names.count("norm"), 2u * (2 * layers + 1));

    std::set<std::pair<ts::Phase, std::string>> seen;
    for (const auto& op : r.trace.ops) seen.insert({op.phase, op.range});
    for (const char* range :
         {"layer.0/attention/scores", "layer.0/attention/softmax", "layer.0/attention/values",
          "layer.1/mlp", "layer.1/norm", "lm_head", "loss"}) {
        EXPECT_TRUE(seen.count({ts::Phase::Forward, range})) << range;
        // Backward ops inherit the range of their forward op.
        EXPECT_TRUE(seen.count({ts::Phase::Backward, range})) << range;
    }
    bool optimizer_op = false;
    for (const auto& op : r.trace.ops)
        optimizer_op |= op.phase == ts::Phase::Optimizer && op.name == "aten::_fused_adamw_";
    EXPECT_TRUE(optimizer_op);
}

TEST_F(ProfilerCpu, MatmulRowsCarryTheModelsFlops) {
    const auto& r = *result_;
    double forward = 0, backward = 0;
    for (const auto& op : r.trace.ops) {
        if (op.flops <= 0) continue;
        EXPECT_TRUE(op.name == "aten::mm" || op.name == "aten::addmm" || op.name == "aten::bmm")
            << op.name;
        (op.phase == ts::Phase::Forward ? forward : backward) += op.flops;
        EXPECT_NE(op.phase, ts::Phase::Optimizer);
    }
    const double expected = r.spec.profile_steps * forwardMatmulFlops(r.spec);
    EXPECT_DOUBLE_EQ(forward, expected);
    // Backward computes two products per forward product (the input's and the weight's gradient).
    EXPECT_DOUBLE_EQ(backward, 2 * expected);
    // The op table's rows add up to the same, and name their shapes.
    double table = 0;
    for (const auto& row : ts::opTable(r.trace.ops, {ts::Phase::Forward, ""}, false)) {
        table += row.flops;
        if (row.name == "aten::mm") {
            EXPECT_FALSE(row.shapes.empty());
            EXPECT_GT(row.tflops, 0);
        }
    }
    EXPECT_DOUBLE_EQ(table, expected);
    // The qkv projection of layer 0: (batch·seq, d) × (d, 3d).
    const auto& m = r.spec.bench.model;
    const double tokens = static_cast<double>(r.spec.bench.batch_size * m.context_length);
    bool qkv = false;
    for (const auto& op : r.trace.ops)
        qkv |= op.phase == ts::Phase::Forward && op.range == "layer.0/attention" &&
               op.flops == 2 * tokens * m.d_model * 3 * m.d_model;
    EXPECT_TRUE(qkv);
}

TEST_F(ProfilerCpu, OpTimePerPhaseIsWithinTheMeasuredPhaseTime) {
    for (const auto& p : ts::phaseTimes(*result_)) {
        if (p.phase == ts::Phase::Other) continue;
        EXPECT_GT(p.profiled_us, 0) << ts::toString(p.phase);
        // Top-level ops run inside the phase's marks on the same thread.
        EXPECT_LE(p.profiled_us, p.measured_us * 1.05 + 50) << ts::toString(p.phase);
    }
}

TEST_F(ProfilerCpu, CategoriesAndTraceCoverTheStep) {
    bool gemm = false, optimizer = false;
    for (const auto& c : ts::categoryRollup(*result_)) {
        gemm |= c.phase == ts::Phase::Forward && c.category == ts::Category::Gemm && c.time_us > 0;
        optimizer |= c.phase == ts::Phase::Optimizer && c.category == ts::Category::Optimizer &&
                     c.time_us > 0;
    }
    EXPECT_TRUE(gemm);
    EXPECT_TRUE(optimizer);
    const auto trace = nlohmann::json::parse(ts::chromeTraceJson(*result_));
    EXPECT_GT(trace.at("traceEvents").size(), result_->trace.ops.size());
}

TEST(ProfilerStore, StoredProfileIsShownThroughItsLab) {
    // No std::filesystem here: libtorch.so carries its own, and the linker may mix the two.
    char dir_template[] = "/tmp/tst_profiler_XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    const std::string dir = dir_template, db = dir + "/results.db";
    {
        ts::ResultStore store(db);
        auto spec = tinySpec();
        spec.profile_steps = 1;
        const int64_t id =
            store.createRun(ts::kProfileLab, "tiny", ts::profileSpecJson(spec), "cpu");
        Quiet q;
        ts::CancelToken cancel;
        const auto r = ts::runProfile(spec, q, cancel, &store, id);
        ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
        const auto info = store.run(id);
        ASSERT_TRUE(info);
        EXPECT_EQ(info->point_count, 1);
        const auto rows = store.rows(id, ts::kProfileLab);
        const ts::Lab* lab = ts::findLab(ts::kProfileLab);
        ASSERT_NE(lab, nullptr);
        EXPECT_TRUE(lab->row_problem(rows.at(0)).empty());
        const std::string table = lab->report(*info, rows, ts::ReportFormat::Table);
        EXPECT_NE(table.find("Top ops by self CPU time — forward"), std::string::npos) << table;
        EXPECT_NE(table.find("aten::mm"), std::string::npos);
        const auto json = nlohmann::json::parse(lab->report(*info, rows, ts::ReportFormat::Json));
        EXPECT_EQ(json.at("results").size(), 1u);
        EXPECT_FALSE(lab->report(*info, rows, ts::ReportFormat::Csv).empty());
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
    ::rmdir(dir.c_str());
}

TEST(ProfilerSpec, InvalidSpecFailsWithTheReason) {
    auto spec = tinySpec();
    spec.profile_steps = 0;
    EXPECT_FALSE(ts::validateProfile(spec).empty());
    Quiet q;
    ts::CancelToken cancel;
    const auto r = ts::runProfile(spec, q, cancel);
    EXPECT_EQ(r.status, ts::Status::Failed);
    EXPECT_NE(r.error.find("profile steps"), std::string::npos) << r.error;
}

// Compiled mode is profiled (See Note [a graph's kernels named by its capture]): on the CPU the
// point's own rule refuses it (no CUDA device); without a warm-up step there is no capture to
// record, which is said whatever the device.
TEST(ProfilerSpec, CompiledModeNeedsAWarmUpStepForItsCapture) {
    auto spec = tinySpec();
    spec.bench.exec = ts::ExecMode::Compiled;
    spec.bench.device = "cuda";
    spec.bench.warmup = 0;
    bool said = false;
    for (const auto& p : ts::validateProfile(spec))
        said = said || p.find("at least one warm-up step") != std::string::npos;
    EXPECT_TRUE(said);
    spec.bench.warmup = 1;
    for (const auto& p : ts::validateProfile(spec))
        EXPECT_EQ(p.find("warm-up"), std::string::npos) << p;
    spec.bench.device = "cpu";
    bool refused = false;
    for (const auto& p : ts::validateProfile(spec))
        refused = refused || p.find("needs a CUDA device") != std::string::npos;
    EXPECT_TRUE(refused);
}

TEST(ProfilerSpec, CancelledBeforeTheFirstStep) {
    Quiet q;
    ts::CancelToken cancel;
    cancel.cancel();
    const auto r = ts::runProfile(tinySpec(), q, cancel);
    EXPECT_EQ(r.status, ts::Status::Cancelled);
    EXPECT_EQ(q.steps, 0);
}

}  // namespace
