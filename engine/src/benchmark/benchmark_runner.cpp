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
#include "runtime/python_runner.h"

namespace ts {
namespace testing {
namespace {
std::atomic<int> g_oom_step{-1};
}
void injectOomAtStep(int step) { g_oom_step.store(step); }
}  // namespace testing

StepSample stepSample(const StepTimes& t, int index, bool warmup) {
    StepSample s;
    s.index = index;
    s.warmup = warmup;
    s.forward_ms = t.forward_ms;
    s.backward_ms = t.backward_ms;
    s.optimizer_ms = t.optimizer_ms;
    s.total_ms = t.total_ms;
    s.loss = t.loss;
    s.memory_allocated = t.memory_allocated;
    s.memory_reserved = t.memory_reserved;
    s.memory_peak = t.memory_peak;
    return s;
}

std::vector<std::string> checkBenchRunnable(const BenchConfig& c) {
    auto problems = checkRunnable({c.device, {c.precision}, {c.attention}});
    if (!problems.empty()) return problems;
    // A tensor bigger than the whole GPU fails in LibTorch with an allocator message; say it
    // up front. "cuda" is the current device, cuda:0 unless set otherwise.
    const std::string id = c.device == "cuda" ? "cuda:0" : c.device;
    if (id == "cpu") {
        if (auto p = deviceMemoryProblem(c, systemMemoryBytes(), "this machine's memory");
            !p.empty())
            problems.push_back(p);
        else if (auto q = hostMemoryProblem(c, availableMemoryBytes()); !q.empty())
            problems.push_back(q);
        return problems;
    }
    for (const auto& d : capabilities().devices)
        if (d.id == id)
            if (auto p = deviceMemoryProblem(c, d.total_memory, d.name); !p.empty())
                problems.push_back(p);
    return problems;
}

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

void measure(const BenchConfig& cfg, const c10::Device& device, BenchObserver& obs,
             const CancelToken& cancel, const Progress& progress, BenchResult& r) {
    c10::OptionalDeviceGuard guard;
    if (device.is_cuda()) guard.reset_device(device);
    TrainingStep step({cfg.model, cfg.batch_size, cfg.mode, cfg.precision, cfg.attention, cfg.seed,
                       cfg.learning_rate, cfg.exec},
                      device);
    const int total = cfg.warmup + cfg.steps;
    const int oom_at = testing::g_oom_step.exchange(-1);
    DeviceTimer timer(device, 4);
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
}

// The user's model, timed by the Python runner step by step as TrainScope times its own
// (forward with the loss, backward, optimizer; CUDA events, one synchronisation a step).
void measurePython(const BenchConfig& cfg, BenchObserver& obs, const CancelToken& cancel,
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

}  // namespace

PythonPointOutcome runPythonPoint(const BenchConfig& cfg, const std::string& command,
                                  const nlohmann::json& spec, Observer& obs, int point_index,
                                  const CancelToken& cancel,
                                  const std::function<void(const StepSample&)>& on_step,
                                  const std::function<void(const nlohmann::json&)>& on_other,
                                  const std::function<void(const nlohmann::json&)>& on_result) {
    PythonPointOutcome r;
    int steps = 0;
    bool finished = false;
    const PythonOutcome out = runPython(
        {cfg.python.python, command, spec, cfg.python.timeout_s},
        [&](const nlohmann::json& j) {
            const std::string event = j.value("event", "");
            if (event == "ready") {
                r.parameter_count = j.value("parameters", int64_t{0});
                obs.log(LogLevel::Info,
                        fmt::format("point {}: {} ({} parameters) with {}, torch {}",
                                    point_index + 1, j.value("model", "?"), r.parameter_count,
                                    j.value("optimizer", "no optimizer"), j.value("torch", "?")));
                for (const auto& note : j.value("notes", std::vector<std::string>{}))
                    obs.log(LogLevel::Info, fmt::format("point {}: {}", point_index + 1, note));
            } else if (event == "step") {
                ++steps;
                on_step(stepFromJson(j));  // the runner's step line has a StepSample's fields
            } else if (event == "result") {
                finished = true;
                if (on_result) on_result(j);
                if (j.value("status", "ok") == "oom") {
                    r.status = Status::OOM;
                    r.error = j.value("message", "out of memory in the user's code");
                    if (const std::string at = j.value("where", ""); !at.empty())
                        r.error += " (" + at + ")";
                }
            } else if (on_other) {
                on_other(j);
            }
        },
        cancel);
    switch (out.state) {
        case PythonOutcome::State::Finished:
            if (!finished) {
                r.status = Status::Failed;
                r.error = "the Python runner ended without a result";
            }
            break;
        case PythonOutcome::State::Cancelled:
            r.status = Status::Cancelled;
            r.error = steps < cfg.warmup
                          ? fmt::format("during warm-up step {} of {}", steps + 1, cfg.warmup)
                          : fmt::format("after {} steps past the warm-up", steps - cfg.warmup);
            break;
        case PythonOutcome::State::TimedOut:
        case PythonOutcome::State::Failed:
            r.status = Status::Failed;
            r.error = out.text();
            break;
    }
    if (r.status != Status::Ok && r.status != Status::Cancelled)
        obs.log(LogLevel::Warning, fmt::format("point {}: {}: {}", point_index + 1,
                                               toString(r.status), firstLine(r.error)));
    return r;
}

namespace {

BenchResult runPoint(const BenchConfig& cfg, BenchObserver& obs, const CancelToken& cancel,
                     const Progress& progress) {
    obs.pointStarted(progress.point_index, progress.point_count, cfg);
    BenchResult r;
    r.config = cfg;
    r.environment = currentEnvironment(cfg.device);
    std::vector<std::string> problems = validateBench(cfg);
    if (problems.empty()) problems = checkBenchRunnable(cfg);
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

BenchResult runBenchmark(const BenchConfig& config, BenchObserver& observer,
                         const CancelToken& cancel, int point_index, int point_count) {
    ProgressMeter meter(observer);
    BenchResult r = runPoint(config, observer, cancel,
                             {meter, point_index, point_count, config.warmup + config.steps});
    observer.pointFinished(point_index, r);
    return r;
}

std::vector<BenchResult> runSweep(const std::vector<BenchConfig>& points, BenchObserver& observer,
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
