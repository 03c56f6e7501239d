// The profiler on a CUDA device (label gpu; SKIPPED without one): kernels in every phase, each
// launched by an op of its phase; GEMM kernels dominate the forward of `large` in fp32; the
// kernel time of each phase is at most the CUDA-event time of the same phase and steps (and
// at least half of it where the GPU is busy); naive attention's three parts have kernels.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "profiler/profiler.h"

namespace {

struct Quiet : ts::ProfileObserver {};

ts::ProfileSpec cudaSpec(const char* size, int64_t context, int64_t batch) {
    ts::ProfileSpec s;
    s.bench.model = *ts::modelPreset(size);
    s.bench.model.context_length = context;
    s.bench.batch_size = batch;
    s.bench.warmup = 2;
    s.bench.device = "cuda";
    s.profile_steps = 2;
    return s;
}

ts::ProfileResult profiled(const ts::ProfileSpec& spec) {
    Quiet q;
    ts::CancelToken cancel;
    return ts::runProfile(spec, q, cancel);
}

// Kernel time per phase ≤ the phase's CUDA-event time: events bracket the phase's work on the
// same stream, so the kernels between them cannot take longer. The slack covers the events'
// ~0.5 µs resolution and CUPTI's timestamps coming from another clock.
constexpr double kSlackUs = 5.0, kSlackFactor = 1.01;

TEST(ProfilerGpu, KernelsInEveryPhaseWithinTheMeasuredPhaseTime) {
    const auto r = profiled(cudaSpec("mini", 128, 4));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_TRUE(r.gpu);
    ASSERT_FALSE(r.trace.kernels.empty());
    size_t attributed = 0;
    for (const auto& k : r.trace.kernels) attributed += !k.op.empty();
    // Nearly every kernel names its launching op (a memcpy from outside an op may not).
    EXPECT_GE(attributed, r.trace.kernels.size() * 95 / 100)
        << attributed << " of " << r.trace.kernels.size();
    for (const auto& p : ts::phaseTimes(r)) {
        if (p.phase == ts::Phase::Other) continue;
        EXPECT_GT(p.kernels, 0) << ts::toString(p.phase);
        EXPECT_GT(p.profiled_us, 0) << ts::toString(p.phase);
        EXPECT_LE(p.profiled_us, p.measured_us * kSlackFactor + kSlackUs) << ts::toString(p.phase);
    }
    // Backward kernels come from autograd's thread, yet carry the model's ranges.
    std::set<std::string> backward_ranges;
    for (const auto& k : r.trace.kernels)
        if (k.phase == ts::Phase::Backward) backward_ranges.insert(k.range);
    EXPECT_TRUE(backward_ranges.count("layer.0/mlp")) << backward_ranges.size();
    EXPECT_TRUE(backward_ranges.count("lm_head"));
}

// Compiled mode (See Note [a graph's kernels named by its capture]): every replayed kernel is
// in its phase, within the phase's measured time, and named by the capture: its op, and the
// model's ranges in forward and backward as in eager mode, the fused model's attention kernel
// inside the attention range.
TEST(ProfilerGpu, CompiledStepsKernelsAreNamedByTheirCapture) {
    auto spec = cudaSpec("mini", 128, 4);
    spec.bench.exec = ts::ExecMode::Compiled;
    spec.bench.precision = ts::Precision::BF16;
    spec.bench.attention = ts::AttentionImpl::Flash;
    struct Logged : ts::ProfileObserver {
        std::vector<std::string> lines;
        void log(ts::LogLevel, const std::string& m) override { lines.push_back(m); }
    } logged;
    ts::CancelToken cancel;
    const auto r = ts::runProfile(spec, logged, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_FALSE(r.trace.kernels.empty());
    std::string said;
    for (const auto& l : logged.lines) said += l + "\n";
    size_t named = 0;
    std::set<std::string> forward_ranges, backward_ranges;
    std::map<ts::Phase, size_t> per_phase;
    for (const auto& k : r.trace.kernels) {
        ++per_phase[k.phase];
        named += !k.op.empty() && k.op != "cudaGraphLaunch";
        if (k.phase == ts::Phase::Forward) forward_ranges.insert(k.range);
        if (k.phase == ts::Phase::Backward) backward_ranges.insert(k.range);
    }
    // Outside the phases only the step's own reading of the loss (a copy a step, no graph's).
    for (const auto& k : r.trace.kernels)
        if (k.phase == ts::Phase::Other)
            EXPECT_EQ(ts::categorize(k.name), ts::Category::Memory) << k.name << " " << k.op;
    EXPECT_LE(per_phase[ts::Phase::Other], static_cast<size_t>(spec.profile_steps));
    for (auto p : {ts::Phase::Forward, ts::Phase::Backward, ts::Phase::Optimizer})
        EXPECT_GT(per_phase[p], 0u) << ts::toString(p);
    EXPECT_EQ(named, r.trace.kernels.size()) << said;
    EXPECT_EQ(r.graph_kernels_named, r.graph_kernels) << said;
    EXPECT_GT(r.graph_kernels, 0) << said;
    EXPECT_TRUE(forward_ranges.count("layer.0/attention")) << said;
    EXPECT_TRUE(backward_ranges.count("layer.0/mlp")) << said;
    EXPECT_TRUE(forward_ranges.count("lm_head")) << said;
    for (const auto& p : ts::phaseTimes(r)) {
        if (p.phase == ts::Phase::Other) continue;
        EXPECT_GT(p.profiled_us, 0) << ts::toString(p.phase);
        EXPECT_LE(p.profiled_us, p.measured_us * kSlackFactor + kSlackUs) << ts::toString(p.phase);
    }
}

TEST(ProfilerGpu, NaiveAttentionHasKernelsInScoresSoftmaxAndValues) {
    const auto r = profiled(cudaSpec("mini", 128, 4));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    for (const char* part : {"scores", "softmax", "values"}) {
        const auto rows = ts::kernelTable(r.trace.kernels, {ts::Phase::Forward, part});
        EXPECT_FALSE(rows.empty()) << part;
    }
    bool softmax_kernel = false;
    for (const auto& row : ts::kernelTable(r.trace.kernels, {ts::Phase::Forward, "softmax"}))
        softmax_kernel |= row.category == ts::Category::ReductionSoftmax;
    EXPECT_TRUE(softmax_kernel);
}

TEST(ProfilerGpu, AttentionBreakdownHasThreePartsForNaiveAndOneKernelForOurs) {
    auto spec = cudaSpec("mini", 128, 4);
    const auto naive = profiled(spec);
    ASSERT_EQ(naive.status, ts::Status::Ok) << naive.error;
    std::set<std::string> parts;
    for (const auto& a : ts::attentionBreakdown(naive))
        if (a.phase == ts::Phase::Forward) {
            parts.insert(a.part);
            EXPECT_GT(a.time_us, 0) << a.part;
            EXPECT_GT(a.flops, 0) << a.part;
        }
    EXPECT_EQ(parts, (std::set<std::string>{"scores", "softmax", "values"}));

    spec.bench.attention = ts::AttentionImpl::Flash;
    spec.bench.precision = ts::Precision::BF16;
    const auto ours = profiled(spec);
    ASSERT_EQ(ours.status, ts::Status::Ok) << ours.error;
    const auto rows = ts::attentionBreakdown(ours);
    const double layers = static_cast<double>(spec.bench.model.num_layers);
    bool forward = false, backward = false;
    for (const auto& a : rows) {
        EXPECT_EQ(a.part, "fused");
        // Backward kernels run on autograd's thread; they find the forward's ranges.
        backward |= a.phase == ts::Phase::Backward && a.time_us > 0;
        if (a.phase != ts::Phase::Forward) continue;
        forward = true;
        EXPECT_GE(a.kernels, layers);
    }
    // One attention kernel per layer and forward pass: the whole of attention (scores, softmax,
    // values) is our kernel. (Layout or dtype copies of Q, K, V may run beside it.)
    int64_t attention_kernels = 0;
    for (const auto& row : ts::kernelTable(ours.trace.kernels, {ts::Phase::Forward, "fused"}))
        if (row.category == ts::Category::Attention) attention_kernels += row.instances;
    EXPECT_EQ(attention_kernels, spec.bench.model.num_layers * spec.profile_steps);
    EXPECT_TRUE(forward);
    EXPECT_TRUE(backward);
}

TEST(ProfilerGpu, StepActivityBusyIsTheUnionOfTheStepsKernelsWithinItsWallTime) {
    const auto r = profiled(cudaSpec("large", 256, 4));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    const auto steps = ts::stepActivity(r);
    ASSERT_EQ(steps.size(), 2u);
    for (const auto& s : steps) {
        double kernel_us = 0;
        for (const auto& k : r.trace.kernels)
            if (k.start_ns >= s.start_ns && k.start_ns < s.end_ns)
                kernel_us += k.duration_ns / 1000.0;
        EXPECT_GT(s.busy_us, 0);
        EXPECT_LE(s.busy_us, s.wall_us);
        EXPECT_LE(s.busy_us, kernel_us + 1e-6);  // a union of intervals is at most their sum
        EXPECT_NEAR(s.idle_us, s.wall_us - s.busy_us, 1e-6);
        EXPECT_GE(s.launch_bound, 0.0);
        EXPECT_LE(s.launch_bound * s.wall_us, s.idle_us + 1e-6);
        // Under the profiler the CPU launches slower (its overhead, docs/PROFILING.md), yet a
        // large model's kernels still fill most of the step: 75% was seen on an H100.
        EXPECT_GE(s.busy_us, 0.5 * s.wall_us);
    }
}

TEST(ProfilerGpu, GemmDominatesTheForwardOfLargeInFp32) {
    const auto r = profiled(cudaSpec("large", 256, 4));
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    std::map<ts::Category, double> share;
    for (const auto& c : ts::categoryRollup(r))
        if (c.phase == ts::Phase::Forward) share[c.category] = c.share;
    for (const auto& [c, s] : share)
        if (c != ts::Category::Gemm) EXPECT_GT(share[ts::Category::Gemm], s) << ts::toString(c);
    EXPECT_GT(share[ts::Category::Gemm], 0.5);
    // A large model keeps the GPU busy: kernels fill most of each phase's measured time.
    for (const auto& p : ts::phaseTimes(r)) {
        if (p.phase == ts::Phase::Other) continue;
        EXPECT_LE(p.profiled_us, p.measured_us * kSlackFactor + kSlackUs) << ts::toString(p.phase);
        EXPECT_GE(p.profiled_us, 0.5 * p.measured_us) << ts::toString(p.phase);
    }
    // The matmul rows carry FLOPs and an achieved rate.
    double flops = 0;
    for (const auto& row : ts::opTable(r.trace.ops, {ts::Phase::Forward, ""}, true))
        if (row.flops > 0) {
            flops += row.flops;
            EXPECT_GT(row.tflops, 0) << row.name;
        }
    EXPECT_GT(flops, 0);
}

}  // namespace
