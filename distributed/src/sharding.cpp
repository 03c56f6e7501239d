#include "trainscope/distributed/sharding.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "dtype_groups.h"
#include "gradient_views.h"

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

// Note [sharded broadcast]: the owners' parameters go out in place: a parameter of at least
// kPackBelowBytes is broadcast as it is (its own tensor on the owner, received straight into the
// parameter elsewhere), and only the smaller ones (norm gains, biases) are packed, in order, into
// flat buffers of at most kPackBytes each, so the step allocates at most that much, not a copy of
// the whole model (a flat buffer per owner held the owner's half and received the other half: 8
// GB more at xl's optimizer step, the peak that sharding should have lowered; issue 31 item 1).
// Every broadcast is launched before any is waited for: Gloo and NCCL run them in launch order,
// the same on every rank, since every rank walks the owners and their parameters in one order.
namespace {
constexpr int64_t kPackBelowBytes = int64_t{1} << 20;
constexpr int64_t kPackBytes = int64_t{4} << 20;
}  // namespace

void ShardedOptimizer::step() {
    if (local_step_) local_step_();
    broadcast_bytes_ = 0;
    packed_bytes_ = 0;
    if (group_.world_size <= 1) return;
    at::NoGradGuard no_grad;
    struct Pending {
        std::vector<int> packed;  // the parameters a flat buffer holds (empty: one in place)
        std::vector<at::Tensor> buffer;
        c10::intrusive_ptr<c10d::Work> work;
        bool mine = false;
    };
    std::vector<Pending> pending;
    auto launch = [&](Pending p, int root) {
        c10d::BroadcastOptions options;
        options.rootRank = root;
        p.work = group_.backend->broadcast(p.buffer, options);
        pending.push_back(std::move(p));
    };
    for (int r = 0; r < group_.world_size; ++r) {
        const bool mine = r == group_.rank;
        for (const auto& members : by_owner_[static_cast<size_t>(r)]) {
            std::vector<int> small;
            int64_t small_bytes = 0;
            auto flush = [&] {
                if (small.empty()) return;
                Pending p;
                p.mine = mine;
                int64_t n = 0;
                for (int i : small) n += params_[static_cast<size_t>(i)].numel();
                const auto& first = params_[static_cast<size_t>(small.front())];
                if (mine) {
                    std::vector<at::Tensor> parts;
                    for (int i : small)
                        parts.push_back(params_[static_cast<size_t>(i)].detach().reshape({-1}));
                    p.buffer.push_back(at::cat(parts));
                } else {
                    p.buffer.push_back(at::empty({n}, first.options().requires_grad(false)));
                }
                packed_bytes_ = std::max(packed_bytes_, small_bytes);
                p.packed = std::move(small);
                small.clear();
                small_bytes = 0;
                launch(std::move(p), r);
            };
            for (int i : members) {
                const at::Tensor& param = params_[static_cast<size_t>(i)];
                const int64_t bytes = param.numel() * static_cast<int64_t>(param.element_size());
                broadcast_bytes_ += bytes;
                if (bytes >= kPackBelowBytes && param.is_contiguous()) {
                    Pending p;
                    p.mine = mine;
                    p.buffer.push_back(param.detach());
                    launch(std::move(p), r);
                    continue;
                }
                if (small_bytes + bytes > kPackBytes) flush();
                small.push_back(i);
                small_bytes += bytes;
            }
            flush();
        }
    }
    for (auto& p : pending) {
        p.work->wait();
        if (p.mine || p.packed.empty()) continue;
        int64_t offset = 0;
        for (int i : p.packed) {
            const at::Tensor& param = params_[static_cast<size_t>(i)];
            param.detach().copy_(p.buffer[0].narrow(0, offset, param.numel()).view(param.sizes()));
            offset += param.numel();
        }
    }
}

ReduceScatterSharding::ReduceScatterSharding(LocalStepFactory make_local_step)
    : make_local_step_(std::move(make_local_step)) {}

void ReduceScatterSharding::prepare(const Group& group, const std::vector<at::Tensor>& params) {
    group_ = group;
    params_ = params;
    enableTiming(group);
    at::NoGradGuard no_grad;
    const int64_t world = group.world_size;
    flats_.clear();
    views_.assign(params.size(), at::Tensor());
    slices_.clear();
    for (auto& members : groupByDtype(params)) {
        Flat f;
        f.params = std::move(members);
        int64_t n = 0;
        for (int i : f.params) {
            f.offsets.push_back(n);
            n += params[static_cast<size_t>(i)].numel();
        }
        const int64_t per_rank = (n + world - 1) / world;
        const auto options =
            params[static_cast<size_t>(f.params.front())].options().requires_grad(false);
        f.values = at::zeros({per_rank * world}, options);
        f.grads = at::zeros({per_rank * world}, options);
        for (size_t k = 0; k < f.params.size(); ++k) {
            at::Tensor p = params[static_cast<size_t>(f.params[k])];
            const at::Tensor slot = f.values.narrow(0, f.offsets[k], p.numel()).view(p.sizes());
            slot.copy_(p);
            // The parameter itself (the model's tensor) now lives in the flat buffer.
            p.set_(f.values.storage(), f.offsets[k], p.sizes(), slot.strides());
            views_[static_cast<size_t>(f.params[k])] =
                f.grads.narrow(0, f.offsets[k], p.numel()).view(p.sizes());
        }
        f.slice = f.values.narrow(0, group.rank * per_rank, per_rank).detach();
        f.slice.mutable_grad() = at::empty({per_rank}, options);
        f.send = at::empty({per_rank}, options);
        slices_.push_back(f.slice);
        flats_.push_back(std::move(f));
    }
    bindGradients();
    local_step_ = make_local_step_(slices_);
}

void ReduceScatterSharding::bindGradients() {
    at::NoGradGuard no_grad;
    for (auto& f : flats_) f.grads.zero_();
    for (size_t i = 0; i < params_.size(); ++i)
        const_cast<at::Tensor&>(params_[i]).mutable_grad() = views_[i];
}

void ReduceScatterSharding::beforeBackward() {
    GradientSync::beforeBackward();
    // See Note [a bucket's gradients in one copy] (ddp.cpp): AccumulateGrad keeps what backward
    // gives, and afterBackward() copies each flat buffer's gradients in at once. The buffers'
    // padding past the last parameter was zeroed by prepare() and is never written.
    if (fillByAdding())
        bindGradients();
    else
        dropGradients(params_);
}

void ReduceScatterSharding::afterBackward() {
    const auto t0 = std::chrono::steady_clock::now();
    at::NoGradGuard no_grad;
    // Each flat buffer's gradients in one batched copy, every gradient its view after (See Note
    // [a bucket's gradients in one copy] in ddp.cpp).
    for (const auto& f : flats_) gradientsIntoViews(params_, views_, f.params);
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& f : flats_) {
        at::Tensor out = f.slice.mutable_grad();
        if (group_.world_size == 1) {
            out.copy_(f.grads);
        } else {
            c10d::ReduceScatterOptions opts;
            opts.reduceOp = c10d::ReduceOp::SUM;
            works.push_back(record(group_.backend->_reduce_scatter_base(out, f.grads, opts)));
        }
        ++counters_.collectives;
        counters_.bytes += f.grads.numel() * static_cast<int64_t>(f.grads.element_size());
    }
    for (auto& w : works) w->wait();
    for (auto& f : flats_) f.slice.mutable_grad().div_(group_.world_size);
    counters_.wait_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    counters_.hidden_ms = 0;
}

void ReduceScatterSharding::step() {
    if (local_step_) local_step_();
    gather_bytes_ = 0;
    at::NoGradGuard no_grad;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& f : flats_) {
        gather_bytes_ += f.values.numel() * static_cast<int64_t>(f.values.element_size());
        if (group_.world_size == 1) continue;
        // Gloo's all-gather does not take its input inside its output: the slice goes by a copy.
        f.send.copy_(f.slice);
        works.push_back(record(group_.backend->_allgather_base(f.values, f.send)));
        ++counters_.collectives;
    }
    for (auto& w : works) w->wait();
}

int64_t ReduceScatterSharding::bufferBytes() const {
    int64_t n = 0;
    for (const auto& f : flats_)
        n += f.grads.numel() * static_cast<int64_t>(f.grads.element_size());
    return n;
}

}  // namespace ts::dist
