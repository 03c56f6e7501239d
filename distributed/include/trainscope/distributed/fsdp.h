// Fully sharded data parallelism (ZeRO stage 3) at the tensor level, on c10d's all-gather and
// reduce-scatter: each rank keeps 1/N of every unit's weights (and so of their gradients and
// the optimizer's state), gathers a unit's whole weights just before the unit runs and frees
// them after, and reduce-scatters the unit's gradient as soon as backward has made it. The class
// knows the model only as units of weight slots (see Note [parameter units] in
// engine/src/nn/model.h), which it fills with the gathered weights.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Event.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "trainscope/distributed/process_group.h"

namespace ts::dist {

struct FsdpOptions {
    // The dtype the weights are gathered and computed in, and the gradients reduce-scattered
    // in (nullopt: the parameters' own, fp32). The shards stay fp32: the master weights.
    std::optional<at::ScalarType> compute_dtype;
    // Forward: unit i's all-gather is issued once unit i − prefetch has run (2, the course's
    // "after the layer two before the current one has finished"); 0 gathers a unit when it is
    // about to run. Backward always gathers one unit ahead.
    int prefetch = 2;
};

// What one step did on this rank.
struct FsdpCounters {
    int gathers = 0, reduce_scatters = 0;
    int64_t gather_bytes = 0;          // the whole weights this rank received (compute dtype)
    int64_t reduce_scatter_bytes = 0;  // the whole gradients this rank sent in
    int max_units_gathered = 0;        // whole units held at once (the prefetch's cost)
    // How long compute waited for weights that were not yet gathered: device time on a GPU
    // (events on the compute stream around the wait), the host's clock on the CPU. Forward and
    // backward apart: what the prefetch did not hide.
    double forward_wait_ms = 0, backward_wait_ms = 0;
    // The collectives' own device time (NCCL's timing; negative where not measured: Gloo).
    double gather_ms = -1, reduce_scatter_ms = -1;
};

// Note [fully sharded units]:
// A unit's weights are one flat fp32 vector of T elements, padded to N·S (S = ⌈T/N⌉); rank r
// keeps [r·S, (r+1)·S) as a leaf tensor, the optimizer's parameter. Its whole weights live in a
// flat buffer of N·S elements in the compute dtype whose storage is allocated only while gathered
// (the same tensor object all along, so the views autograd saved in forward see the weights again
// when backward gathers them anew). Per step:
//   forward   enter(u): wait for u's all-gather (issue it if it was not prefetched), put a node in
//             the graph whose outputs are the unit's slots (tensors on the buffer's storage at
//             their offsets) and whose backward gets each slot's gradient; leave(u): free u's
//             storage (not the last unit's: backward starts
//             with it), issue the all-gather of u + prefetch, and wrap u's output in a node whose
//             backward runs before u's own;
//   backward  that node gathers u again (if freed) and issues u − 1's all-gather; once autograd
//             has every slot's gradient, they are copied into one flat gradient (a copy each,
//             no zero-filled buffer per slot summed: a slot of a view of the buffer cost a
//             fill and an add of the whole unit each), reduce-scattered (SUM), u's storage freed;
//   after     finishBackward(): waits for the reduce-scatters, gives each shard its gradient (÷ N,
//             in fp32), all-reduces the replicated weights' gradients (÷ N).
// A checkpoint's recompute calls enter/leave again during backward: the unit is gathered and kept
// until its gradient is reduce-scattered. Every rank makes the same collectives in the same order,
// as c10d needs.
class FullyShardedParameters {
public:
    // Shards the units' weights (every rank must hold the same ones: broadcast first) and frees
    // their storage; the slots are left undefined until enter(). `replicated` are the weights no
    // unit holds (their gradients are all-reduced).
    FullyShardedParameters(const Group& group, std::vector<std::vector<at::Tensor*>> units,
                           std::vector<at::Tensor> replicated, FsdpOptions options);
    ~FullyShardedParameters();
    FullyShardedParameters(const FullyShardedParameters&) = delete;
    FullyShardedParameters& operator=(const FullyShardedParameters&) = delete;

    // What the optimizer steps: every unit's shard (fp32), then the replicated weights.
    std::vector<at::Tensor> parameters() const;

    void beginStep();  // before forward: frees what the last step left, issues the first gathers
    void enter(size_t unit);
    at::Tensor leave(size_t unit, const at::Tensor& out);
    void beginBackward();   // before loss.backward()
    void finishBackward();  // after it: every gradient reduced, on its parameter
    // The step's counters; the device times are read once the step's work has finished on the
    // device (after the step's last timer mark was waited for).
    FsdpCounters counters();

    // Every unit's whole fp32 weights, gathered from the shards (a collective: every rank calls
    // it), in unit order and each unit's slot order, in the slots' shapes.
    std::vector<at::Tensor> wholeWeights();

    int64_t shardBytes() const;            // this rank's shards (fp32)
    int64_t replicatedBytes() const;       // the replicated weights
    int64_t unitBytes(size_t unit) const;  // one unit's whole weights in the compute dtype
    size_t unitCount() const { return units_.size(); }

    // Autograd's nodes call these (fsdp.cpp).
    void backwardEnter(size_t unit);
    void reduceScatter(size_t unit, const at::Tensor& grad);
    // The unit's slots as tensors of their own on the buffer's storage, in slot order.
    std::vector<at::Tensor> slotAliases(size_t unit) const;
    // The slots' gradients (in slot order; undefined: zero) as one flat gradient, reduce-scattered.
    void reduceScatterSlots(size_t unit, const std::vector<at::Tensor>& grads);

private:
    enum class State { Freed, Gathering, Ready };
    struct Slot {
        at::Tensor* slot;
        std::vector<int64_t> shape;
        int64_t offset, numel;
    };
    struct Unit {
        std::vector<Slot> slots;
        int64_t total = 0, shard = 0;  // T and S of the note
        at::Tensor master;             // this rank's shard, fp32, a leaf that requires grad
        at::Tensor buffer;             // N·S elements, storage only while gathered
        State state = State::Freed;
        c10::intrusive_ptr<c10d::Work> gather;
        at::Tensor send;  // the shard in the compute dtype, until the gather is done
    };
    struct PendingReduce {
        size_t unit;
        c10::intrusive_ptr<c10d::Work> work;
        at::Tensor grad, out;
    };
    void issueGather(size_t unit);
    void waitGather(size_t unit, bool forward);
    void bindSlots(size_t unit);
    void release(size_t unit);
    int gatheredCount() const;

    const Group& group_;
    FsdpOptions options_;
    c10::Device device_;
    std::vector<Unit> units_;
    std::vector<at::Tensor> replicated_;
    bool backward_ = false;
    bool timed_ = false;
    FsdpCounters counters_;
    std::vector<c10::intrusive_ptr<c10d::Work>> gather_works_, reduce_works_;
    std::vector<PendingReduce> pending_;
    // Device: (before, after) events around each wait, with the phase.
    struct WaitEvents {
        c10::Event before, after;
        bool forward;
    };
    std::vector<WaitEvents> waits_;
};

}  // namespace ts::dist
