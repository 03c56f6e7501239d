// The benchmark's runner: each point builds a TrainingStep and times warm-up and measured
// steps; failures become results; each finished point is stored before the next starts.
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_testing.h"
#include "core/store.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "runtime/point_run.h"
#include "runtime/python_runner.h"
#include "runtime/step_ranges.h"

namespace ts {
namespace testing {
namespace {
std::atomic<int> g_oom_step{-1};
}
void injectOomAtStep(int step) { g_oom_step.store(step); }
}  // namespace testing

namespace {

// Progress counts steps, assuming every point has as many as the first: good enough for an
// ETA, and exact for the usual sweep where only sizes or lengths change.
struct Progress {
    ProgressMeter& meter;
    int point_index, point_count, steps_per_point;
    void report(int steps_done) const {
        meter.report(static_cast<double>(point_index) * steps_per_point + steps_done,
                     static_cast<double>(point_count) * steps_per_point);
    }
};

void measure(const PointConfig& cfg, const c10::Device& device, BenchObserver& obs,
             const CancelToken& cancel, const Progress& progress, BenchResult& r) {
    c10::OptionalDeviceGuard guard;
    if (device.is_cuda()) guard.reset_device(device);
    TrainingStep step(trainingSetup(cfg), device);
    const int total = cfg.warmup + cfg.steps;
    const int oom_at = testing::g_oom_step.exchange(-1);
    DeviceTimer timer(device, 4);
    StepRanges ranges(device, cfg.cuda_profiler_range, &obs);
    for (int i = 0; i < total; ++i) {
        if (cancel.cancelled()) {
            r.status = Status::Cancelled;
            // Said after the status ("cancelled"); warm-up steps are not measured steps.
            r.error = i < cfg.warmup
                          ? fmt::format("during warm-up step {} of {}", i + 1, cfg.warmup)
                          : fmt::format("after {} of {} measured steps", i - cfg.warmup, cfg.steps);
            return;
        }
        if (i == oom_at)
            throw c10::OutOfMemoryError(
                {__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                "CUDA out of memory. Tried to allocate 2.00 GiB (injected by a test)");
        const auto range = ranges.step(i, i < cfg.warmup);
        const auto started = std::chrono::steady_clock::now();
        const StepSample s = stepSample(step.run(timer), i, i < cfg.warmup);
        if (i == 0)  // step.run synchronises: this is the first step's whole wall time
            r.first_step_ms = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - started)
                                  .count();
        r.steps.push_back(s);
        obs.stepFinished(progress.point_index, s);
        progress.report(i + 1);
    }
    ranges.finish();
}

// The user's model, timed by the Python runner step by step as TrainScope times its own
// (forward with the loss, backward, optimizer; CUDA events, one synchronisation a step).
void measurePython(const PointConfig& cfg, BenchObserver& obs, const CancelToken& cancel,
                   const Progress& progress, BenchResult& r) {
    const PythonPointOutcome out = runPythonPoint(
        cfg, "bench", pythonRunnerSpec(cfg), obs, progress.point_index, cancel,
        [&](const StepSample& s) {
            r.steps.push_back(s);
            obs.stepFinished(progress.point_index, s);
            progress.report(static_cast<int>(r.steps.size()));
        },
        {},
        [&](const nlohmann::json& result) {
            const auto it = result.find("first_step_s");
            if (it != result.end() && it->is_number()) r.first_step_ms = 1000.0 * it->get<double>();
        });
    r.parameter_count = out.parameter_count;
    r.status = out.status;
    r.error = out.error;
}

BenchResult runPoint(const PointConfig& cfg, BenchObserver& obs, const CancelToken& cancel,
                     const Progress& progress) {
    obs.pointStarted(progress.point_index, progress.point_count, cfg);
    BenchResult r;
    r.config = cfg;
    r.environment = currentEnvironment(cfg.device);
    std::vector<std::string> problems = validatePoint(cfg);
    if (problems.empty()) problems = checkPointRunnable(cfg);
    if (!problems.empty()) {
        r.status = Status::Failed;
        r.error = fmt::format("{}", fmt::join(problems, "; "));
        return r;
    }
    if (cfg.source == Source::Python) {
        runRecordingFailure(r, [&] { measurePython(cfg, obs, cancel, progress, r); });
        summarize(r);
        for (const auto& s : r.steps) r.peak_memory = std::max(r.peak_memory, s.memory_peak);
        return r;
    }
    r.parameter_count =
        parameterCount(cfg.model);  // only once the sizes are known not to overflow it
    const c10::Device device = parseDevice(cfg.device);
    runRecordingFailure(r, [&] { measure(cfg, device, obs, cancel, progress, r); });
    // The model, optimizer state and activations are gone with measure()'s frame.
    releaseCachedMemory(device);
    if (r.status != Status::Ok && r.status != Status::Cancelled)
        obs.log(LogLevel::Warning, fmt::format("point {}: {}: {}", progress.point_index + 1,
                                               toString(r.status), r.error));
    summarize(r);
    for (const auto& s : r.steps) r.peak_memory = std::max(r.peak_memory, s.memory_peak);
    return r;
}

}  // namespace

BenchResult runBenchmark(const PointConfig& config, BenchObserver& observer,
                         const CancelToken& cancel, int point_index, int point_count) {
    ProgressMeter meter(observer);
    BenchResult r = runPoint(config, observer, cancel,
                             {meter, point_index, point_count, config.warmup + config.steps});
    observer.pointFinished(point_index, r);
    return r;
}

std::vector<BenchResult> runSweep(const std::vector<PointConfig>& points, BenchObserver& observer,
                                  const CancelToken& cancel, ResultStore* store, int64_t run_id) {
    std::vector<BenchResult> results;
    const int steps =
        points.empty() ? 1 : std::max(1, points.front().warmup + points.front().steps);
    ProgressMeter meter(observer);
    for (size_t i = 0; i < points.size(); ++i) {
        if (cancel.cancelled()) break;
        const Progress progress{meter, static_cast<int>(i), static_cast<int>(points.size()), steps};
        BenchResult r = runPoint(points[i], observer, cancel, progress);
        // A point that cannot be stored (a full disk, a deleted run) stops the run: going on
        // would spend the machine's time on points that are lost as well.
        bool stored = true;
        if (store) {
            try {
                storeBenchPoint(*store, run_id, static_cast<int>(i), r);
            } catch (const std::exception& e) {
                stored = false;
                observer.log(LogLevel::Error, storeFailure("point", i, points.size(), e));
            }
        }
        observer.pointFinished(static_cast<int>(i), r);
        const bool cancelled = r.status == Status::Cancelled;
        results.push_back(std::move(r));
        if (cancelled || !stored) break;
    }
    return results;
}

}  // namespace ts
