// The benchmark lab: end-to-end timing of forward, backward and optimizer step of the
// Transformer LM. Its sweep of training points (core/point.h), its results (steps,
// statistics), its observer and its runner. Plain value types, no LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observer.h"
#include "core/point.h"
#include "core/result.h"
#include "core/sweep.h"
#include "runtime/point_run.h"

namespace ts {

class ResultStore;

// The lab's id: the store's run kind, the window's and the presets' name for it.
inline constexpr const char* kBenchLab = "bench";

struct BenchResult {
    PointConfig config;
    Status status = Status::Ok;  // never Unsupported
    std::string error;           // the message for OOM / Failed
    int64_t oom_bytes = 0;       // bytes the failed allocation asked for, when known
    int64_t parameter_count = 0;
    std::vector<StepSample> steps;              // warm-up and measured, in order
    Stats forward, backward, optimizer, total;  // over measured steps only
    int64_t peak_memory = 0;                    // bytes, over the whole run (0 on the CPU)
    // The first step's wall time, synchronised: under torch.compile (or our compiled mode) it
    // holds the compilation, which the steps' statistics leave out (0: not measured).
    double first_step_ms = 0;
    Environment environment;
};
// The compilation's share of the first step: its wall time less a measured step's mean, in
// seconds; nullopt for an eager point or one without the first step's time.
std::optional<double> compileSeconds(const BenchResult& r);

// Recomputes the four Stats of `r` from its measured (non-warm-up) steps.
void summarize(BenchResult& r);

// A result's model throughput: forward + backward FLOPs over their mean measured time, as
// TFLOP/s, and its share of the device's dense peak (nullopt: unknown GPU, the CPU, or no time).
std::optional<double> achievedTflops(const BenchResult& r);
std::optional<double> peakShare(const BenchResult& r);  // 0..1

// Note [noisy measurement]: a result whose step time varies by more than kNoisyCv (its
// coefficient of variation over the measured steps) is flagged, with the likely cause, read from
// the result itself: too few measured steps to average out anything; steps so short on a GPU
// that the CPU's kernel launches set the pace (launch-bound: host jitter shows in every step);
// a few steps far slower than the median (outliers: other load on the device or the host); a
// CPU run (shared cores, frequency scaling); otherwise a steady spread.
inline constexpr double kNoisyCv = 0.05;
struct NoiseFlag {
    double cv = 0;
    std::string cause;  // "too few steps (3 measured)", "launch-bound (12.4 ms steps)", ...
};
// nullopt when the measurement is steady (CV ≤ 5%) or there is none.
std::optional<NoiseFlag> noiseFlag(const BenchResult& r);
// "CV 12%: launch-bound (…)", or "" when steady.
std::string noiseText(const BenchResult& r);

class BenchObserver : public Observer {
public:
    // A sweep point starts: `index` of `count` (0-based).
    virtual void pointStarted(int /*index*/, int /*count*/, const PointConfig& /*config*/) {}
    // Every step as it finishes, warm-up steps included.
    virtual void stepFinished(int /*index*/, const StepSample& /*sample*/) {}
    // A point is done (whatever its status); it has been stored when a store is in use.
    virtual void pointFinished(int /*index*/, const BenchResult& /*result*/) {}
};

// Runs one point. Never throws for a run-time failure: an out-of-memory becomes status OOM
// (its memory released), any other error status Failed with the message, a cancel status
// Cancelled with the steps measured so far. Invalid configurations are reported as Failed
// with the validation messages; callers should validate first for a better message.
BenchResult runBenchmark(const PointConfig& config, BenchObserver& observer,
                         const CancelToken& cancel, int point_index = 0, int point_count = 1);

// Runs the points in order. Each finished point goes to `store` (when given, under `run_id`)
// before the next starts, so a crash or kill loses no finished point. Stops early when
// cancelled; returns the results of the points that ran.
std::vector<BenchResult> runSweep(const std::vector<PointConfig>& points, BenchObserver& observer,
                                  const CancelToken& cancel, ResultStore* store = nullptr,
                                  int64_t run_id = 0);

// The run as asked for, stored with it: the base point and the number of points.
std::string benchSpecJson(const SweepSpec& spec, size_t point_count);

}  // namespace ts
