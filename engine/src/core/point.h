// The training point: one step of a model (TrainScope's or the user's Python code) at a
// batch, a precision, an attention implementation, an execution mode, on a device; its
// validation, its memory estimates, its FLOPs and what one measured step holds. Every lab
// that runs training steps (benchmark, profiler, memory) takes a point; none owns it. Plain
// value types, no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"

namespace ts {

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

// Note [activation checkpointing]: which of the model's blocks keep their activations for
// backward. None: all of them. Every k: the blocks run in segments of k, each a checkpoint that
// keeps only its input and runs again, with autograd, during backward (one extra forward of
// every block; the activations of one segment at a time). Sqrt: segments of ⌈√N⌉ blocks (N
// layers). Nested: the N blocks halved recursively, each half a checkpoint of its own, so that
// backward holds about log₂N segment inputs and one block's activations at a time, for about
// log₂N extra forwards (the memory-optimal end of the trade). TrainScope's own model only (the
// user's code checkpoints itself); its text: "none", "2" (every 2 blocks), "sqrt", "nested".
struct Checkpointing {
    enum class Kind { None, Every, Sqrt, Nested };
    Kind kind = Kind::None;
    int every = 0;  // blocks a segment, for Every
    bool operator==(const Checkpointing&) const = default;
};
std::string toString(const Checkpointing& c);
std::optional<Checkpointing> parseCheckpointing(std::string_view s);
// Blocks a segment holds of `layers` (Every, Sqrt: at most `layers`); 0 for None and Nested.
int64_t checkpointSegment(const Checkpointing& c, int64_t layers);

// One training point: a model, a batch, a precision, an attention implementation, a device.
struct PointConfig {
    ModelConfig model;
    int64_t batch_size = 4;
    int warmup = 5;  // steps run and recorded but left out of the statistics
    int steps = 10;  // measured steps
    Mode mode = Mode::Train;
    Precision precision = Precision::FP32;
    AttentionImpl attention = AttentionImpl::Naive;
    ExecMode exec = ExecMode::Eager;  // compiled: the step's phases replayed as CUDA graphs
    Checkpointing checkpoint;         // TrainScope's model: see Note [activation checkpointing]
    // TrainScope's model: the LM head and the loss fused, in chunks of the tokens, the logits
    // never whole (see Note [fused LM head and loss] in nn/model.h); eager only.
    bool fused_loss = false;
    std::string device = "cpu";  // "cpu", "cuda" or "cuda:N"
    uint64_t seed = 0;
    double learning_rate = 1e-4;  // AdamW, train mode
    // Whose model: TrainScope's, or the user's PyTorch code through the Python runner. For the
    // Python source `attention` is whatever the user's model does (not applied), and the
    // fields below say where the code is and how to run it.
    Source source = Source::TrainScope;
    PythonCode python;
    // Not a dimension: how the steps run under Nsight Systems. cudaProfilerStart/Stop around
    // the measured steps on a CUDA device (See Note [capture ranges], runtime/step_ranges.h).
    bool cuda_profiler_range = false;

    bool operator==(const PointConfig&) const = default;
};

// Limits that keep values from overflowing and requests from asking the impossible, each
// named in the message that refuses it.
inline constexpr double kMaxLearningRate = 10.0;   // AdamW's lr: above it a step only diverges
inline constexpr int kMaxSteps = 1'000'000;        // warm-up or measured steps of a point
inline constexpr int kMaxCheckpointEvery = 1'000;  // blocks a checkpoint segment holds
inline constexpr double kMaxTensorBytes = 1099511627776.0;  // 2^40: no device holds a bigger tensor

// The biggest fp32 tensor a point allocates, estimated from the shapes (in doubles, so that
// absurd sizes do not overflow): logits, attention scores, an activation or a weight.
struct TensorEstimate {
    std::string name;  // "logits (batch × context × vocab)"
    double bytes = 0;
};
TensorEstimate largestTensor(const PointConfig& c);
// Why the point's largest tensor cannot fit in a device of `device_memory` bytes (named
// `device_name`), or empty when it may; 0 bytes (unknown, the CPU) never refuses.
std::string deviceMemoryProblem(const PointConfig& c, int64_t device_memory,
                                const std::string& device_name);
// What a point of TrainScope's model needs at least, in bytes: its fp32 weights, their
// gradients (unless forward mode) and AdamW's two moments (train mode), plus its largest
// tensor; what it needs for the rest (activations) comes on top.
double pointMemoryLowerBound(const PointConfig& c);
// Why the point cannot fit in the host's `available` bytes (the CPU device: a point that does
// not fit there is ended by the kernel's out-of-memory killer, with the machine), or empty.
// The user's code (the Python source) is not estimated: its model is its own.
std::string hostMemoryProblem(const PointConfig& c, int64_t available);

// Every problem with a point (model dimensions included); empty if valid. Does not check
// that the device exists: checkPointRunnable() does. Compiled mode is refused where the step
// cannot be captured (compiledProblem), never run eagerly in its place.
std::vector<std::string> validatePoint(const PointConfig& c);
// Why the point cannot run in compiled mode (empty when it can, or when it is eager).
std::string compiledProblem(const PointConfig& c);
// Why a training step of these settings cannot be captured as CUDA graphs, whoever builds it (a
// point's compiledProblem, a DDP spec's, the step itself): a device other than CUDA (`device`
// empty: not checked here), checkpointing's recompute, fp16 training's loss scaling; empty when
// it can be.
std::string capturedStepProblem(std::string_view device, Precision precision, bool training,
                                const Checkpointing& checkpoint);
// Why the point's source cannot run as set (the Python source without --code, a timeout out of
// range); empty when it can.
std::string sourceProblem(const PointConfig& c);
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

// The phases of a step, as TrainingStep names its ranges; Other is outside them (zeroGrad).
enum class Phase { Forward, Backward, Optimizer, Other };
std::string_view toString(Phase p);  // "forward", "backward", "optimizer", "other"
std::optional<Phase> parsePhase(std::string_view s);
const std::vector<Phase>& allPhases();

// ---- FLOPs and the device's peak (the benchmark's and the profiler's throughput) ----
// Model FLOPs of one step from the dimensions (matmuls and attention): forward F, backward 2F,
// the optimizer none; per mode.
struct StepFlops {
    double forward = 0, backward = 0;
    double total() const { return forward + backward; }
};
StepFlops stepFlops(const PointConfig& cfg);
// The dense (no sparsity) tensor-core peak, TFLOP/s, of a known GPU for a precision (fp32
// runs as TF32 only where LibTorch allows it; we report plain FP32's peak for fp32), or
// nullopt for an unknown GPU or the CPU.
std::optional<double> densePeakTflops(std::string_view device_name, Precision p);
// "41.2 TFLOP/s (62% of H100 SXM bf16 dense peak)", or "41.2 TFLOP/s (unknown GPU)".
std::string achievedText(double flops, double seconds, std::string_view device_name, Precision p);

}  // namespace ts
