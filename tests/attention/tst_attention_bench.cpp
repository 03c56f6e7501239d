// The attention benchmark engine on the CPU: names, presets, validation, FLOP counts, and a
// small sweep where every implementation is checked and timed or marked unsupported.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "attention/attention_lab.h"
#include "attention/attention_report.h"
#include "core/store.h"

namespace {

using namespace ts;

TEST(AttentionBench, NamesRoundTrip) {
    for (AttentionImpl i : allAttentionImpls()) EXPECT_EQ(parseAttentionImpl(toString(i)), i);
    EXPECT_EQ(parseAttentionImpl("sdpa-cudnn"), AttentionImpl::SdpaCudnn);
    EXPECT_FALSE(parseAttentionImpl("fast"));
    EXPECT_EQ(parseAttentionPass("forward-backward"), AttentionPass::ForwardBackward);
}

TEST(AttentionBench, PresetsAreTheCoursesSetups) {
    const auto a = attentionPreset("a");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->batches, std::vector<int64_t>{8});
    EXPECT_EQ(a->heads, std::vector<int64_t>{1});
    EXPECT_EQ(a->head_dims, (std::vector<int64_t>{16, 32, 64, 128}));
    EXPECT_EQ(a->seq_lens, (std::vector<int64_t>{256, 1024, 4096, 8192, 16384}));
    const auto b = attentionPreset("b");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->seq_lens.front(), 128);
    EXPECT_EQ(b->seq_lens.back(), 65536);
    EXPECT_EQ(b->causal, std::vector<bool>{true});
    EXPECT_EQ(b->passes.size(), 3u);
    EXPECT_FALSE(attentionPreset("c"));
}

TEST(AttentionBench, ValidationNamesTheBadValue) {
    AttentionBenchSpec s;
    s.seq_lens = {128, 0};
    s.steps = 0;
    const auto e = validateAttentionSpec(s);
    ASSERT_EQ(e.size(), 2u);
    EXPECT_NE(e[0].find("0"), std::string::npos);
}

TEST(AttentionBench, FlopCount) {
    EXPECT_DOUBLE_EQ(attentionFlops(2, 3, 10, 16, false, AttentionPass::Forward),
                     4.0 * 2 * 3 * 100 * 16);
    EXPECT_DOUBLE_EQ(attentionFlops(2, 3, 10, 16, true, AttentionPass::Forward),
                     2.0 * 2 * 3 * 100 * 16);
    EXPECT_DOUBLE_EQ(attentionFlops(1, 1, 10, 16, true, AttentionPass::Backward),
                     2.5 * 2 * 100 * 16);
    EXPECT_DOUBLE_EQ(attentionFlops(1, 1, 10, 16, false, AttentionPass::ForwardBackward),
                     3.5 * 4 * 100 * 16);
}

struct Recorder : AttentionObserver {
    int started = 0, finished = 0;
    void cellStarted(int, int, const AttentionCell&) override { ++started; }
    void cellFinished(int, int, const AttentionCell&) override { ++finished; }
};

TEST(AttentionBench, CpuSweepChecksTimesAndMarksUnsupported) {
    AttentionBenchSpec s;
    s.impls = {AttentionImpl::Naive,    AttentionImpl::Tiled,     AttentionImpl::Sdpa,
               AttentionImpl::SdpaMath, AttentionImpl::SdpaFlash, AttentionImpl::Flash};
    s.seq_lens = {33, 64};
    s.head_dims = {16};
    s.dtypes = {Precision::FP32};
    s.causal = {false, true};
    s.batches = {2};
    s.heads = {3};
    s.passes = {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward};
    s.warmup = 1;
    s.steps = 2;
    s.device = "cpu";
    Recorder rec;
    CancelToken cancel;
    const auto r = runAttentionBench(s, rec, cancel);
    ASSERT_EQ(r.cells.size(), 2u * 2u * 6u);
    EXPECT_EQ(rec.started, 24);
    EXPECT_EQ(rec.finished, 24);
    for (const auto& c : r.cells) {
        SCOPED_TRACE(std::string(toString(c.impl)) + " seq " + std::to_string(c.seq) + " " +
                     c.error);
        if (c.impl == AttentionImpl::Flash) {  // our kernels need CUDA tensors
            EXPECT_EQ(c.status, Status::Unsupported);
            continue;
        }
        EXPECT_EQ(c.status, Status::Ok);
        EXPECT_GE(c.err_out, 0);
        EXPECT_LE(c.err_out, c.tolerance);
        EXPECT_LE(c.err_grad, c.tolerance);
        EXPECT_GT(c.forward_ms, 0);
        EXPECT_GT(c.backward_ms, 0);
        EXPECT_GT(c.forward_tflops, 0);
    }
    const std::string md = attentionMarkdown(r.cells, s.passes);
    EXPECT_NE(md.find("| tiled | fp32 | yes | 2×3 | 16 | 64 |"), std::string::npos) << md;
    EXPECT_NE(md.find("unsupported"), std::string::npos);
    EXPECT_NE(attentionJsonLine(r.cells.front()).find("\"impl\":\"naive\""), std::string::npos);
    const std::string header = attentionCsvHeader(), row = attentionCsvRow(r.cells.front());
    EXPECT_EQ(std::count(header.begin(), header.end(), ','),
              std::count(row.begin(), row.end(), ','));
}

// See Note [attention cells the CPU cannot hold]: estimated, not allocated and left to the OOM
// killer; the cells that fit still run.
TEST(AttentionBench, CpuCellsThatCannotFitAreOomWithoutBeingTried) {
    AttentionBenchSpec s;
    s.impls = {AttentionImpl::Naive};
    s.seq_lens = {200000};  // naive's scores and probabilities: 298 GiB
    s.head_dims = {16};
    s.dtypes = {Precision::FP32};
    s.causal = {false};
    s.passes = {AttentionPass::Forward};
    s.warmup = 0;
    s.steps = 1;
    s.check = false;
    s.device = "cpu";
    Recorder rec;
    CancelToken cancel;
    auto r = runAttentionBench(s, rec, cancel);
    ASSERT_EQ(r.cells.size(), 1u);
    EXPECT_EQ(r.cells[0].status, Status::OOM);
    EXPECT_NE(r.cells[0].error.find("not tried: needs at least 298."), std::string::npos)
        << r.cells[0].error;
    EXPECT_NE(r.cells[0].error.find("scores and probabilities"), std::string::npos);
    // Inputs alone past the machine (head dim 10^8: 3 TiB for the eight tensors): no cell of
    // the problem allocates them; a small problem of the same sweep still runs.
    s.impls = {AttentionImpl::Naive, AttentionImpl::Tiled};
    s.seq_lens = {1024};
    s.head_dims = {16, 100000000};
    r = runAttentionBench(s, rec, cancel);
    ASSERT_EQ(r.cells.size(), 4u);
    for (const auto& c : r.cells) {
        SCOPED_TRACE(std::string(toString(c.impl)) + " d " + std::to_string(c.head_dim));
        if (c.head_dim == 16) {
            EXPECT_EQ(c.status, Status::Ok) << c.error;
        } else {
            EXPECT_EQ(c.status, Status::OOM);
            EXPECT_NE(c.error.find("not tried: needs at least 3051.8"), std::string::npos)
                << c.error;
        }
    }
}

TEST(AttentionBench, CancelStopsTheSweep) {
    AttentionBenchSpec s;
    s.impls = {AttentionImpl::Naive};
    s.seq_lens = {16, 32, 64};
    s.head_dims = {16};
    s.dtypes = {Precision::FP32};
    s.device = "cpu";
    struct Canceller : AttentionObserver {
        CancelToken* token = nullptr;
        void cellFinished(int, int, const AttentionCell&) override { token->cancel(); }
    } obs;
    CancelToken cancel;
    obs.token = &cancel;
    const auto r = runAttentionBench(s, obs, cancel);
    EXPECT_TRUE(r.cancelled);
    EXPECT_EQ(r.cells.size(), 1u);
}

TEST(AttentionBench, ACellThatCannotBeStoredStopsTheSweep) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("tst_attention_lost_" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(path);
    {
        ResultStore store(path.string());
        const int64_t run = store.createRun(kAttentionLab, "", "{}", "cpu");
        ASSERT_TRUE(store.removeRun(run));  // the foreign key now refuses every cell
        AttentionBenchSpec s;
        s.impls = {AttentionImpl::Naive};
        s.seq_lens = {16, 32};
        s.head_dims = {16};
        s.dtypes = {Precision::FP32};
        s.device = "cpu";
        s.warmup = 0;
        s.steps = 1;
        struct Logging : AttentionObserver {
            std::vector<std::string> errors;
            int finished = 0;
            void cellFinished(int, int, const AttentionCell&) override { ++finished; }
            void log(LogLevel level, const std::string& m) override {
                if (level == LogLevel::Error) errors.push_back(m);
            }
        } obs;
        CancelToken cancel;
        const auto r = runAttentionBench(s, obs, cancel, &store, run);
        EXPECT_EQ(r.cells.size(), 1u);
        EXPECT_EQ(obs.finished, 1);
        ASSERT_EQ(obs.errors.size(), 1u);
        EXPECT_EQ(obs.errors[0], r.store_error);
        EXPECT_NE(r.store_error.find("could not store cell 1 of 2"), std::string::npos)
            << r.store_error;
    }
    std::filesystem::remove(path);
}

TEST(AttentionBench, LimitsAreNamed) {
    AttentionBenchSpec s = *attentionPreset("a");
    s.steps = 2000000;
    EXPECT_NE(validateAttentionSpec(s).front().find("at most 1000000"), std::string::npos);
    s = *attentionPreset("a");
    s.seq_lens = {int64_t{1} << 40};
    EXPECT_NE(validateAttentionSpec(s).front().find("2^40 bytes"), std::string::npos)
        << validateAttentionSpec(s).front();
    s = *attentionPreset("b");
    s.batches.assign(1000, 1);  // 1000 × 2 × 4 × 10 × 4 cells
    EXPECT_NE(validateAttentionSpec(s).front().find("320000 cells, more than the limit of 10000"),
              std::string::npos)
        << validateAttentionSpec(s).front();
}

}  // namespace
