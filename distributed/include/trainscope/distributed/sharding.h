// Optimizer-state sharding, two ways (see Note [two ways to shard the optimizer]): every rank
// keeps the whole model but holds the optimizer's state for its own shard of the parameters only.
// ShardedOptimizer is the course's scheme (each gradient all-reduced by a GradientSync, each
// rank steps the parameters it owns, the owners broadcast them); ReduceScatterSharding is what
// ZeRO stage 1 does (DeepSpeed's, FSDP's SHARD_GRAD_OP without the gradients kept sharded):
// the flat gradients reduce-scattered, each rank steps its slice, the slices all-gathered.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "trainscope/distributed/ddp.h"
#include "trainscope/distributed/process_group.h"

namespace ts::dist {

// The owning rank of each parameter, balanced by size: greedy largest first, each parameter to
// the rank with the fewest bytes so far (ties: the lower rank; equal sizes: the lower index
// first). Within a shard the parameters keep their registration order. No rank holds more than
// the mean plus the largest parameter. Throws std::invalid_argument for world < 1.
std::vector<int> shardParameters(const std::vector<int64_t>& sizes_in_bytes, int world);

class ShardedOptimizer {
public:
    // The optimizer's step over a shard; built once, by the caller's factory (the engine makes
    // its FusedAdamW over the shard and returns its step).
    using LocalStep = std::function<void()>;
    using LocalStepFactory = std::function<LocalStep(std::vector<at::Tensor> shard)>;

    ShardedOptimizer(const Group& group, std::vector<at::Tensor> params,
                     const LocalStepFactory& make_local_step);

    // The local step, then each owner's updated parameters broadcast, in rank order on every
    // rank: large ones in place, small ones packed into bounded buffers (See Note [sharded
    // broadcast]). Every rank must have the averaged gradients.
    void step();

    int ownerOf(size_t index) const { return owner_[index]; }
    const std::vector<at::Tensor>& localShard() const { return shard_; }
    // Bytes of parameters this rank broadcast or received in the last step.
    int64_t lastBroadcastBytes() const { return broadcast_bytes_; }
    // The largest buffer the last step packed small parameters into (the step's only extra
    // memory); 0 when every parameter went in place.
    int64_t lastPackedBytes() const { return packed_bytes_; }

private:
    Group group_;
    std::vector<at::Tensor> params_;
    std::vector<int> owner_;
    std::vector<at::Tensor> shard_;
    LocalStep local_step_;
    std::vector<std::vector<std::vector<int>>>
        by_owner_;  // owner → dtype groups → parameter indices
    int64_t broadcast_bytes_ = 0;
    int64_t packed_bytes_ = 0;
};

// Note [two ways to shard the optimizer]: the course's scheme all-reduces every gradient, so every
// rank receives all of them averaged although it steps only its own parameters, then broadcasts
// what it stepped. A ring all-reduce of G bytes sends 2(N−1)/N·G per rank (a reduce-scatter then
// an all-gather of the sums); the broadcasts of P parameter bytes send (N−1)/N·P per rank on
// average. ZeRO stage 1 keeps only the first half of the all-reduce: a reduce-scatter of the
// flat gradients leaves each rank the averaged slice it steps ((N−1)/N·G), and an all-gather of
// the stepped slices ((N−1)/N·P) replaces the broadcasts: (N−1)/N·G fewer bytes per rank and
// step. Here each dtype's parameters become views into one flat buffer, padded to a multiple of
// N, and their gradients are copied into another after backward, in one batched copy, and are
// views into it from then on (See Note [a bucket's gradients in one copy] in ddp.cpp), so the
// collectives run on the flat buffers and nothing else is copied but the slice sent to the
// all-gather. The slice's optimizer is AdamW over one flat tensor, which is element-wise the
// same as AdamW over the parameters. After afterBackward() a rank holds the averaged gradient of
// its own slice only (the rest of the flat gradient is its local sum).
class ReduceScatterSharding final : public GradientSync {
public:
    using LocalStepFactory = ShardedOptimizer::LocalStepFactory;
    explicit ReduceScatterSharding(LocalStepFactory make_local_step);

    std::string name() const override { return "zero1"; }
    // Makes the parameters views into the flat buffers (their values kept) and builds the slice's
    // optimizer.
    void prepare(const Group& group, const std::vector<at::Tensor>& params) override;
    void beforeBackward() override;
    // The flat gradients reduce-scattered (SUM, then ÷ N on the slice).
    void afterBackward() override;
    // The local step on this rank's slices, then every slice all-gathered into the parameters.
    void step();
    // The flat gradient buffers (the gradients' own storage, as bucket views).
    int64_t bufferBytes() const override;
    // This rank's slices, the tensors its optimizer steps (each with its averaged gradient).
    const std::vector<at::Tensor>& localShard() const { return slices_; }
    // Bytes of whole parameters all-gathered in the last step (the flat buffers, padding too).
    int64_t lastGatherBytes() const { return gather_bytes_; }

private:
    struct Flat {
        std::vector<int> params;
        std::vector<int64_t> offsets;
        at::Tensor values, grads;  // padded to a multiple of the world size
        at::Tensor slice, send;    // this rank's part of values (its gradient: a slice of its own)
    };
    void bindGradients();

    LocalStepFactory make_local_step_;
    ShardedOptimizer::LocalStep local_step_;
    Group group_;
    std::vector<at::Tensor> params_, views_, slices_;
    std::vector<Flat> flats_;
    int64_t gather_bytes_ = 0;
};

}  // namespace ts::dist
