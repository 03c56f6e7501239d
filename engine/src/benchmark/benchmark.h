// The benchmark lab: end-to-end timing of forward, backward and optimizer step of the
// Transformer LM. Its spec (a point, a sweep), its results (steps, statistics), its observer
// and its runner. Plain value types, no LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/observer.h"
#include "core/result.h"

namespace ts {

class ResultStore;
struct StepTimes;

// The lab's id: the store's run kind, the window's and the presets' name for it.
inline constexpr const char* kBenchLab = "bench";

// The user's code as a point runs it (the Python source): what --code, --optimizer, --python
// and --timeout name.
struct PythonCode {
    std::string code;        // a course checkout's folder, module:callable or path/file.py:callable
    std::string optimizer;   // module:callable taking (params, lr=...); empty: the checkout's AdamW
                             // or torch's
    std::string python;      // the interpreter; empty: the default (runtime/python_runner.h)
    double timeout_s = 600;  // a step (or a compilation) silent this long is stopped
    bool operator==(const PythonCode&) const = default;
};

// One benchmark point: a model, a batch, a precision, an attention implementation, a device.
struct BenchConfig {
    ModelConfig model;
    int64_t batch_size = 4;
    int warmup = 5;  // steps run and recorded but left out of the statistics
    int steps = 10;  // measured steps
    Mode mode = Mode::Train;
    Precision precision = Precision::FP32;
    AttentionImpl attention = AttentionImpl::Naive;
    ExecMode exec = ExecMode::Eager;  // compiled: the step's phases replayed as CUDA graphs
    std::string device = "cpu";       // "cpu", "cuda" or "cuda:N"
    uint64_t seed = 0;
    double learning_rate = 1e-4;  // AdamW, train mode
    // Whose model: TrainScope's, or the user's PyTorch code through the Python runner. For the
    // Python source `attention` is whatever the user's model does (not applied), and the
    // fields below say where the code is and how to run it.
    Source source = Source::TrainScope;
    PythonCode python;

    bool operator==(const BenchConfig&) const = default;
};

// Limits that keep values from overflowing and requests from asking the impossible, each
// named in the message that refuses it.
inline constexpr double kMaxLearningRate = 10.0;   // AdamW's lr: above it a step only diverges
inline constexpr int kMaxSteps = 1'000'000;        // warm-up or measured steps of a point
inline constexpr size_t kMaxSweepPoints = 10'000;  // points of one sweep
inline constexpr double kMaxTensorBytes = 1099511627776.0;  // 2^40: no device holds a bigger tensor

// The biggest fp32 tensor a point allocates, estimated from the shapes (in doubles, so that
// absurd sizes do not overflow): logits, attention scores, an activation or a weight.
struct TensorEstimate {
    std::string name;  // "logits (batch × context × vocab)"
    double bytes = 0;
};
TensorEstimate largestTensor(const BenchConfig& c);
// Why the point's largest tensor cannot fit in a device of `device_memory` bytes (named
// `device_name`), or empty when it may; 0 bytes (unknown, the CPU) never refuses.
std::string deviceMemoryProblem(const BenchConfig& c, int64_t device_memory,
                                const std::string& device_name);
// What a point of TrainScope's model needs at least, in bytes: its fp32 weights, their
// gradients (unless forward mode) and AdamW's two moments (train mode), plus its largest
// tensor; what it needs for the rest (activations) comes on top.
double pointMemoryLowerBound(const BenchConfig& c);
// Why the point cannot fit in the host's `available` bytes (the CPU device: a point that does
// not fit there is ended by the kernel's out-of-memory killer, with the machine), or empty.
// The user's code (the Python source) is not estimated: its model is its own.
std::string hostMemoryProblem(const BenchConfig& c, int64_t available);

// Every problem with a point (model dimensions included); empty if valid. Does not check
// that the device exists: checkBenchRunnable() does. Compiled mode is refused where the step
// cannot be captured (compiledProblem), never run eagerly in its place.
std::vector<std::string> validateBench(const BenchConfig& c);
// Why the point cannot run in compiled mode (empty when it can, or when it is eager).
std::string compiledProblem(const BenchConfig& c);
// Why the point's source cannot run as set (the Python source without --code, a timeout out of
// range); empty when it can.
std::string sourceProblem(const BenchConfig& c);
// Why this machine cannot run the point (runtime/environment.h), empty if it can.
std::vector<std::string> checkBenchRunnable(const BenchConfig& c);

// A sweep: every combination of the listed values, in this nesting order (outermost first):
// size, context length, batch size, precision, attention, mode, execution mode, source, warm-up,
// device. An empty
// list means "the base value". `sizes` holds preset names; "custom" keeps the base model's
// dimensions.
struct SweepSpec {
    BenchConfig base;
    // Which edition's table `sizes` name (Note [two model tables]): "xl" in 2025 is xl-2025.
    ModelTable table = kDefaultModelTable;
    std::vector<std::string> sizes;
    std::vector<int64_t> context_lengths;
    std::vector<int64_t> batch_sizes;
    std::vector<Precision> precisions;
    std::vector<AttentionImpl> attentions;
    std::vector<Mode> modes;
    std::vector<ExecMode> execs;
    std::vector<Source> sources;
    std::vector<int> warmups;
    std::vector<std::string> devices;
};

// The number of points the sweep expands to (saturating at SIZE_MAX).
size_t sweepPointCount(const SweepSpec& spec);
// Expands a sweep into its points. Throws std::invalid_argument naming an unknown size, or a
// sweep of more than kMaxSweepPoints points (counted before anything is expanded).
std::vector<BenchConfig> expandSweep(const SweepSpec& spec);

// One training step as measured. Times in milliseconds; memory in bytes (0 on the CPU).
struct StepSample {
    int index = 0;        // 0-based over warm-up and measured steps together
    bool warmup = false;  // warm-up steps are recorded but not in the statistics
    double forward_ms = 0;
    double backward_ms = 0;   // 0 in forward mode
    double optimizer_ms = 0;  // 0 unless train mode
    double total_ms = 0;
    double loss = 0;
    int64_t memory_allocated = 0;  // after the step
    int64_t memory_reserved = 0;
    int64_t memory_peak = 0;  // peak allocated during the step
};
// A step as TrainingStep::run measured it (defined with the runner, on the LibTorch side).
StepSample stepSample(const StepTimes& t, int index, bool warmup);

struct BenchResult {
    BenchConfig config;
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

// The Python source (the user's code) for any lab that runs a point's steps: `command` of the
// Python runner (runtime/python_runner.h) with `spec` (pythonRunnerSpec, and what the lab
// adds), its steps handed to `on_step`, its other lines (a profile's trace) to `on_other` and its
// result line (what a lab reads besides the status) to `on_result`.
// The outcome: Ok, OOM (a result), Failed (the user's message and traceback, a crash, a hang),
// Cancelled; the "ready" line's model, optimizer and notes are logged as Info.
struct PythonPointOutcome {
    Status status = Status::Ok;
    std::string error;
    int64_t parameter_count = 0;
};
PythonPointOutcome runPythonPoint(const BenchConfig& cfg, const std::string& command,
                                  const nlohmann::json& spec, Observer& obs, int point_index,
                                  const CancelToken& cancel,
                                  const std::function<void(const StepSample&)>& on_step,
                                  const std::function<void(const nlohmann::json&)>& on_other,
                                  const std::function<void(const nlohmann::json&)>& on_result = {});

// Recomputes the four Stats of `r` from its measured (non-warm-up) steps.
void summarize(BenchResult& r);

// ---- FLOPs and the device's peak (the benchmark's and the profiler's throughput) ----
// Model FLOPs of one step from the dimensions (matmuls and attention): forward F, backward 2F,
// the optimizer none; per mode.
struct StepFlops {
    double forward = 0, backward = 0;
    double total() const { return forward + backward; }
};
StepFlops stepFlops(const BenchConfig& cfg);
// The dense (no sparsity) tensor-core peak, TFLOP/s, of a known GPU for a precision (fp32
// runs as TF32 only where LibTorch allows it; we report plain FP32's peak for fp32), or
// nullopt for an unknown GPU or the CPU.
std::optional<double> densePeakTflops(std::string_view device_name, Precision p);
// "41.2 TFLOP/s (62% of H100 SXM bf16 dense peak)", or "41.2 TFLOP/s (unknown GPU)".
std::string achievedText(double flops, double seconds, std::string_view device_name, Precision p);

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
    virtual void pointStarted(int /*index*/, int /*count*/, const BenchConfig& /*config*/) {}
    // Every step as it finishes, warm-up steps included.
    virtual void stepFinished(int /*index*/, const StepSample& /*sample*/) {}
    // A point is done (whatever its status); it has been stored when a store is in use.
    virtual void pointFinished(int /*index*/, const BenchResult& /*result*/) {}
};

// Runs one point. Never throws for a run-time failure: an out-of-memory becomes status OOM
// (its memory released), any other error status Failed with the message, a cancel status
// Cancelled with the steps measured so far. Invalid configurations are reported as Failed
// with the validation messages; callers should validate first for a better message.
BenchResult runBenchmark(const BenchConfig& config, BenchObserver& observer,
                         const CancelToken& cancel, int point_index = 0, int point_count = 1);

// Runs the points in order. Each finished point goes to `store` (when given, under `run_id`)
// before the next starts, so a crash or kill loses no finished point. Stops early when
// cancelled; returns the results of the points that ran.
std::vector<BenchResult> runSweep(const std::vector<BenchConfig>& points, BenchObserver& observer,
                                  const CancelToken& cancel, ResultStore* store = nullptr,
                                  int64_t run_id = 0);

// The run as asked for, stored with it: the base point and the number of points.
std::string benchSpecJson(const SweepSpec& spec, size_t point_count);

}  // namespace ts
