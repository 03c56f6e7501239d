// The memory lab on a CUDA device (label gpu; SKIPPED without one): a real trace of a small
// model has the saw-tooth (activations pile up in forward, the peak falls in backward,
// memory goes down after); the parameters', gradients' and AdamW's storage is exactly the
// parameter count times its bytes; forward-only keeps no gradients; the OOM frontier finds
// where naive attention stops fitting; the exported snapshot loads in torch.cuda._memory_viz.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memory/memory.h"
#include "memory/memory_pickle.h"
#include "memory/memory_report.h"
#include "torch_python.h"

namespace {

struct Quiet : ts::MemoryObserver {};

ts::MemorySpec cudaSpec(ts::Mode mode, ts::Precision precision = ts::Precision::FP32) {
    ts::MemorySpec s;
    s.bench.model = *ts::modelPreset("mini");
    s.bench.model.context_length = 128;
    s.bench.batch_size = 4;
    s.bench.warmup = 1;
    s.bench.mode = mode;
    s.bench.precision = precision;
    s.bench.device = "cuda";
    s.record_steps = 2;
    return s;
}

ts::MemoryResult recorded(const ts::MemorySpec& spec) {
    Quiet q;
    ts::CancelToken cancel;
    return ts::runMemory(spec, q, cancel);
}

size_t cat(ts::MemoryCategory c) { return static_cast<size_t>(c); }

// The timeline's last point at or before event `index`.
const ts::TimelinePoint& pointAt(const ts::MemoryAnalysis& a, size_t index) {
    auto it = std::upper_bound(a.timeline.begin(), a.timeline.end(), index,
                               [](size_t i, const ts::TimelinePoint& p) { return i < p.index; });
    if (it == a.timeline.begin()) throw std::runtime_error("no point before that event");
    return *std::prev(it);
}

TEST(MemoryGpu, TrainingStepHasTheSawTooth) {
    const auto r = recorded(cudaSpec(ts::Mode::Train));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_TRUE(r.gpu);
    ASSERT_FALSE(r.trace.events.empty());
    const auto a = ts::analyzeMemory(r.trace);
    EXPECT_EQ(a.peak.phase, ts::Phase::Backward) << "peak at event " << a.peak.index;
    for (int step = 0; step < r.spec.record_steps; ++step) {
        // Forward and backward allocate; the fused optimizer may allocate nothing at all.
        std::optional<ts::PhaseBand> fwd, bwd;
        for (const auto& b : a.bands) {
            if (b.step != step) continue;
            if (b.phase == ts::Phase::Forward && !fwd) fwd = b;
            if (b.phase == ts::Phase::Backward) bwd = b;
        }
        ASSERT_TRUE(fwd && bwd) << "step " << step;
        // Activations pile up in forward...
        const auto& end_fwd = pointAt(a, fwd->last);
        EXPECT_GT(end_fwd.by_category[cat(ts::MemoryCategory::Activations)], 0) << "step " << step;
        EXPECT_GT(end_fwd.allocated, pointAt(a, fwd->first).allocated) << "step " << step;
        // ...are gone once backward is done, and the step ends below its peak.
        const auto& end_bwd = pointAt(a, bwd->last);
        EXPECT_EQ(end_bwd.by_category[cat(ts::MemoryCategory::Activations)], 0) << "step " << step;
        int64_t step_peak = 0, step_end = 0;
        for (const auto& p : a.timeline)
            if (r.trace.events[p.index].step == step) {
                step_peak = std::max(step_peak, p.allocated);
                step_end = p.allocated;
            }
        EXPECT_LT(end_bwd.allocated, step_peak) << "step " << step;
        EXPECT_LT(step_end, step_peak) << "step " << step;
    }
    // Phases, ranges and ops were recorded with the allocations.
    size_t with_op = 0, with_range = 0;
    for (const auto& e : r.trace.events) {
        with_op += e.op >= 0;
        with_range += e.range >= 0;
    }
    EXPECT_GT(with_op, r.trace.events.size() / 2);
    EXPECT_GT(with_range, 0u);
    EXPECT_FALSE(r.trace.driver.empty());
}

TEST(MemoryGpu, ParametersGradientsAndOptimizerStateExactly) {
    const auto spec = cudaSpec(ts::Mode::Train);
    const auto r = recorded(spec);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    const int64_t P = ts::parameterCount(spec.bench.model);
    EXPECT_EQ(r.parameter_count, P);
    EXPECT_EQ(r.parameter_bytes, 4 * P);
    EXPECT_EQ(r.gradient_bytes, 4 * P);
    EXPECT_EQ(r.optimizer_bytes, 8 * P + 4 * ts::parameterTensorCount(spec.bench.model));
    const auto pred = ts::predictMemory(spec.bench);
    EXPECT_EQ(pred.parameters, r.parameter_bytes);
    EXPECT_EQ(pred.gradients, r.gradient_bytes);
    EXPECT_EQ(pred.optimizer_state, r.optimizer_bytes);
    // The trace counts bytes asked for, so the known categories hold those tensors exactly:
    // parameters and AdamW's state all along, every gradient after the last backward.
    const auto a = ts::analyzeMemory(r.trace);
    EXPECT_EQ(a.peak.by_category[cat(ts::MemoryCategory::Parameters)], 4 * P);
    EXPECT_EQ(a.peak.by_category[cat(ts::MemoryCategory::OptimizerState)], r.optimizer_bytes);
    const auto& end = a.timeline.back();
    EXPECT_EQ(end.by_category[cat(ts::MemoryCategory::Parameters)], 4 * P);
    EXPECT_EQ(end.by_category[cat(ts::MemoryCategory::Gradients)], 4 * P);
    EXPECT_EQ(end.by_category[cat(ts::MemoryCategory::OptimizerState)], r.optimizer_bytes);
}

TEST(MemoryGpu, ForwardOnlyKeepsNoGradients) {
    const auto r = recorded(cudaSpec(ts::Mode::Forward));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    const auto a = ts::analyzeMemory(r.trace);
    EXPECT_EQ(a.peak.phase, ts::Phase::Forward);
    EXPECT_EQ(a.peak.by_category[cat(ts::MemoryCategory::Gradients)], 0);
    EXPECT_EQ(a.peak.by_category[cat(ts::MemoryCategory::OptimizerState)], 0);
    EXPECT_EQ(a.peak.by_category[cat(ts::MemoryCategory::Activations)], 0);
    EXPECT_EQ(r.gradient_bytes, 0);
}

TEST(MemoryGpu, CppStacksWhenAskedFor) {
    auto spec = cudaSpec(ts::Mode::Train);
    spec.record_steps = 1;
    spec.record_stacks = true;
    const auto r = recorded(spec);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_FALSE(r.trace.stacks.empty());
    size_t with_stack = 0;
    for (const auto& e : r.trace.events) with_stack += e.stack >= 0;
    // Every alloc and free has its context (RecordContext::ALL), so nearly every event a stack.
    EXPECT_GT(with_stack, r.trace.events.size() / 2);
    size_t named = 0;
    for (const auto& s : r.trace.stacks) {
        EXPECT_FALSE(s.empty());
        for (const auto& f : s) named += !f.name.empty() && f.name != "??";
    }
    EXPECT_GT(named, 0u);
    std::printf("first stack (%zu frames):\n", r.trace.stacks[0].size());
    for (size_t i = 0; i < std::min<size_t>(8, r.trace.stacks[0].size()); ++i)
        std::printf("  %s (%s:%lld)\n", r.trace.stacks[0][i].name.c_str(),
                    r.trace.stacks[0][i].filename.c_str(),
                    static_cast<long long>(r.trace.stacks[0][i].line));
}

// The frontier of naive attention by context (a bisection of a dozen probes), run once for
// the tests that read it.
const ts::MemoryResult& frontierRun() {
    static const ts::MemoryResult r = [] {
        auto spec = cudaSpec(ts::Mode::Train);
        spec.record_steps = 1;
        spec.frontier = ts::FrontierAxis::Context;
        return recorded(spec);
    }();
    return r;
}

TEST(MemoryGpu, FrontierOfNaiveAttentionByContext) {
    const auto& r = frontierRun();
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_TRUE(r.frontier);
    const auto& f = *r.frontier;
    // Naive attention's B·H·T² scores run out long before 131072 tokens on any GPU.
    EXPECT_GT(f.largest_fit, 128);
    EXPECT_EQ(f.smallest_oom, f.largest_fit + 16);
    for (const auto& p : f.probes) {
        EXPECT_EQ(p.fits, p.value <= f.largest_fit) << p.value;
        if (!p.fits) EXPECT_EQ(p.status, ts::Status::OOM) << p.value << ": " << p.error;
    }
    // The picture of the failure: the probe at smallest_oom recorded up to its oom entry, and
    // the segments as they were then, before the step unwound and freed its tensors.
    ASSERT_TRUE(f.oom_trace);
    const ts::RawMemoryTrace& t = *f.oom_trace;
    ASSERT_FALSE(t.events.empty());
    EXPECT_EQ(t.events.back().action, ts::AllocAction::Oom);
    const auto a = ts::analyzeMemory(t);
    const auto failed = ts::failedAllocation(t, a);
    ASSERT_TRUE(failed);
    EXPECT_GT(failed->requested, 0);
    EXPECT_NE(failed->phase, ts::Phase::Other);  // inside the step
    EXPECT_FALSE(failed->op.empty());
    // The whole model was there when it failed, known to the byte.
    EXPECT_EQ(failed->by_category[cat(ts::MemoryCategory::Parameters)], r.parameter_bytes);
    // The segments are those of the failure: their allocated blocks are what the trace says was
    // allocated just before it (after the unwinding they would hold a fraction).
    int64_t held = 0;
    for (const auto& s : t.segments)
        for (const auto& b : s.blocks)
            if (b.allocated) held += b.requested;
    EXPECT_EQ(held, failed->allocated);
    EXPECT_GT(failed->allocated, 4 * r.parameter_bytes);
    std::printf("failed allocation at context %lld: %s\n", static_cast<long long>(f.smallest_oom),
                ts::describeFailedAllocation(*failed).c_str());
}

// Writes `trace` as the pickle, reads it back with our reader, then with torch's
// torch.cuda._memory_viz where a python with torch is found (skips otherwise).
void checkInMemoryViz(const ts::RawMemoryTrace& trace, const std::string& name) {
    const auto path =
        std::filesystem::temp_directory_path() / ("trainscope_memory_gpu_" + name + ".pickle");
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << ts::memorySnapshotPickle(trace);
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const auto snap = ts::pickle::loads(bytes.str());
    // The events, then the "snapshot" entry (See Note [snapshot categories]).
    const auto& entries = snap.at("device_traces").items.at(0).items;
    ASSERT_EQ(entries.size(), trace.events.size() + 1);
    EXPECT_EQ(entries.back().at("action").s, "snapshot");
    size_t categorised = 0;
    for (const auto& e : entries) categorised += e.find("category") != nullptr;
    EXPECT_GT(categorised, trace.events.size() / 2);

    const std::string python = ts::testing::pythonWithTorch(TRAINSCOPE_PYTHONS);
    if (python.empty()) {
        std::filesystem::remove(path);
        GTEST_SKIP() << "no python with torch: the snapshot was checked with our reader only";
    }
    const std::string script =
        "import pickle, torch.cuda._memory_viz as m; d = pickle.load(open('" + path.string() +
        "', 'rb')); t = m.trace(d); h = m.trace_plot(d); s = m.segsum(d); "
        "n = len(d['device_traces'][0]); assert ('%d entries' % n) in t, t[:200]; "
        "assert 'Active Memory Timeline' in h; print('ok', n)";
    int code = 0;
    const std::string out = ts::testing::runPython(python, script, code);
    std::filesystem::remove(path);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("ok " + std::to_string(trace.events.size() + 1)), std::string::npos) << out;
}

TEST(MemoryGpu, SnapshotLoadsInMemoryViz) {
    const auto r = recorded(cudaSpec(ts::Mode::Train));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    checkInMemoryViz(r.trace, "step");
}

TEST(MemoryGpu, OomSnapshotLoadsInMemoryViz) {
    const auto& r = frontierRun();
    ASSERT_TRUE(r.frontier && r.frontier->oom_trace);
    checkInMemoryViz(*r.frontier->oom_trace, "oom");
}

}  // namespace
