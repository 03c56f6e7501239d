// The benchmark runner on the CPU: what the observer sees, OOM as a result, cancellation,
// refusal of configurations the machine cannot run, and sweeps into the store.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <mutex>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_testing.h"
#include "core/store.h"
#include "nn/training_step.h"
#include "runtime/environment.h"
#include "runtime/step_ranges.h"

namespace {

ts::PointConfig tinyConfig() {
    ts::PointConfig c;
    c.model = *ts::modelPreset("tiny");
    c.model.context_length = 16;
    c.batch_size = 2;
    c.warmup = 2;
    c.steps = 3;
    c.device = "cpu";
    return c;
}

// Records every call, in order.
struct Recorder : ts::BenchObserver {
    std::vector<std::string> calls;
    std::vector<ts::StepSample> steps;
    std::vector<double> fractions;
    std::function<void(const ts::StepSample&)> on_step;
    void pointStarted(int i, int n, const ts::PointConfig&) override {
        calls.push_back("start " + std::to_string(i) + "/" + std::to_string(n));
    }
    void stepFinished(int, const ts::StepSample& s) override {
        calls.push_back("step " + std::to_string(s.index));
        steps.push_back(s);
        if (on_step) on_step(s);
    }
    void pointFinished(int i, const ts::BenchResult&) override {
        calls.push_back("finish " + std::to_string(i));
    }
    void progress(double f, double) override { fractions.push_back(f); }
};

TEST(Benchmark, TrainModeReportsEveryPhaseOfEveryStep) {
    Recorder rec;
    ts::CancelToken cancel;
    ts::BenchResult r = ts::runBenchmark(tinyConfig(), rec, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_EQ(r.steps.size(), 5u);
    EXPECT_EQ(rec.calls.front(), "start 0/1");
    EXPECT_EQ(rec.calls.back(), "finish 0");
    EXPECT_EQ(rec.calls.size(), 7u);
    for (int i = 0; i < 5; ++i) {
        const auto& s = r.steps[static_cast<size_t>(i)];
        EXPECT_EQ(s.index, i);
        EXPECT_EQ(s.warmup, i < 2);
        EXPECT_GT(s.forward_ms, 0);
        EXPECT_GT(s.backward_ms, 0);
        EXPECT_GT(s.optimizer_ms, 0);
        EXPECT_GE(s.total_ms, s.forward_ms + s.backward_ms);
        EXPECT_TRUE(std::isfinite(s.loss));
    }
    // Statistics over the three measured steps only.
    EXPECT_EQ(r.total.count, 3);
    EXPECT_EQ(r.forward.count, 3);
    EXPECT_NEAR(r.forward.mean,
                (r.steps[2].forward_ms + r.steps[3].forward_ms + r.steps[4].forward_ms) / 3, 1e-9);
    EXPECT_EQ(r.parameter_count, ts::parameterCount(r.config.model));
    EXPECT_FALSE(r.environment.torch_version.empty());
    EXPECT_FALSE(r.environment.date.empty());
    EXPECT_DOUBLE_EQ(rec.fractions.back(), 1.0);
}

// See Note [capture ranges]: on the CPU --cuda-profiler-range runs the point as ever and starts
// no CUDA profiler; ranges close on the way out of a step that throws.
TEST(Benchmark, CudaProfilerRangeOnTheCpuChangesNothing) {
    Recorder rec;
    ts::CancelToken cancel;
    auto cfg = tinyConfig();
    cfg.cuda_profiler_range = true;
    const auto r = ts::runBenchmark(cfg, rec, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    EXPECT_EQ(r.steps.size(), static_cast<size_t>(cfg.warmup + cfg.steps));

    ts::StepRanges ranges(c10::Device("cpu"), true, &rec);
    { const auto s = ranges.step(0, true); }
    {
        const auto s = ranges.step(1, false);
        EXPECT_FALSE(ranges.profilerStarted());
    }
    EXPECT_THROW(
        {
            const auto s = ranges.step(2, false);
            throw std::runtime_error("a step that fails");
        },
        std::runtime_error);
    ranges.finish();
    ranges.finish();  // twice is harmless
    EXPECT_FALSE(ranges.profilerStarted());
}

TEST(Benchmark, ForwardModeHasNoBackwardOrOptimizerTime) {
    Recorder rec;
    ts::CancelToken cancel;
    auto c = tinyConfig();
    c.mode = ts::Mode::Forward;
    auto r = ts::runBenchmark(c, rec, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    for (const auto& s : r.steps) {
        EXPECT_EQ(s.backward_ms, 0);
        EXPECT_EQ(s.optimizer_ms, 0);
    }
    c.mode = ts::Mode::ForwardBackward;
    r = ts::runBenchmark(c, rec, cancel);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    EXPECT_GT(r.backward.mean, 0);
    EXPECT_EQ(r.optimizer.mean, 0);
}

TEST(Benchmark, EveryPrecisionAndAttentionRunsOnTheCpu) {
    ts::CancelToken cancel;
    for (auto p : {ts::Precision::FP32, ts::Precision::BF16, ts::Precision::FP16}) {
        for (auto a : {ts::AttentionImpl::Naive, ts::AttentionImpl::Sdpa}) {
            Recorder rec;
            auto c = tinyConfig();
            c.precision = p;
            c.attention = a;
            auto r = ts::runBenchmark(c, rec, cancel);
            EXPECT_EQ(r.status, ts::Status::Ok)
                << ts::toString(p) << " " << ts::toString(a) << ": " << r.error;
        }
    }
}

TEST(Benchmark, OutOfMemoryIsAResultAndTheNextRunWorks) {
    Recorder rec;
    ts::CancelToken cancel;
    ts::testing::injectOomAtStep(1);
    auto r = ts::runBenchmark(tinyConfig(), rec, cancel);
    EXPECT_EQ(r.status, ts::Status::OOM);
    EXPECT_EQ(r.oom_bytes, int64_t{2} << 30);
    EXPECT_NE(r.error.find("out of memory"), std::string::npos) << r.error;
    EXPECT_EQ(r.steps.size(), 1u);  // the step before the failure is kept
    EXPECT_EQ(rec.calls.back(), "finish 0");
    auto again = ts::runBenchmark(tinyConfig(), rec, cancel);
    EXPECT_EQ(again.status, ts::Status::Ok) << again.error;
}

TEST(Benchmark, CancelStopsWithinOneStepAndKeepsTheSteps) {
    Recorder rec;
    ts::CancelToken cancel;
    rec.on_step = [&](const ts::StepSample& s) {
        if (s.index == 1) cancel.cancel();
    };
    auto c = tinyConfig();
    c.steps = 50;
    auto r = ts::runBenchmark(c, rec, cancel);
    EXPECT_EQ(r.status, ts::Status::Cancelled);
    EXPECT_EQ(r.steps.size(), 2u);
}

TEST(Benchmark, UnrunnableConfigurationsFailWithTheReason) {
    Recorder rec;
    ts::CancelToken cancel;
    auto c = tinyConfig();
    c.model.num_heads = 3;
    auto r = ts::runBenchmark(c, rec, cancel);
    EXPECT_EQ(r.status, ts::Status::Failed);
    EXPECT_NE(r.error.find("not divisible by num_heads 3"), std::string::npos) << r.error;
    if (!ts::capabilities().cuda_available) {
        c = tinyConfig();
        c.device = "cuda:0";
        r = ts::runBenchmark(c, rec, cancel);
        EXPECT_EQ(r.status, ts::Status::Failed);
        EXPECT_NE(r.error.find("device 'cuda:0'"), std::string::npos) << r.error;
    }
}

// Compiled mode is refused where it cannot capture, with the reason, and never run eagerly in
// its place: the runner fails the point before a step, the step itself throws.
TEST(Benchmark, CompiledModeOnTheCpuIsRefusedNotRunEagerly) {
    Recorder rec;
    ts::CancelToken cancel;
    auto c = tinyConfig();
    c.exec = ts::ExecMode::Compiled;
    const auto r = ts::runBenchmark(c, rec, cancel);
    EXPECT_EQ(r.status, ts::Status::Failed);
    EXPECT_NE(r.error.find("compiled mode captures CUDA graphs: it needs a CUDA device"),
              std::string::npos)
        << r.error;
    EXPECT_TRUE(r.steps.empty());
    ts::TrainingSetup setup;
    setup.model = *ts::modelPreset("tiny");
    setup.model.context_length = 16;
    setup.exec = ts::ExecMode::Compiled;
    try {
        ts::TrainingStep step(setup, c10::Device(c10::kCPU));
        ADD_FAILURE() << "a compiled step was built on the CPU";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("needs a CUDA device"), std::string::npos) << e.what();
    }
}

TEST(Benchmark, SweepStoresEachPointAsItFinishes) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("tst_benchmark_" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(path);
    {
        ts::ResultStore store(path.string());
        ts::SweepSpec spec;
        spec.base = tinyConfig();
        spec[ts::Dimension::Precision] = {"fp32", "bf16"};
        spec[ts::Dimension::Mode] = {"forward", "train"};
        auto points = ts::expandSweep(spec);
        const int64_t run = store.createRun("bench", "test", "{}", "cpu");
        Recorder rec;
        ts::CancelToken cancel;
        // The observer sees each point only after it was stored.
        size_t stored_when_finished = 0;
        struct Checking : Recorder {
            ts::ResultStore* store;
            int64_t run;
            size_t* seen;
            void pointFinished(int i, const ts::BenchResult& r) override {
                *seen = loadBenchPoints(*store, run).size();
                EXPECT_EQ(*seen, static_cast<size_t>(i) + 1);
                Recorder::pointFinished(i, r);
            }
        } checking;
        checking.store = &store;
        checking.run = run;
        checking.seen = &stored_when_finished;
        auto results = ts::runSweep(points, checking, cancel, &store, run);
        ASSERT_EQ(results.size(), 4u);
        EXPECT_EQ(stored_when_finished, 4u);
        auto back = loadBenchPoints(store, run);
        ASSERT_EQ(back.size(), 4u);
        EXPECT_EQ(back[1].config.mode, ts::Mode::Train);
        EXPECT_EQ(back[2].config.precision, ts::Precision::BF16);
        EXPECT_EQ(back[3].steps.size(), 5u);
    }
    std::filesystem::remove(path);
}

// A point that cannot be stored (here: its run is gone, so the foreign key refuses it) stops
// the sweep with an Error naming the point 1-based; the observer still sees its measurement.
TEST(Benchmark, SweepStopsAtAPointThatCannotBeStored) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("tst_benchmark_lost_" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(path);
    {
        ts::ResultStore store(path.string());
        ts::SweepSpec spec;
        spec.base = tinyConfig();
        spec.base.warmup = 0;
        spec.base.steps = 1;
        spec[ts::Dimension::Mode] = {"forward", "train", "forward-backward"};
        const int64_t run = store.createRun("bench", "test", "{}", "cpu");
        ASSERT_TRUE(store.removeRun(run));
        struct Logging : Recorder {
            std::vector<std::string> errors;
            void log(ts::LogLevel level, const std::string& m) override {
                if (level == ts::LogLevel::Error) errors.push_back(m);
            }
        } rec;
        ts::CancelToken cancel;
        const auto results = ts::runSweep(ts::expandSweep(spec), rec, cancel, &store, run);
        ASSERT_EQ(results.size(), 1u);
        EXPECT_EQ(results[0].status, ts::Status::Ok);
        EXPECT_EQ(rec.calls.back(), "finish 0");
        ASSERT_EQ(rec.errors.size(), 1u);
        EXPECT_NE(rec.errors[0].find("could not store point 1 of 3"), std::string::npos)
            << rec.errors[0];
        EXPECT_NE(rec.errors[0].find("adding point 1 to run"), std::string::npos) << rec.errors[0];
        EXPECT_NE(rec.errors[0].find("stops"), std::string::npos) << rec.errors[0];
    }
    std::filesystem::remove(path);
}

}  // namespace
