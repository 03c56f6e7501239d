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
// other than CUDA, fp16 training (GradScaler is not captured here), a before-forward hook. A
// capture that fails ends the capture and throws with the phase named: never an eager fallback.
// The other step hooks are captured: see Note [compiled data-parallel step].
//
// Note [compiled data-parallel step]: the distributed lab's DDP step (ddp_runner.cpp) in compiled
// mode: the gradient sync and the sharded optimizer are StepHooks, and they are captured with the
// step, NCCL's collectives included, so that a replay is the whole data-parallel step with no
// host code between its kernels.
//  a. What the graphs hold. Forward: as above. Backward: before_backward (the sync's
//     beforeBackward: the gradients dropped, host only and the same every time) and backward,
//     during which the overlapped strategies' gradient hooks fill their buckets and launch their
//     all-reduces on autograd's device thread, whose current stream is the capturing one. Sync, a
//     fourth graph between marks 2 and 4: after_backward (flat: the copies into the flat buffer,
//     the all-reduce, its wait, the division, the copies back; naive: each gradient's; zero1: the
//     reduce-scatter). Optimizer: optimizer_step (sharded: the shard's AdamW then the owners'
//     broadcasts; zero1: the slice's AdamW then the all-gather) or FusedAdamW.
//  b. NCCL under capture (c10d's ProcessGroupNCCL): a collective issued while the current stream
//     captures is not handed to the watchdog; NCCL's stream waits for the current stream through
//     an event, which forks it into the capture, and Work::wait() makes the current stream wait
//     for the work's end event, which joins it back: no host wait (item g on the exception). A
//     capture ends only when every stream it forked has joined it, so a collective is waited
//     for in the capture that launched it: the overlapped strategies (overlap, bucketed) launch
//     during backward and wait in after_backward, so their after_backward is captured in the
//     backward graph (StepHooks::sync_joins_backward) and has no phase of its own.
//  c. Host-side bookkeeping runs once, at capture, and what it recorded stays: the counters
//     (collectives, bytes, launched during backward, broadcast and gathered bytes) are the
//     captured step's, constant by construction. What would be measured per step on the host is
//     off (GradientSync::setCaptured): NCCL's collective timing (events recorded inside a capture
//     cannot be timed), the per-bucket events (their side stream would join the capture and never
//     rejoin it) and the host clocks. So in a compiled row: comm_wait_ms is the sync graph's
//     replay (flat, naive, zero1) or -1 (overlap, bucketed: the communication backward did not
//     hide is inside backward_ms); comm_hidden_ms is 0 for flat, naive and zero1 as in eager and
//     -1 for the overlapped ones; buckets and gradients are empty; memory after forward and
//     after backward are the capture's (the graphs' pool keeps those blocks for the replays).
//  d. Gradients: the buckets are allocated by the sync's prepare(), before capture, and never
//     again; backward's graph allocates the gradients (item 2) and the bucketed strategies copy
//     each bucket's into it in the same graph (See Note [a bucket's gradients in one copy] in
//     distributed/src/ddp.cpp), so every replay fills the buckets afresh. flat and naive read
//     the gradients backward's graph allocates.
//  e. The warm-up steps run the hooks, collectives included: NCCL's communicators are made at a
//     process group's first collective on a device (never during a capture), the sharded
//     optimizer's state exists before capture, and every rank captures the same collectives in
//     the same order (the same host code over the same buckets). The optimizer that steps
//     (StepHooks::stepped_optimizer) has its state saved and put back as the step's own.
//     Before capturing, the device is synchronised, so that no eager collective is still
//     running when a capture begins (item g).
//  f. Low-precision weight copies are off (TrainingSetup::weight_copies): with them the
//     gradients are the copies', which the sync does not see.
//  g. With hooks the graphs are captured in thread-local mode (cudaStreamCaptureModeThreadLocal):
//     in the global mode a call that a capture forbids (an event query) made by any thread
//     invalidates the capture, and NCCL's watchdog thread polls the events of eager collectives
//     on its own schedule. c10d's watchdog makes its queries in thread-local mode itself
//     (LibTorch 2.11's ProcessGroupNCCL.cpp says so where it skips workEnqueue;
//     pytorch/pytorch#148594); this does not depend on it, nor on any other thread of the rank. The
//     capturing thread is still checked; the kernels that autograd's thread and NCCL queue on the
//     capturing streams are captured either way. TORCH_NCCL_BLOCKING_WAIT=1 makes Work::wait() poll
//     from the host: refused (ddp_runner.cpp).
#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "nn/ranges.h"
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
    at::cuda::CUDAGraph forward, backward, sync, optimizer;
    // An after-backward graph of its own: see Note [compiled data-parallel step].
    bool has_sync = false;
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
                 std::optional<c10::MempoolId_t> pool, cudaStreamCaptureMode mode, Work&& work) {
    graph.capture_begin(pool.value_or(c10::MempoolId_t{0, 0}), mode);
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

// An optimizer's state kept in host memory across the warm-up (item 1), put back in place.
class SavedOptimizer {
public:
    explicit SavedOptimizer(FusedAdamW& opt) : opt_(opt), steps_(opt.stepCount()) {
        at::NoGradGuard no_grad;
        for (const auto& s : opt.state()) saved_.push_back(s.to(at::kCPU));
    }
    // State made by the warm-up (the usual case: a fresh step) starts from zero, as the first
    // eager step makes it; state that was there before is put back.
    void restore() {
        at::NoGradGuard no_grad;
        std::vector<at::Tensor> state = opt_.state();
        for (size_t i = 0; i < state.size(); ++i) {
            if (i < saved_.size())
                state[i].copy_(saved_[i]);
            else
                state[i].zero_();
        }
        opt_.setStepCount(steps_);
    }
    void restoreStepCount() { opt_.setStepCount(steps_); }

private:
    FusedAdamW& opt_;
    int64_t steps_;
    std::vector<at::Tensor> saved_;
};

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
    TORCH_CHECK(!scaler_ && !hooks_.before_forward,
                "compiled mode captures no loss scaler and no before-forward hook");
    // Item 1: the state the warm-up changes, kept in host memory (no device memory spent).
    std::vector<at::Tensor> saved_params;
    {
        at::NoGradGuard no_grad;
        for (const auto& p : params_) saved_params.push_back(p.detach().to(at::kCPU));
    }
    std::vector<SavedOptimizer> saved_optimizers;
    saved_optimizers.emplace_back(optimizer_);
    if (hooks_.stepped_optimizer && hooks_.stepped_optimizer != &optimizer_)
        saved_optimizers.emplace_back(*hooks_.stepped_optimizer);
    const bool separate_sync = backward && hooks_.after_backward && !hooks_.sync_joins_backward;
    // Backward as the eager step runs it, with the sync's hooks (see Note [compiled data-parallel
    // step], item a); `joined`: with the after-backward hook too.
    auto backwardWithHooks = [&](const at::Tensor& loss, bool joined) {
        if (hooks_.before_backward) hooks_.before_backward();
        backwardPass(loss);
        if (joined && hooks_.after_backward) hooks_.after_backward();
    };

    const auto current = c10::cuda::getCurrentCUDAStream(device_.index());
    const auto side = c10::cuda::getStreamFromPool(false, device_.index());
    waitFor(side, current);
    std::unique_ptr<CompiledGraphs, CompiledGraphsDeleter> graphs(new CompiledGraphs);
    {
        c10::cuda::CUDAStreamGuard on_side(side);
        for (int i = 0; i < kWarmupSteps; ++i) {
            optimizer_.zeroGrad();
            const at::Tensor loss = forwardAndLoss();
            if (backward) backwardWithHooks(loss, true);
            if (train) optimizerStep();
        }
        {
            at::NoGradGuard no_grad;
            for (size_t i = 0; i < params_.size(); ++i) params_[i].copy_(saved_params[i]);
        }
        for (auto& o : saved_optimizers) o.restore();
        model_->refreshLowPrecisionCopies();  // the copies follow the parameters put back
        optimizer_.zeroGrad();                // item 2: the backward graph allocates them
        side.synchronize();
        // See Note [compiled data-parallel step], item e: no collective of the warm-up still
        // pending (they ran on NCCL's own streams) when a capture begins.
        if (hooks_.after_backward || hooks_.optimizer_step) c10::cuda::device_synchronize();
        // The warm-up's freed activations sit cached for the side stream, where the graphs'
        // private pool cannot use them: give them back before capturing (2.7B in bf16 does not
        // fit twice on an 80 GB GPU).
        at::accelerator::emptyCache();

        AutocastCacheOff cache_off;
        resetPeakMemory(device_);
        // See Note [compiled data-parallel step], item g: with hooks, only this thread's calls are
        // checked during a capture (NCCL's watchdog thread polls events meanwhile).
        const cudaStreamCaptureMode mode = hooks_.after_backward || hooks_.optimizer_step
                                               ? cudaStreamCaptureModeThreadLocal
                                               : cudaStreamCaptureModeGlobal;
        // The profiler's recording of the capture, ended however the capture ends.
        struct CaptureObserved {
            const std::function<void(bool)>& f;
            explicit CaptureObserved(const std::function<void(bool)>& g) : f(g) {
                if (f) f(true);
            }
            ~CaptureObserved() {
                if (f) f(false);
            }
        } observed(on_capture_);
        captureInto(graphs->forward, "forward", std::nullopt, mode,
                    [&] { graphs->loss = forwardAndLoss(); });
        const auto pool = graphs->forward.pool();
        if (backward)
            captureInto(graphs->backward, "backward", pool, mode,
                        [&] { backwardWithHooks(graphs->loss, !separate_sync); });
        if (separate_sync) {
            captureInto(graphs->sync, "gradient sync", pool, mode,
                        [&] { hooks_.after_backward(); });
            graphs->has_sync = true;
        }
        if (train) {
            captureInto(graphs->optimizer, "optimizer step", pool, mode, [&] { optimizerStep(); });
            for (auto& o : saved_optimizers) o.restoreStepCount();  // capturing ran no step
        }
        capture_peak_ = memoryStats(device_).peak;
    }
    waitFor(current, side);
    graphs_ = std::move(graphs);
}

StepTimes TrainingStep::runCompiled(DeviceTimer& timer) {
    if (!graphs_) capture();
    TORCH_CHECK(!graphs_->has_sync || timer.marks() >= 5,
                "a compiled step with a gradient sync of its own needs 5 marks");
    resetPeakMemory(device_);
    timer.mark(0);
    {
        // The phase ranges the eager step has, around each replay (See Note [a graph's kernels
        // named by its capture]).
        TS_RANGE("forward");
        graphs_->forward.replay();
    }
    timer.mark(1);
    if (setup_.mode != Mode::Forward) {
        TS_RANGE("backward");
        graphs_->backward.replay();
    }
    timer.mark(2);
    if (graphs_->has_sync) {
        graphs_->sync.replay();
        timer.mark(4);
    }
    if (setup_.mode == Mode::Train) {
        TS_RANGE("optimizer");
        graphs_->optimizer.replay();
        FusedAdamW& stepped = hooks_.stepped_optimizer ? *hooks_.stepped_optimizer : optimizer_;
        stepped.setStepCount(stepped.stepCount() + 1);
    }
    timer.mark(3);
    StepTimes t = finish(timer, graphs_->loss, graphs_->has_sync);
    if (hooks_.after_backward && hooks_.sync_joins_backward && setup_.mode != Mode::Forward)
        t.sync_ms = -1;  // inside backward's graph (see Note [compiled data-parallel step])
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
