// The compiled execution mode of TrainingStep: the step's forward, backward and optimizer
// captured once as CUDA graphs and replayed.
//
// Note [compiled step]:
// PyTorch's whole-network capture recipe, split into three graphs so that the phases stay
// timed apart:
//  1. Warm-up: three eager steps on a side stream (the current stream waits for it before and
//     after), so that lazily made things exist before capture: cuBLAS handles and workspaces for
//     that stream, the optimizer's state, the autocast and attention backends' first-call work.
//     The weights and the optimizer's state are saved to host memory first and put back
//     afterwards (in place: same storage), so that replay step 1 is eager step 1.
//  2. Gradients: set to none once before capture. The backward graph then allocates them from
//     the graphs' pool and they stay allocated (param.grad keeps them); every replay writes them
//     afresh (AccumulateGrad's first gradient is a copy or a steal, not a sum), so no zeroing
//     kernel runs and the kernels are the eager step's (which sets them to none every step).
//     They must never be set to none or replaced afterwards: the graphs hold their addresses.
//  3. Capture, on the same side stream (its cuBLAS workspace made in warm-up), of (a) forward +
//     loss into a static loss tensor (inputs and targets are static members already), (b)
//     backward of that loss, (c) FusedAdamW's step. One memory pool: (b) and (c) pass (a)'s
//     pool to capture_begin, as make_graphed_callables does; activations (a) saves are freed in
//     (b), and replay follows capture order, so reuse within the pool is safe.
//  4. The optimizer: _fused_adamw_ reads each step counter from the device (bias corrections
//     computed in the kernel) and the counters are advanced by _foreach_add_ on the device, so
//     the step is capturable as it is; lr and betas are constants of the graph. The host's
//     step count is advanced by hand after each replay.
//  5. Autocast's weight-cast cache is off while capturing: a cast cached before capture would be
//     a stale copy of the weights baked into the graph. AutocastScope clears the cache at the
//     end of each forward anyway; this makes it independent of an enclosing scope.
// Then every step is mark 0, replay (a), mark 1, replay (b), mark 2, replay (c), mark 3, on the
// current stream. Replays allocate nothing, so the allocator's peak during a replay would miss
// the activations; the step reports the peak seen while capturing, which is the graphs' own.
// Refused up front (TrainingStep's constructor, compiledProblem in the benchmark): a device
// other than CUDA, fp16 training (GradScaler is not captured here), step hooks. A capture that
// fails ends the capture and throws with the phase named: never an eager fallback.
#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "nn/training_step.h"
#include "runtime/device.h"

#ifdef TRAINSCOPE_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ts {

#ifdef TRAINSCOPE_TORCH_CUDA

struct CompiledGraphs {
    at::cuda::CUDAGraph forward, backward, optimizer;
    at::Tensor loss;  // written by every replay of `forward`
};

namespace {

constexpr int kWarmupSteps = 3;

// Autocast's cast cache off for a scope (item 5: see Note [compiled step]).
class AutocastCacheOff {
public:
    AutocastCacheOff() : prev_(at::autocast::is_autocast_cache_enabled()) {
        at::autocast::set_autocast_cache_enabled(false);
    }
    ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(prev_); }
    AutocastCacheOff(const AutocastCacheOff&) = delete;
    AutocastCacheOff& operator=(const AutocastCacheOff&) = delete;

private:
    bool prev_;
};

// Captures `work` into `graph` on the current stream; a failure ends the capture (so that the
// stream and the allocator leave capture mode) and names the phase.
template <typename Work>
void captureInto(at::cuda::CUDAGraph& graph, const char* phase,
                 std::optional<c10::MempoolId_t> pool, Work&& work) {
    if (pool)
        graph.capture_begin(*pool);
    else
        graph.capture_begin();
    try {
        work();
    } catch (const std::exception& e) {
        try {
            graph.capture_end();
        } catch (const std::exception&) {
            // The capture was invalidated by the failure; ending it is all that was needed.
        }
        throw std::runtime_error(std::string("compiled mode: capturing the ") + phase +
                                 " as a CUDA graph failed: " + e.what());
    }
    graph.capture_end();
}

// `waiter` waits for the work queued so far on `waited`.
void waitFor(const c10::cuda::CUDAStream& waiter, const c10::cuda::CUDAStream& waited) {
    c10::cuda::CUDAEvent event;
    event.record(waited);
    event.block(waiter);
}

}  // namespace

void TrainingStep::capture() {
    const bool backward = setup_.mode != Mode::Forward;
    const bool train = setup_.mode == Mode::Train;
    TORCH_CHECK(
        !scaler_ && !hooks_.before_backward && !hooks_.after_backward && !hooks_.optimizer_step,
        "compiled mode captures the plain step only");

    // Item 1: the state the warm-up changes, kept in host memory (no device memory spent).
    std::vector<at::Tensor> saved_params, saved_state;
    const std::vector<at::Tensor> state_before = optimizer_.state();
    const int64_t steps_before = optimizer_.stepCount();
    {
        at::NoGradGuard no_grad;
        for (const auto& p : params_) saved_params.push_back(p.detach().to(at::kCPU));
        for (const auto& s : state_before) saved_state.push_back(s.to(at::kCPU));
    }

    const auto current = c10::cuda::getCurrentCUDAStream(device_.index());
    const auto side = c10::cuda::getStreamFromPool(false, device_.index());
    waitFor(side, current);
    std::unique_ptr<CompiledGraphs, CompiledGraphsDeleter> graphs(new CompiledGraphs);
    {
        c10::cuda::CUDAStreamGuard on_side(side);
        for (int i = 0; i < kWarmupSteps; ++i) {
            optimizer_.zeroGrad();
            const at::Tensor loss = forwardAndLoss();
            if (backward) backwardPass(loss);
            if (train) optimizerStep();
        }
        {
            at::NoGradGuard no_grad;
            for (size_t i = 0; i < params_.size(); ++i) params_[i].copy_(saved_params[i]);
            // State made by the warm-up (the usual case: a fresh step) starts from zero, as the
            // first eager step makes it; state that was there before is put back.
            std::vector<at::Tensor> state = optimizer_.state();
            for (size_t i = 0; i < state.size(); ++i) {
                if (i < saved_state.size())
                    state[i].copy_(saved_state[i]);
                else
                    state[i].zero_();
            }
        }
        optimizer_.setStepCount(steps_before);
        model_->refreshLowPrecisionCopies();  // the copies follow the parameters put back
        optimizer_.zeroGrad();                // item 2: the backward graph allocates them
        side.synchronize();
        // The warm-up's freed activations sit cached for the side stream, where the graphs'
        // private pool cannot use them: give them back before capturing (2.7B in bf16 does not
        // fit twice on an 80 GB GPU).
        at::accelerator::emptyCache();

        AutocastCacheOff cache_off;
        resetPeakMemory(device_);
        captureInto(graphs->forward, "forward", std::nullopt,
                    [&] { graphs->loss = forwardAndLoss(); });
        const auto pool = graphs->forward.pool();
        if (backward)
            captureInto(graphs->backward, "backward", pool, [&] { backwardPass(graphs->loss); });
        if (train) {
            captureInto(graphs->optimizer, "optimizer step", pool, [&] { optimizerStep(); });
            optimizer_.setStepCount(steps_before);  // capturing ran no step
        }
        capture_peak_ = memoryStats(device_).peak;
    }
    waitFor(current, side);
    graphs_ = std::move(graphs);
}

StepTimes TrainingStep::runCompiled(DeviceTimer& timer) {
    if (!graphs_) capture();
    resetPeakMemory(device_);
    timer.mark(0);
    graphs_->forward.replay();
    timer.mark(1);
    if (setup_.mode != Mode::Forward) graphs_->backward.replay();
    timer.mark(2);
    if (setup_.mode == Mode::Train) {
        graphs_->optimizer.replay();
        optimizer_.setStepCount(optimizer_.stepCount() + 1);
    }
    timer.mark(3);
    StepTimes t = finish(timer, graphs_->loss, false);
    t.memory_peak = std::max(t.memory_peak, capture_peak_);
    return t;
}

#else  // LibTorch without CUDA: nothing to capture.

struct CompiledGraphs {};

void TrainingStep::capture() {
    throw std::invalid_argument("compiled mode captures CUDA graphs: this LibTorch has no CUDA");
}

StepTimes TrainingStep::runCompiled(DeviceTimer&) {
    capture();
    return {};
}

#endif

void CompiledGraphsDeleter::operator()(CompiledGraphs* g) const { delete g; }

}  // namespace ts
