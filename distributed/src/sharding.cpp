#include "trainscope/distributed/sharding.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "dtype_groups.h"

namespace ts::dist {

std::vector<int> shardParameters(const std::vector<int64_t>& sizes_in_bytes, int world) {
    if (world < 1)
        throw std::invalid_argument("world size must be at least 1, not " + std::to_string(world));
    std::vector<int> by_size(sizes_in_bytes.size());
    std::iota(by_size.begin(), by_size.end(), 0);
    std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
        return sizes_in_bytes[static_cast<size_t>(a)] > sizes_in_bytes[static_cast<size_t>(b)];
    });
    std::vector<int64_t> load(static_cast<size_t>(world), 0);
    std::vector<int> owner(sizes_in_bytes.size(), 0);
    for (int i : by_size) {
        const auto least =
            std::min_element(load.begin(), load.end()) - load.begin();  // first minimum: lower rank
        owner[static_cast<size_t>(i)] = static_cast<int>(least);
        load[static_cast<size_t>(least)] += sizes_in_bytes[static_cast<size_t>(i)];
    }
    return owner;
}

ShardedOptimizer::ShardedOptimizer(const Group& group, std::vector<at::Tensor> params,
                                   const LocalStepFactory& make_local_step)
    : group_(group), params_(std::move(params)) {
    std::vector<int64_t> bytes;
    for (const auto& p : params_)
        bytes.push_back(p.numel() * static_cast<int64_t>(p.element_size()));
    owner_ = shardParameters(bytes, group_.world_size);
    by_owner_.resize(static_cast<size_t>(group_.world_size));
    for (int r = 0; r < group_.world_size; ++r) {
        std::vector<int> mine;
        for (size_t i = 0; i < params_.size(); ++i)
            if (owner_[i] == r) mine.push_back(static_cast<int>(i));
        if (r == group_.rank)
            for (int i : mine) shard_.push_back(params_[static_cast<size_t>(i)]);
        by_owner_[static_cast<size_t>(r)] = groupByDtype(params_, mine);
    }
    local_step_ = make_local_step(shard_);
}

void ShardedOptimizer::step() {
    if (local_step_) local_step_();
    broadcast_bytes_ = 0;
    if (group_.world_size <= 1) return;
    at::NoGradGuard no_grad;
    // Note [sharded broadcast]: one flat buffer per owner and dtype, all broadcasts launched
    // before any is waited for (Gloo and NCCL run them in launch order, the same on every rank);
    // the receivers copy the values back into their parameters afterwards.
    struct Pending {
        const std::vector<int>* members;
        std::vector<at::Tensor> buffer;
        c10::intrusive_ptr<c10d::Work> work;
        bool mine;
    };
    std::vector<Pending> pending;
    for (int r = 0; r < group_.world_size; ++r)
        for (const auto& members : by_owner_[static_cast<size_t>(r)]) {
            Pending p{&members, {}, {}, r == group_.rank};
            int64_t n = 0;
            for (int i : members) n += params_[static_cast<size_t>(i)].numel();
            const auto& first = params_[static_cast<size_t>(members.front())];
            if (p.mine) {
                std::vector<at::Tensor> parts;
                for (int i : members)
                    parts.push_back(params_[static_cast<size_t>(i)].detach().reshape({-1}));
                p.buffer.push_back(at::cat(parts));
            } else {
                p.buffer.push_back(at::empty({n}, first.options().requires_grad(false)));
            }
            broadcast_bytes_ += n * static_cast<int64_t>(first.element_size());
            c10d::BroadcastOptions options;
            options.rootRank = r;
            p.work = group_.backend->broadcast(p.buffer, options);
            pending.push_back(std::move(p));
        }
    for (auto& p : pending) {
        p.work->wait();
        if (p.mine) continue;
        int64_t offset = 0;
        for (int i : *p.members) {
            const at::Tensor& param = params_[static_cast<size_t>(i)];
            param.detach().copy_(p.buffer[0].narrow(0, offset, param.numel()).view(param.sizes()));
            offset += param.numel();
        }
    }
}

}  // namespace ts::dist
