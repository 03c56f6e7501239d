#include "nn/training_step.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "nn/autocast.h"
#include "nn/fused.h"
#include "nn/ranges.h"
#include "runtime/device.h"

namespace ts {

namespace {
at::TensorOptions floatOn(const c10::Device& device, uint64_t seed) {
    at::manual_seed(seed);  // before any random tensor of the step: weights, then the batch
    return at::TensorOptions().device(device).dtype(at::kFloat);
}
}  // namespace

TrainingStep::TrainingStep(const TrainingSetup& setup, const c10::Device& device)
    : setup_(setup),
      device_(device),
      model_(setup.model, setup.attention, floatOn(device, setup.seed)),
      params_(model_->parameters()),
      optimizer_(params_, setup.learning_rate) {
    model_->setCheckpointing(setup.checkpoint);
    if (setup.fused_kernels && setup.exec == ExecMode::Eager) model_->setFused(true);
    if (setup.keep_attention) model_->setKeepAttention(true);
    const auto options = at::TensorOptions().device(device).dtype(at::kFloat);
    if (setup.precision == Precision::FP16 && setup.mode == Mode::Train) scaler_.emplace(options);
    const auto tok = options.dtype(at::kLong);
    const std::vector<int64_t> shape{setup.batch_size, setup.model.context_length};
    inputs_ = at::randint(setup.model.vocab_size, shape, tok);
    targets_ = at::randint(setup.model.vocab_size, shape, tok);
    if (setup.exec == ExecMode::Compiled) {
        // The labs' validation says the same before a point starts (compiledProblem).
        if (const std::string problem =
                capturedStepProblem(device.is_cuda() ? "cuda" : device.str(), setup.precision,
                                    setup.mode == Mode::Train, setup.checkpoint);
            !problem.empty())
            throw std::invalid_argument(problem);
        model_->setFused(compiledUsesFusedKernels());
        if (model_->fused() && setup.precision != Precision::FP32 && setup.weight_copies &&
            compiledUsesWeightCopies()) {
            const auto pairs = model_->makeLowPrecisionCopies(
                setup.precision == Precision::BF16 ? at::kBFloat16 : at::kHalf);
            std::vector<at::Tensor> copies(params_.size());
            for (const auto& [param, copy] : pairs)
                for (size_t i = 0; i < params_.size(); ++i)
                    if (params_[i].is_same(param)) copies[i] = copy;
            optimizer_.setLowPrecisionCopies(std::move(copies));
        }
    }
}

namespace {
// An A/B switch of the compiled mode (docs/BENCHMARKS.md): on unless the variable is "0".
bool switchedOn(const char* variable) {
    const char* env = std::getenv(variable);
    return !(env && std::string(env) == "0");
}
}  // namespace

bool compiledUsesFusedKernels() { return switchedOn("TRAINSCOPE_FUSED"); }
bool compiledUsesWeightCopies() { return switchedOn("TRAINSCOPE_WEIGHT_COPIES"); }

void TrainingStep::setHooks(StepHooks hooks) {
    TORCH_CHECK(!(hooks.optimizer_step && scaler_),
                "an optimizer hook cannot run under fp16 loss scaling");
    // See Note [compiled data-parallel step] in graphed_step.cpp.
    TORCH_CHECK(setup_.exec == ExecMode::Eager || !hooks.before_forward,
                "compiled mode runs no before-forward hook: it would be host code before each "
                "replay");
    TORCH_CHECK(!graphs_, "the hooks of a captured step cannot change");
    hooks_ = std::move(hooks);
}

void TrainingStep::replaceParameters(std::vector<at::Tensor> params) {
    TORCH_CHECK(setup_.exec == ExecMode::Eager && !graphs_,
                "the parameters of a compiled step cannot be replaced");
    TORCH_CHECK(optimizer_.stepCount() == 0, "the parameters are replaced before the first step");
    params_ = std::move(params);
    optimizer_ = FusedAdamW(params_, setup_.learning_rate);
}

void TrainingStep::useBatchRows(int64_t begin, int64_t rows) {
    TORCH_CHECK(!graphs_, "the batch cannot change once the step is captured");
    TORCH_CHECK(begin >= 0 && rows > 0 && begin + rows <= inputs_.size(0), "rows [", begin, ", ",
                begin + rows, ") are not in the batch of ", inputs_.size(0));
    inputs_ = inputs_.narrow(0, begin, rows).contiguous();
    targets_ = targets_.narrow(0, begin, rows).contiguous();
}

// The phases as profiler ranges (see Note [profiler ranges] in model.cpp): the profiler lab
// attributes every op and kernel to one of them.
at::Tensor TrainingStep::forwardAndLoss() {
    TS_RANGE("forward");
    std::optional<at::NoGradGuard> no_grad;
    if (setup_.mode == Mode::Forward) no_grad.emplace();
    AutocastScope autocast(device_.type(), setup_.precision);
    if (setup_.fused_loss) return model_->forwardLoss(inputs_, targets_);
    at::Tensor logits = model_->forward(inputs_);
    at::Tensor loss;
    {
        TS_RANGE("loss");
        loss =
            model_->fused() ? fusedCrossEntropy(logits, targets_) : crossEntropy(logits, targets_);
    }
    return loss;
}

void TrainingStep::backwardPass(const at::Tensor& loss) {
    TS_RANGE("backward");
    (scaler_ ? scaler_->scale(loss) : loss).backward();
}

void TrainingStep::optimizerStep() {
    TS_RANGE("optimizer");
    if (hooks_.optimizer_step)
        hooks_.optimizer_step();
    else if (scaler_)
        scaler_->step(optimizer_, params_);
    else
        optimizer_.step();
}

StepTimes TrainingStep::run(DeviceTimer& timer) {
    if (setup_.exec == ExecMode::Compiled) return runCompiled(timer);
    TORCH_CHECK(!hooks_.after_backward || timer.marks() >= 5,
                "a step with an after-backward hook needs 5 marks");
    resetPeakMemory(device_);
    optimizer_.zeroGrad();
    timer.mark(0);
    if (hooks_.before_forward) hooks_.before_forward();
    const at::Tensor loss = forwardAndLoss();
    timer.mark(1);
    if (setup_.mode != Mode::Forward) {
        if (hooks_.before_backward) hooks_.before_backward();
        backwardPass(loss);
    }
    timer.mark(2);
    const bool synced = hooks_.after_backward && setup_.mode != Mode::Forward;
    if (synced) {
        hooks_.after_backward();
        timer.mark(4);
    }
    if (setup_.mode == Mode::Train) optimizerStep();
    timer.mark(3);
    return finish(timer, loss, synced);
}

// Note [a step's total]: the marks are 0 before forward, 1 after it, 2 after backward, (4 after
// a data-parallel sync,) 3 after the optimizer, recorded in every mode so that eager and compiled
// steps share one timer. A phase the mode does not run is reported as 0, but its interval is not
// empty on the GPU: two events recorded back to back, a few µs (measured 3 µs each on an H100,
// 6 µs for forward mode's two). Ending the total at mark 3 put those into the step, so a
// forward-only step's total exceeded its only phase by 6 µs. The step ends where its last phase
// ends: mark 1 in forward mode, 2 (or 4 after a sync) in forward+backward, 3 in train mode. The
// total is then the sum of its phases up to the events' resolution (about 0.5 µs a reading).
StepTimes TrainingStep::finish(DeviceTimer& timer, const at::Tensor& loss, bool synced) {
    timer.wait(3);
    StepTimes t;
    t.forward_ms = timer.ms(0, 1);
    t.backward_ms = setup_.mode == Mode::Forward ? 0.0 : timer.ms(1, 2);
    t.sync_ms = synced ? timer.ms(2, 4) : 0.0;
    t.optimizer_ms = setup_.mode == Mode::Train ? timer.ms(synced ? 4 : 2, 3) : 0.0;
    const int last = setup_.mode == Mode::Train     ? 3
                     : setup_.mode == Mode::Forward ? 1
                     : synced                       ? 4
                                                    : 2;
    t.total_ms = timer.ms(0, last);
    t.loss = loss.item<double>();
    const MemoryStats m = memoryStats(device_);
    t.memory_allocated = m.allocated;
    t.memory_reserved = m.reserved;
    t.memory_peak = m.peak;
    return t;
}

}  // namespace ts
