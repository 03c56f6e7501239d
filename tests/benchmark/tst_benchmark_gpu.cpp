// The benchmark on a CUDA device (label gpu; SKIPPED without one).
#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "benchmark/benchmark.h"
#include "nn/attention.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "runtime/step_ranges.h"

namespace {

struct Quiet : ts::BenchObserver {};

ts::PointConfig tinyCuda() {
    ts::PointConfig c;
    c.model = *ts::modelPreset("mini");
    c.model.context_length = 128;
    c.batch_size = 4;
    c.warmup = 2;
    c.steps = 5;
    c.device = "cuda";
    return c;
}

TEST(BenchmarkGpu, EveryPrecisionModeAndAttentionRuns) {
    Quiet q;
    ts::CancelToken cancel;
    for (auto p : {ts::Precision::FP32, ts::Precision::BF16, ts::Precision::FP16})
        for (auto m : {ts::Mode::Forward, ts::Mode::ForwardBackward, ts::Mode::Train})
            for (auto a : {ts::AttentionImpl::Naive, ts::AttentionImpl::Sdpa}) {
                auto c = tinyCuda();
                c.precision = p;
                c.mode = m;
                c.attention = a;
                auto r = ts::runBenchmark(c, q, cancel);
                ASSERT_EQ(r.status, ts::Status::Ok)
                    << ts::toString(p) << " " << ts::toString(m) << ": " << r.error;
                for (const auto& s : r.steps) {
                    EXPECT_GT(s.forward_ms, 0);
                    EXPECT_EQ(s.backward_ms > 0, m != ts::Mode::Forward);
                    EXPECT_EQ(s.optimizer_ms > 0, m == ts::Mode::Train);
                    EXPECT_GT(s.memory_allocated, 0);
                    EXPECT_GE(s.memory_reserved, s.memory_allocated);
                    EXPECT_GE(s.memory_peak, s.memory_allocated);
                    EXPECT_TRUE(std::isfinite(s.loss));
                }
                EXPECT_GT(r.peak_memory, 0);
                EXPECT_NE(r.environment.device_name.find("NVIDIA"), std::string::npos)
                    << r.environment.device_name;
                EXPECT_FALSE(r.environment.driver_version.empty());
            }
}

// See Note [capture ranges]: with --cuda-profiler-range on a GPU, cudaProfilerStart is called as
// the first measured step begins (not before: the warm-up stays out of nsys's capture) and
// stopped when the steps end; a point runs with it as without.
TEST(BenchmarkGpu, CudaProfilerRangeStartsAtTheMeasuredSteps) {
    Quiet q;
    ts::CancelToken cancel;
    auto c = tinyCuda();
    c.cuda_profiler_range = true;
    const auto r = ts::runBenchmark(c, q, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    EXPECT_EQ(r.steps.size(), static_cast<size_t>(c.warmup + c.steps));

    ts::StepRanges ranges(c10::Device("cuda"), true, &q);
    {
        const auto s = ranges.step(0, true);
        EXPECT_FALSE(ranges.profilerStarted());
    }
    {
        const auto s = ranges.step(1, false);
        EXPECT_TRUE(ranges.profilerStarted());
    }
    ranges.finish();
    EXPECT_FALSE(ranges.profilerStarted());
    ts::StepRanges off(c10::Device("cuda"), false, &q);
    {
        const auto s = off.step(0, false);
        EXPECT_FALSE(off.profilerStarted());
    }
}

// The LM with our attention kernels (head dims 64 and 128: on an H100 the wgmma kernels) trains
// like the same LM with LibTorch's SDPA: same seed, so the same weights and batch; the losses
// agree (exactly enough at the first step, within bf16 drift later) and both fall.
TEST(BenchmarkGpu, FlashAttentionTrainsLikeSdpa) {
    Quiet q;
    ts::CancelToken cancel;
    // Head dims 64 and 128 (on an H100 the wgmma kernels), and 80 (2.7B's; on an H100 inside
    // the wgmma kernels' 128 tile, elsewhere padded to 96).
    for (auto [d_model, heads] : {std::pair<int64_t, int64_t>{256, 4}, {256, 2}, {320, 4}}) {
        auto c = tinyCuda();
        c.model.name = "custom";
        c.model.d_model = d_model;
        c.model.d_ff = 1024;
        c.model.num_layers = 2;
        c.model.num_heads = heads;
        c.model.context_length = 200;  // not a multiple of the kernels' tiles
        c.precision = ts::Precision::BF16;
        c.mode = ts::Mode::Train;
        c.learning_rate = 3e-3;
        c.warmup = 0;
        c.steps = 30;
        c.seed = 5;
        c.attention = ts::AttentionImpl::Flash;
        const auto flash = ts::runBenchmark(c, q, cancel);
        c.attention = ts::AttentionImpl::Sdpa;
        const auto sdpa = ts::runBenchmark(c, q, cancel);
        ASSERT_EQ(flash.status, ts::Status::Ok) << flash.error;
        ASSERT_EQ(sdpa.status, ts::Status::Ok) << sdpa.error;
        ASSERT_EQ(flash.steps.size(), sdpa.steps.size());
        // Step 0 is the same weights on the same batch; later steps may drift apart a little.
        EXPECT_NEAR(flash.steps[0].loss, sdpa.steps[0].loss, 5e-3 * sdpa.steps[0].loss)
            << "head dim " << d_model / heads;
        for (size_t i = 0; i < flash.steps.size(); ++i)
            EXPECT_NEAR(flash.steps[i].loss, sdpa.steps[i].loss,
                        std::max(0.05, 0.05 * sdpa.steps[i].loss))
                << "head dim " << d_model / heads << ", step " << i;
        EXPECT_LT(flash.steps.back().loss, flash.steps.front().loss - 0.5)
            << "head dim " << d_model / heads;
    }
}

// 2.7B's heads are 80-dimensional, a width the kernels are not built for: in fp32 (as here)
// flashAttention runs them zero-padded to 96 with the scale of 80. Output and gradients equal
// naive attention's.
TEST(BenchmarkGpu, FlashAttentionAtHeadDim80MatchesNaive) {
    const auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
    at::manual_seed(3);
    for (bool causal : {true, false}) {
        auto run = [&](bool flash) {
            at::manual_seed(3);
            at::Tensor q = at::randn({2, 3, 100, 80}, opts).requires_grad_();
            at::Tensor k = at::randn({2, 3, 100, 80}, opts).requires_grad_();
            at::Tensor v = at::randn({2, 3, 100, 80}, opts).requires_grad_();
            at::Tensor o =
                flash ? ts::flashAttention(q, k, v, causal) : ts::naiveAttention(q, k, v, causal);
            o.backward(at::ones_like(o) * 0.1 + o.detach() * 0.01);
            return std::vector<at::Tensor>{o.detach(), q.grad(), k.grad(), v.grad()};
        };
        const auto ours = run(true), naive = run(false);
        EXPECT_EQ(ours[0].sizes(), naive[0].sizes());
        const char* names[] = {"out", "dq", "dk", "dv"};
        for (size_t i = 0; i < 4; ++i) {
            const double err = (ours[i] - naive[i]).abs().max().item<double>();
            const double ref = naive[i].abs().max().item<double>();
            EXPECT_LE(err, 2e-3 * std::max(1.0, ref)) << names[i] << (causal ? " causal" : "");
        }
    }
}

TEST(BenchmarkGpu, Fp16TrainingWithLossScalingLearns) {
    Quiet q;
    ts::CancelToken cancel;
    auto c = tinyCuda();
    c.precision = ts::Precision::FP16;
    c.learning_rate = 3e-3;
    c.warmup = 0;
    c.steps = 30;
    auto r = ts::runBenchmark(c, q, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    EXPECT_LT(r.steps.back().loss, r.steps.front().loss - 0.5);
}

TEST(BenchmarkGpu, RealOutOfMemoryIsAResultAndTheNextRunWorks) {
    Quiet q;
    ts::CancelToken cancel;
    auto c = tinyCuda();
    // Attention scores of 60% of the GPU's memory each: every single tensor fits (so the
    // up-front size check lets the point run), but the scores and their scaled copy do not
    // fit together, and the device itself runs out of memory.
    c.model.context_length = 16384;
    const double scores_per_batch = 4.0 * c.model.num_heads * 16384.0 * 16384.0;
    const int64_t memory = ts::capabilities().devices.at(1).total_memory;
    c.batch_size = std::max<int64_t>(
        1, static_cast<int64_t>(0.6 * static_cast<double>(memory) / scores_per_batch));
    ASSERT_TRUE(ts::checkPointRunnable(c).empty()) << ts::checkPointRunnable(c).front();
    c.warmup = 0;
    c.steps = 1;
    auto r = ts::runBenchmark(c, q, cancel);
    EXPECT_EQ(r.status, ts::Status::OOM) << r.error;
    EXPECT_GT(r.oom_bytes, int64_t{1} << 30);
    auto ok = ts::runBenchmark(tinyCuda(), q, cancel);
    EXPECT_EQ(ok.status, ts::Status::Ok) << ok.error;
}

// See Note [activation checkpointing]: on the GPU a checkpointed step keeps its loss and holds
// less memory at its peak; nested holds the least.
TEST(BenchmarkGpu, CheckpointingLowersThePeakAndKeepsTheLoss) {
    Quiet q;
    ts::CancelToken cancel;
    auto c = tinyCuda();
    c.model = *ts::modelPreset("small");
    c.model.context_length = 1024;
    c.batch_size = 4;
    c.warmup = 1;
    c.steps = 2;
    c.attention = ts::AttentionImpl::Sdpa;
    std::map<std::string, ts::BenchResult> r;
    for (const char* policy : {"none", "1", "4", "nested"}) {
        c.checkpoint = *ts::parseCheckpointing(policy);
        r[policy] = ts::runBenchmark(c, q, cancel);
        ASSERT_EQ(r[policy].status, ts::Status::Ok) << policy << ": " << r[policy].error;
    }
    for (const char* policy : {"1", "4", "nested"}) {
        EXPECT_LT(r[policy].peak_memory, r["none"].peak_memory) << policy;
        EXPECT_NEAR(r[policy].steps.front().loss, r["none"].steps.front().loss, 1e-4) << policy;
        // The recompute costs time in backward (one more forward of the blocks, or more).
        EXPECT_GT(r[policy].backward.mean, r["none"].backward.mean) << policy;
    }
    EXPECT_LT(r["1"].peak_memory, r["4"].peak_memory);
}

TEST(BenchmarkGpu, DeviceTimesAddUp) {
    Quiet q;
    ts::CancelToken cancel;
    auto c = tinyCuda();
    auto r = ts::runBenchmark(c, q, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    for (const auto& s : r.steps)
        EXPECT_NEAR(s.total_ms, s.forward_ms + s.backward_ms + s.optimizer_ms,
                    1e-3 + 1e-6 * s.total_ms);
}

// ---- Compiled mode (see Note [compiled step] in nn/graphed_step.cpp) ----

// Eager and compiled from the same seed: the same weights and batch, so the same losses step
// by step (bf16, fp16: within 1e-3 relative, fp32: 1e-5), with every phase timed. fp16 training
// is refused in compiled mode (CompiledGpu.Fp16TrainingIsRefused); its other modes run.
TEST(CompiledGpu, LossTrajectoryEqualsEager) {
    Quiet q;
    ts::CancelToken cancel;
    for (auto p : {ts::Precision::FP32, ts::Precision::BF16, ts::Precision::FP16})
        for (auto m : {ts::Mode::Train, ts::Mode::ForwardBackward, ts::Mode::Forward}) {
            if (p == ts::Precision::FP16 && m == ts::Mode::Train) continue;
            auto c = tinyCuda();
            c.precision = p;
            c.mode = m;
            c.learning_rate = 3e-3;  // a visible trajectory in 6 steps
            c.warmup = 0;
            c.steps = 6;
            c.seed = 11;
            const auto eager = ts::runBenchmark(c, q, cancel);
            c.exec = ts::ExecMode::Compiled;
            const auto compiled = ts::runBenchmark(c, q, cancel);
            const std::string what =
                std::string(ts::toString(p)) + " " + std::string(ts::toString(m));
            ASSERT_EQ(eager.status, ts::Status::Ok) << what << ": " << eager.error;
            ASSERT_EQ(compiled.status, ts::Status::Ok) << what << ": " << compiled.error;
            ASSERT_EQ(compiled.steps.size(), 6u);
            const double rel = p == ts::Precision::FP32 ? 1e-5 : 1e-3;
            for (size_t i = 0; i < 6; ++i) {
                const double e = eager.steps[i].loss, g = compiled.steps[i].loss;
                EXPECT_NEAR(g, e, rel * std::abs(e)) << what << ", step " << i;
                const auto& s = compiled.steps[i];
                EXPECT_GT(s.forward_ms, 0) << what;
                EXPECT_EQ(s.backward_ms > 0, m != ts::Mode::Forward) << what;
                EXPECT_EQ(s.optimizer_ms > 0, m == ts::Mode::Train) << what;
                // The phases tile the step (see Note [a step's total]): CUDA events read to about
                // 0.5 µs each, three intervals against one.
                EXPECT_NEAR(s.total_ms, s.forward_ms + s.backward_ms + s.optimizer_ms,
                            5e-3 + 1e-6 * s.total_ms)
                    << what;
                EXPECT_GE(s.memory_peak, s.memory_allocated) << what;
            }
            if (m == ts::Mode::Train)
                EXPECT_LT(compiled.steps.back().loss, compiled.steps.front().loss) << what;
            EXPECT_GT(compiled.peak_memory, 0) << what;
        }
}

// The other attention implementations capture too (bf16 training, 4 steps): same losses.
TEST(CompiledGpu, AttentionImplementationsCapture) {
    Quiet q;
    ts::CancelToken cancel;
    for (auto a : {ts::AttentionImpl::Sdpa, ts::AttentionImpl::Tiled, ts::AttentionImpl::Flash}) {
        auto c = tinyCuda();
        c.precision = ts::Precision::BF16;
        c.attention = a;
        c.warmup = 0;
        c.steps = 4;
        c.learning_rate = 3e-3;
        if (!ts::checkPointRunnable(c).empty()) continue;  // flash where our kernels are not built
        const auto eager = ts::runBenchmark(c, q, cancel);
        c.exec = ts::ExecMode::Compiled;
        const auto compiled = ts::runBenchmark(c, q, cancel);
        ASSERT_EQ(eager.status, ts::Status::Ok) << ts::toString(a) << ": " << eager.error;
        ASSERT_EQ(compiled.status, ts::Status::Ok) << ts::toString(a) << ": " << compiled.error;
        for (size_t i = 0; i < eager.steps.size(); ++i)
            EXPECT_NEAR(compiled.steps[i].loss, eager.steps[i].loss,
                        1e-3 * std::abs(eager.steps[i].loss))
                << ts::toString(a) << ", step " << i;
    }
}

// After the capture (the first run), replays allocate nothing: the allocator's count of
// allocations and its allocated bytes stay where they were; the optimizer's host step count
// follows the replays; the weights change.
TEST(CompiledGpu, ReplaysAllocateNothing) {
    for (auto p : {ts::Precision::FP32, ts::Precision::BF16}) {
        ts::TrainingSetup setup;
        setup.model = *ts::modelPreset("mini");
        setup.model.context_length = 128;
        setup.precision = p;
        setup.exec = ts::ExecMode::Compiled;
        setup.seed = 3;
        const c10::Device device("cuda");  // no index: the current device
        ts::TrainingStep step(setup, device);
        ts::DeviceTimer timer(device, 4);
        const ts::StepTimes first = step.run(timer);
        ASSERT_TRUE(step.captured());
        EXPECT_EQ(step.optimizer().stepCount(), 1);
        // A host copy: a device clone would itself be an allocation after the first step's count.
        const at::Tensor before = step.parameters().front().detach().to(at::kCPU);
        const c10::DeviceIndex index = 0;  // the test's "cuda": the current device, 0
        const auto count = [&] {
            return at::accelerator::getDeviceStats(index).allocation[0].allocated;
        };  // AGGREGATE
        const int64_t allocations = count();
        for (int i = 0; i < 5; ++i) {
            const ts::StepTimes t = step.run(timer);
            EXPECT_EQ(t.memory_allocated, first.memory_allocated)
                << ts::toString(p) << ", replay " << i;
            EXPECT_GT(t.forward_ms, 0);
            EXPECT_GT(t.backward_ms, 0);
            EXPECT_GT(t.optimizer_ms, 0);
            EXPECT_TRUE(std::isfinite(t.loss));
        }
        EXPECT_EQ(count(), allocations) << ts::toString(p);
        EXPECT_EQ(step.optimizer().stepCount(), 6);
        EXPECT_GT(
            (step.parameters().front().detach().to(at::kCPU) - before).abs().max().item<double>(),
            0);
    }
}

// Compiled forward-only: one graph, the same loss as eager, and no backward or optimizer time.
TEST(CompiledGpu, ForwardOnlyWorks) {
    Quiet q;
    ts::CancelToken cancel;
    auto c = tinyCuda();
    c.mode = ts::Mode::Forward;
    c.precision = ts::Precision::BF16;
    c.exec = ts::ExecMode::Compiled;
    const auto r = ts::runBenchmark(c, q, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    for (const auto& s : r.steps) {
        EXPECT_GT(s.forward_ms, 0);
        EXPECT_EQ(s.backward_ms, 0);
        EXPECT_EQ(s.optimizer_ms, 0);
        EXPECT_DOUBLE_EQ(s.loss, r.steps.front().loss);  // no training: the same loss every replay
    }
}

// fp16 training is refused by the step itself too (validation says it first), never run eagerly.
TEST(CompiledGpu, Fp16TrainingIsRefused) {
    ts::TrainingSetup setup;
    setup.model = *ts::modelPreset("tiny");
    setup.precision = ts::Precision::FP16;
    setup.exec = ts::ExecMode::Compiled;
    try {
        ts::TrainingStep step(setup, c10::Device("cuda"));
        FAIL() << "fp16 training was accepted in compiled mode";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("fp16"), std::string::npos) << e.what();
    }
}

}  // namespace
