// One training step of the Transformer LM, as every lab runs it: the model and its fused
// AdamW built on the device, autocast, fp16 loss scaling, a random batch; each step marks its
// phase boundaries on a DeviceTimer (0 before forward, 1 after forward and loss, 2 after
// backward, 3 after the optimizer) and returns the phase times, loss and memory. The
// benchmark times it; the profiler, memory and distributed labs wrap the same step. In
// compiled mode (ExecMode::Compiled, see Note [compiled step] in graphed_step.cpp) the same phases
// of the fused model (see Note [fused model] in model.cpp) are captured once as three CUDA graphs
// and replayed, with the marks between the replays.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/config.h"
#include "nn/model.h"
#include "nn/optimizer.h"

namespace ts {

class DeviceTimer;

struct TrainingSetup {
    ModelConfig model;
    int64_t batch_size = 4;
    Mode mode = Mode::Train;
    Precision precision = Precision::FP32;
    AttentionImpl attention = AttentionImpl::Naive;
    uint64_t seed = 0;
    double learning_rate = 1e-4;
    // Compiled: CUDA only, no fp16 training; hooks captured (see Note [compiled data-parallel
    // step] in graphed_step.cpp), never before_forward.
    ExecMode exec = ExecMode::Eager;
    Checkpointing checkpoint;  // eager only: see Note [activation checkpointing]
    bool fused_loss = false;   // eager only: see Note [fused LM head and loss]
    // Eager: the model's element-wise chains as this project's fused kernels (the compiled
    // mode's model, see Note [fused model] in model.cpp), without CUDA graphs.
    bool fused_kernels = false;
    // With fused_kernels, flash attention and checkpointing: see Note [attention kept through a
    // checkpoint] (nn/fused.h).
    bool keep_attention = false;
    // Compiled, bf16/fp16 autocast: the linears read low-precision weight copies whose gradients
    // are the copies' (compiledUsesWeightCopies()). A data-parallel step turns them off: the
    // gradients its ranks average are the parameters'.
    bool weight_copies = true;
};

// What one step measured. Times in ms; memory in bytes (0 on the CPU).
struct StepTimes {
    double forward_ms = 0, backward_ms = 0, optimizer_ms = 0, total_ms = 0;
    // StepHooks::after_backward, when set (else 0); -1 in compiled mode when it is captured
    // with backward (StepHooks::sync_joins_backward): then inside backward_ms.
    double sync_ms = 0;
    double loss = 0;
    int64_t memory_allocated = 0, memory_reserved = 0, memory_peak = 0;
};

// What a wrapper of the step runs between its phases (the distributed lab: gradient
// synchronisation around backward, a sharded optimizer). Each is optional. In compiled mode the
// hooks are host code that runs in the warm-up steps and once while capturing; what they queue
// on the current stream is captured and replayed, nothing of them runs on the host afterwards
// (see Note [compiled data-parallel step] in graphed_step.cpp).
struct StepHooks {
    std::function<void()> before_forward;   // after mark 0: part of forward's time
    std::function<void()> before_backward;  // after forward and loss, before backward
    // After backward, before the optimizer: a phase of its own, between marks 2 and 4 (the
    // timer then needs 5 marks), reported as StepTimes::sync_ms.
    std::function<void()> after_backward;
    // Replaces the optimizer's step (Train mode). Not with fp16, whose loss scaler steps the
    // whole optimizer.
    std::function<void()> optimizer_step;
    // Compiled mode: after_backward waits for work that before_backward's hooks launched during
    // backward (an overlapped all-reduce), so it is captured in backward's graph: a stream that
    // joins a capture must rejoin it before the capture ends. No phase of its own then
    // (StepTimes::sync_ms is -1).
    bool sync_joins_backward = false;
    // The optimizer optimizer_step steps, when not the step's own (a sharded optimizer's shard):
    // compiled mode saves its state before the warm-up and puts it back after, as the step's
    // own optimizer's, and advances its host step count after each replay.
    FusedAdamW* stepped_optimizer = nullptr;
};

// Whether the compiled mode's model runs the fused kernels (see Note [fused model] in model.cpp):
// yes, unless the environment sets TRAINSCOPE_FUSED=0 (graphs alone, for A/B measurements).
bool compiledUsesFusedKernels();
// And whether, under autocast, its linears read low-precision weight copies that the optimizer
// keeps (see Note [low-precision weight copies] in kernels/src/fused_ops.cu): yes, unless
// TRAINSCOPE_WEIGHT_COPIES=0.
bool compiledUsesWeightCopies();

struct CompiledGraphs;
struct CompiledGraphsDeleter {  // graphed_step.cpp, where CompiledGraphs is complete
    void operator()(CompiledGraphs* g) const;
};

class TrainingStep {
public:
    // Builds everything on `device` with the setup's seed. Throws LibTorch's errors (an
    // out-of-memory among them) as they come; in compiled mode, std::invalid_argument with the
    // reason when the step cannot be captured (not a CUDA device, fp16 training).
    TrainingStep(const TrainingSetup& setup, const c10::Device& device);
    ~TrainingStep() = default;
    TrainingStep(const TrainingStep&) = delete;
    TrainingStep& operator=(const TrainingStep&) = delete;

    // Runs one step; the device's peak-memory counter is reset at its start. In compiled
    // mode the first call warms up and captures the graphs first (outside the marks), leaving
    // weights and optimizer state as they were; every call then replays them.
    StepTimes run(DeviceTimer& timer);

    // From now on, runs with these hooks (empty ones: the plain step). Compiled mode: before the
    // first step, and no before_forward (host code each step).
    void setHooks(StepHooks hooks);
    // From now on, trains on rows [begin, begin + rows) of the batch made at construction (a
    // data-parallel rank's slice of the global batch). Not in compiled mode.
    void useBatchRows(int64_t begin, int64_t rows);
    // From now on, these are the step's parameters: a new optimizer (the same settings, no
    // state) steps them and their gradients are dropped before each step. For a wrapper that
    // owns the model's weights (fully sharded data parallelism: see Note [parameter units]).
    // Eager mode, before the first step.
    void replaceParameters(std::vector<at::Tensor> params);
    // Compiled mode: whether the graphs have been captured (after the first run).
    bool captured() const { return graphs_ != nullptr; }
    // Compiled mode: called with true just before the first graph's capture begins and with
    // false just after the last one's ends (or fails); the profiler records the capture between
    // them (See Note [a graph's kernels named by its capture]).
    void onCapture(std::function<void(bool begins)> f) { on_capture_ = std::move(f); }
    const at::Tensor& inputs() const { return inputs_; }

    TransformerLM& model() { return model_; }
    FusedAdamW& optimizer() { return optimizer_; }
    const std::vector<at::Tensor>& parameters() const { return params_; }

private:
    // The phases, as both modes run them (compiled mode captures exactly these calls).
    at::Tensor forwardAndLoss();
    void backwardPass(const at::Tensor& loss);
    void optimizerStep();
    // Waits for mark 3 and fills the times, loss and memory.
    StepTimes finish(DeviceTimer& timer, const at::Tensor& loss, bool synced);
    StepTimes runCompiled(DeviceTimer& timer);  // graphed_step.cpp
    void capture();                             // graphed_step.cpp

    TrainingSetup setup_;
    c10::Device device_;
    TransformerLM model_;
    std::vector<at::Tensor> params_;
    FusedAdamW optimizer_;
    std::optional<GradScaler> scaler_;
    at::Tensor inputs_, targets_;
    StepHooks hooks_;
    std::unique_ptr<CompiledGraphs, CompiledGraphsDeleter> graphs_;  // compiled mode, once captured
    int64_t capture_peak_ = 0;  // compiled mode: the allocator's peak while capturing (bytes)
    std::function<void(bool)> on_capture_;
};

}  // namespace ts
