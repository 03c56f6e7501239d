#include "trainscope/engine/benchmark.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Event.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <regex>

#include "autocast.h"
#include "model.h"
#include "optimizer.h"
#include "testing.h"
#include "trainscope/engine/environment.h"
#include "trainscope/engine/store.h"

namespace ts {
namespace testing {
namespace {
std::atomic<int> g_oom_step{-1};
}
void injectOomAtStep(int step) { g_oom_step.store(step); }
}  // namespace testing

namespace {

using Clock = std::chrono::steady_clock;

// Marks the phase boundaries of a step. On a GPU these are device events on the current
// stream, so the times are the device's, not the host's launch times; on the CPU, where
// every op is synchronous, a steady clock.
class StepTimer {
public:
    explicit StepTimer(const c10::Device& device) : device_(device) {
        if (device.is_cuda())
            for (auto& e : events_) e = std::make_unique<c10::Event>(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
    }
    void mark(int i) {
        if (device_.is_cuda())
            events_[i]->record(at::accelerator::getCurrentStream(device_.index()));
        else
            times_[i] = Clock::now();
    }
    // Waits for the last mark, then returns the milliseconds between marks i and j.
    void finish() {
        if (device_.is_cuda()) events_[3]->synchronize();
    }
    double ms(int i, int j) const {
        if (device_.is_cuda()) return events_[i]->elapsedTime(*events_[j]);
        return std::chrono::duration<double, std::milli>(times_[j] - times_[i]).count();
    }

private:
    c10::Device device_;
    std::array<std::unique_ptr<c10::Event>, 4> events_;
    std::array<Clock::time_point, 4> times_;
};

// "Tried to allocate 2.00 GiB" → bytes; 0 when the message has no size.
int64_t requestedBytes(const std::string& message) {
    static const std::regex re(R"(Tried to allocate ([0-9.]+) (B|KiB|MiB|GiB|TiB))");
    std::smatch m;
    if (!std::regex_search(message, m, re)) return 0;
    static const std::pair<const char*, double> units[] = {
        {"B", 1.0}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
    for (const auto& [u, f] : units)
        if (m[2] == u) return static_cast<int64_t>(std::stod(m[1]) * f);
    return 0;
}

// First line of an exception message: LibTorch appends a C++ backtrace.
std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

void releaseCachedMemory(const c10::Device& device) {
    if (device.is_cuda()) {
        at::accelerator::synchronizeDevice(device.index());
        at::accelerator::emptyCache();
    }
}

struct Progress {
    int point_index, point_count, steps_per_point;
    Clock::time_point start;
};

class Runner {
public:
    Runner(const BenchConfig& cfg, Observer& obs, const CancelToken& cancel, Progress progress)
        : cfg_(cfg), obs_(obs), cancel_(cancel), progress_(progress) {}

    BenchResult run() {
        BenchResult r;
        r.config = cfg_;
        r.parameter_count = parameterCount(cfg_.model);
        r.environment = currentEnvironment(cfg_.device);
        std::vector<std::string> problems = validateBench(cfg_);
        if (problems.empty()) problems = checkRunnable(cfg_);
        if (!problems.empty()) {
            r.status = RunStatus::Failed;
            r.error = fmt::format("{}", fmt::join(problems, "; "));
            return r;
        }
        const c10::Device device(cfg_.device == "cuda" ? "cuda:0" : cfg_.device);
        try {
            measure(device, r);
        } catch (const c10::OutOfMemoryError& e) {
            r.status = RunStatus::OOM;
            r.error = firstLine(e.what_without_backtrace());
            r.oom_bytes = requestedBytes(r.error);
        } catch (const std::exception& e) {
            const c10::Error* ce = dynamic_cast<const c10::Error*>(&e);
            r.status = RunStatus::Failed;
            r.error = firstLine(ce ? ce->what_without_backtrace() : e.what());
        }
        // The model, optimizer state and activations are gone with measure()'s frame; hand
        // the cached blocks back so the next point starts from an empty device.
        try {
            releaseCachedMemory(device);
        } catch (const std::exception&) {
        }
        if (r.status != RunStatus::Ok && r.status != RunStatus::Cancelled)
            obs_.log(LogLevel::Warning, fmt::format("point {}: {}: {}", progress_.point_index + 1,
                                                    toString(r.status), r.error));
        summarize(r);
        for (const auto& s : r.steps) r.peak_memory = std::max(r.peak_memory, s.memory_peak);
        return r;
    }

private:
    void measure(const c10::Device& device, BenchResult& r) {
        c10::OptionalDeviceGuard guard;
        if (device.is_cuda()) guard.reset_device(device);
        at::manual_seed(cfg_.seed);
        const auto options = at::TensorOptions().device(device).dtype(at::kFloat);
        TransformerLM model(cfg_.model, cfg_.attention, options);
        std::vector<at::Tensor> params = model->parameters();
        FusedAdamW optimizer(params, cfg_.learning_rate);
        std::optional<GradScaler> scaler;
        if (cfg_.precision == Precision::FP16 && cfg_.mode == Mode::Train) scaler.emplace(options);

        const auto tok = options.dtype(at::kLong);
        at::Tensor inputs = at::randint(cfg_.model.vocab_size, {cfg_.batch_size, cfg_.model.context_length}, tok);
        at::Tensor targets = at::randint(cfg_.model.vocab_size, {cfg_.batch_size, cfg_.model.context_length}, tok);

        const int total = cfg_.warmup + cfg_.steps;
        const int oom_at = testing::g_oom_step.exchange(-1);
        StepTimer timer(device);
        for (int i = 0; i < total; ++i) {
            if (cancel_.cancelled()) {
                r.status = RunStatus::Cancelled;
                r.error = fmt::format("cancelled after {} of {} steps", i, total);
                return;
            }
            if (i == oom_at)
                throw c10::OutOfMemoryError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                                            "CUDA out of memory. Tried to allocate 2.00 GiB (injected by a test)");
            if (device.is_cuda()) at::accelerator::resetPeakStats(device.index());
            StepSample s;
            s.index = i;
            s.warmup = i < cfg_.warmup;
            optimizer.zeroGrad();
            timer.mark(0);
            at::Tensor loss;
            {
                std::optional<at::NoGradGuard> no_grad;
                if (cfg_.mode == Mode::Forward) no_grad.emplace();
                AutocastScope autocast(device.type(), cfg_.precision);
                loss = crossEntropy(model->forward(inputs), targets);
            }
            timer.mark(1);
            if (cfg_.mode != Mode::Forward) (scaler ? scaler->scale(loss) : loss).backward();
            timer.mark(2);
            if (cfg_.mode == Mode::Train) {
                if (scaler)
                    scaler->step(optimizer, params);
                else
                    optimizer.step();
            }
            timer.mark(3);
            timer.finish();
            s.forward_ms = timer.ms(0, 1);
            s.backward_ms = cfg_.mode == Mode::Forward ? 0.0 : timer.ms(1, 2);
            s.optimizer_ms = cfg_.mode == Mode::Train ? timer.ms(2, 3) : 0.0;
            s.total_ms = timer.ms(0, 3);
            s.loss = loss.item<double>();
            if (device.is_cuda()) {
                const auto stats = at::accelerator::getDeviceStats(device.index());
                const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
                s.memory_allocated = stats.allocated_bytes[agg].current;
                s.memory_reserved = stats.reserved_bytes[agg].current;
                s.memory_peak = stats.allocated_bytes[agg].peak;
            }
            r.steps.push_back(s);
            obs_.stepFinished(progress_.point_index, s);
            reportProgress(i + 1);
        }
    }

    void reportProgress(int steps_done) {
        const double done = progress_.point_index * progress_.steps_per_point + steps_done;
        const double all = static_cast<double>(progress_.point_count) * progress_.steps_per_point;
        const double fraction = all > 0 ? std::min(1.0, done / all) : 1.0;
        const double elapsed = std::chrono::duration<double>(Clock::now() - progress_.start).count();
        obs_.progress(fraction, fraction > 0 ? elapsed * (1.0 - fraction) / fraction : -1.0);
    }

    const BenchConfig& cfg_;
    Observer& obs_;
    const CancelToken& cancel_;
    Progress progress_;
};

BenchResult runPoint(const BenchConfig& config, Observer& observer, const CancelToken& cancel,
                     const Progress& progress) {
    observer.pointStarted(progress.point_index, progress.point_count, config);
    BenchResult r = Runner(config, observer, cancel, progress).run();
    return r;
}

}  // namespace

BenchResult runBenchmark(const BenchConfig& config, Observer& observer, const CancelToken& cancel,
                         int point_index, int point_count) {
    Progress progress{point_index, point_count, config.warmup + config.steps, Clock::now()};
    BenchResult r = runPoint(config, observer, cancel, progress);
    observer.pointFinished(point_index, r);
    return r;
}

std::vector<BenchResult> runSweep(const std::vector<BenchConfig>& points, Observer& observer,
                                  const CancelToken& cancel, ResultStore* store, int64_t run_id) {
    std::vector<BenchResult> results;
    // Progress counts steps, assuming every point has as many as the first: good enough for
    // an ETA, and exact for the usual sweep where only sizes or lengths change.
    const int steps = points.empty() ? 1 : std::max(1, points.front().warmup + points.front().steps);
    Progress progress{0, static_cast<int>(points.size()), steps, Clock::now()};
    for (size_t i = 0; i < points.size(); ++i) {
        if (cancel.cancelled()) break;
        progress.point_index = static_cast<int>(i);
        BenchResult r = runPoint(points[i], observer, cancel, progress);
        if (store) {
            try {
                store->addPoint(run_id, static_cast<int>(i), r);
            } catch (const std::exception& e) {
                observer.log(LogLevel::Error, fmt::format("could not store point {}: {}", i + 1, e.what()));
            }
        }
        observer.pointFinished(static_cast<int>(i), r);
        const bool cancelled = r.status == RunStatus::Cancelled;
        results.push_back(std::move(r));
        if (cancelled) break;
    }
    return results;
}

}  // namespace ts
