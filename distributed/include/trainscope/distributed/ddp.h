// Data-parallel gradient synchronisation at the tensor level: every rank holds the whole model,
// computes gradients on its own slice of the batch, and the ranks average the gradients before
// the optimizer steps, as PyTorch's DistributedDataParallel does (a SUM all-reduce, then a
// division by the world size, in the gradients' own dtype). One small class per strategy behind
// one interface; none of them knows the model, only its parameter tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trainscope/distributed/bucket_model.h"
#include "trainscope/distributed/buckets.h"  // kFirstBucketBytes
#include "trainscope/distributed/process_group.h"

namespace ts::dist {

// What one step's synchronisation did, on this rank. Times are the host's (steady clock).
struct SyncCounters {
    int collectives = 0;  // all-reduces launched this step
    int launched_before_sync =
        0;              // ... of them before afterBackward() began (from the gradient hooks)
    int64_t bytes = 0;  // gradient bytes this rank all-reduced (the payload, not the wire)
    // Gradients replaced after their bucket was filled, copied into their view one by one after
    // the all-reduces (see Note [gradients as bucket views]): 0 in the protocol's steps. The
    // buckets' batched fills (See Note [a bucket's gradients in one copy]) and the flat
    // strategy's copies do not count here.
    int gradient_copies = 0;
    double wait_ms = 0;  // afterBackward(): launching what was left, waiting, averaging
    // How long communication ran while backward still did (the union of the collectives' spans
    // from launch to completion, cut at afterBackward()'s start). Measured from the completion
    // callbacks of the collectives' futures, which Gloo fires when the data has arrived; NCCL's
    // futures complete when the collective is queued on its stream, so there it is not measured
    // here and stays negative (see deviceCommMs()).
    double hidden_ms = -1;
};

// The last step's buckets and gradients in time, in ms from stepStarted() (see Note [per-bucket
// timing] in ddp.cpp); empty for the strategies without buckets (naive, flat, zero1).
struct SyncTimeline {
    std::vector<BucketSpan> buckets;       // in launch order
    std::vector<GradientReady> gradients;  // registration order
};

// Note [gradient sync protocol]: the caller, each step,
//   1. prepare() once, before the first step, with the parameters in registration order;
//   2. beforeBackward() before loss.backward() (resets the counters; the overlapped strategies
//      zero their buckets and make each gradient a view into its bucket again, and their hooks
//      may launch collectives from then on, on autograd's thread);
//   3. afterBackward() after backward returned: every collective launched and waited for, every
//      gradient averaged when it returns.
// PyTorch's reducer needs neither call from its caller: DDP's forward prepares the backward, and
// the first gradient hook queues the end of backward on the autograd engine. Here the step's
// timer measures what backward did not hide as a phase of its own (marks 2 to 4, CUDA events on
// a GPU), and a wait queued inside backward would be timed as backward; so afterBackward() stays
// the caller's, between the marks.
// Collectives must be launched in the same order on every rank (c10d matches them by order), so
// the overlapped strategies launch strictly in a fixed order (reverse registration order, the
// order gradients usually become ready in) and hold back a ready gradient until everything
// before it is ready too. A parameter without a gradient after backward gets a zero gradient, so
// that every rank still makes the same calls.
class GradientSync {
public:
    virtual ~GradientSync();
    virtual std::string name() const = 0;
    // Before prepare(): the step is captured as CUDA graphs and replayed (see Note [compiled
    // data-parallel step] in engine/src/nn/graphed_step.cpp), so the calls run on the host once,
    // at capture: no NCCL timing (deviceCommMs() stays negative), no per-bucket events
    // (timeline() is empty), no host clocks; the counters are the captured step's.
    void setCaptured(bool captured) { captured_ = captured; }
    bool captured() const { return captured_; }
    // Whether afterBackward() waits for collectives launched during backward (the overlapped
    // strategies): a capture must hold both.
    virtual bool launchesDuringBackward() const { return false; }
    virtual void prepare(const Group& group, const std::vector<at::Tensor>& params) = 0;
    // At the step's start (before forward): where the step's bucket times count from.
    virtual void stepStarted() {}
    virtual void beforeBackward();
    virtual void afterBackward() = 0;
    // The last step's buckets and gradients in time. Once the step's work has finished on the
    // device (it waits for the communication's own events).
    virtual SyncTimeline timeline() const { return {}; }
    // The last step's counters (complete after afterBackward()).
    const SyncCounters& counters() const { return counters_; }
    // Bytes of the strategy's own buffers (flat or bucket tensors); 0 for the per-tensor ones.
    virtual int64_t bufferBytes() const { return 0; }
    // The device time of this step's collectives (NCCL, whose collectives run one after another
    // on its stream, timed by its own CUDA events: their sum); negative where the backend has no
    // such times (Gloo). Only once the step's work has finished on the device.
    double deviceCommMs() const;

protected:
    // Every prepare(): asks a backend other than Gloo to time its collectives.
    void enableTiming(const Group& group);
    // Every collective launched this step, for deviceCommMs().
    c10::intrusive_ptr<c10d::Work> record(c10::intrusive_ptr<c10d::Work> work);

    SyncCounters counters_;
    bool captured_ = false;

private:
    std::vector<c10::intrusive_ptr<c10d::Work>> step_works_;
    bool timed_ = false;
};

// "naive", "flat", "overlap", "bucketed". Throws std::invalid_argument naming the valid names
// for an unknown strategy, and for a bucket size that is not positive (checked for every name).
std::unique_ptr<GradientSync> makeGradientSync(const std::string& name, double bucket_mb = 25.0);
const std::vector<std::string>& gradientSyncNames();

// Copies rank 0's parameters to every rank (one broadcast per dtype of a flat buffer), so that
// all ranks start from the same weights. Under no-grad; the tensors are updated in place.
void broadcastParameters(const Group& group, const std::vector<at::Tensor>& params);

}  // namespace ts::dist
