// Optimizer-state sharding (ZeRO stage 1): every rank keeps the whole model and averages the
// whole gradient, but holds the optimizer's state for its own shard of the parameters only, steps
// those, and sends the updated values to the other ranks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

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

    // The local step, then each owner's updated parameters as one flat broadcast per owner (and
    // dtype), in rank order on every rank. Every rank must have the averaged gradients.
    void step();

    int ownerOf(size_t index) const { return owner_[index]; }
    const std::vector<at::Tensor>& localShard() const { return shard_; }
    // Bytes of parameters this rank broadcast or received in the last step.
    int64_t lastBroadcastBytes() const { return broadcast_bytes_; }

private:
    Group group_;
    std::vector<at::Tensor> params_;
    std::vector<int> owner_;
    std::vector<at::Tensor> shard_;
    LocalStep local_step_;
    std::vector<std::vector<std::vector<int>>>
        by_owner_;  // owner → dtype groups → parameter indices
    int64_t broadcast_bytes_ = 0;
};

}  // namespace ts::dist
