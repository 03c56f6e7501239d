#include "trainscope/distributed/fsdp.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/autograd.h>

#include <algorithm>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace ts::dist {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A tensor's storage without its memory (the tensor object, its views and what autograd saved
// stay), and with it again: how a unit's whole weights exist only while gathered.
void freeStorage(const at::Tensor& t) {
    c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
    s->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
    s->set_nbytes(0);
}

void allocateStorage(const at::Tensor& t) {
    c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
    const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
    if (s->nbytes() == bytes) return;
    s->set_data_ptr_noswap(s->allocator()->allocate(bytes));
    s->set_nbytes(bytes);
}

c10::Stream currentStream(const c10::Device& device) {
    return c10::impl::VirtualGuardImpl(device.type()).getStream(device);
}

// The gathered weights as a node of the graph: forward hands on the unit's buffer (nothing is
// computed: the all-gather already ran); backward receives the buffer's whole gradient, summed
// by autograd over every use, and reduce-scatters it. The shard gets its gradient in
// finishBackward, not from autograd (the reduce-scatter is still running when this returns).
struct GatheredWeights : public torch::autograd::Function<GatheredWeights> {
    static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                  const at::Tensor& master, int64_t owner,
                                                  int64_t unit) {
        ctx->saved_data["owner"] = owner;
        ctx->saved_data["unit"] = unit;
        (void)master;
        return reinterpret_cast<FullyShardedParameters*>(owner)->slotAliases(
            static_cast<size_t>(unit));
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto* owner = reinterpret_cast<FullyShardedParameters*>(ctx->saved_data["owner"].toInt());
        owner->reduceScatterSlots(static_cast<size_t>(ctx->saved_data["unit"].toInt()), grads);
        return {at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

// The identity on a unit's output whose backward runs before the unit's own: it gathers the
// unit's weights again and issues the previous unit's all-gather.
struct BeforeUnitBackward : public torch::autograd::Function<BeforeUnitBackward> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& out,
                              int64_t owner, int64_t unit) {
        ctx->saved_data["owner"] = owner;
        ctx->saved_data["unit"] = unit;
        return out.view_as(out);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto* owner = reinterpret_cast<FullyShardedParameters*>(ctx->saved_data["owner"].toInt());
        owner->backwardEnter(static_cast<size_t>(ctx->saved_data["unit"].toInt()));
        return {grads[0], at::Tensor(), at::Tensor()};
    }
};

}  // namespace

FullyShardedParameters::FullyShardedParameters(const Group& group,
                                               std::vector<std::vector<at::Tensor*>> units,
                                               std::vector<at::Tensor> replicated,
                                               FsdpOptions options)
    : group_(group), options_(options), device_(c10::kCPU), replicated_(std::move(replicated)) {
    if (options_.prefetch < 0)
        throw std::invalid_argument("the prefetch distance must not be negative");
    const int64_t world = group.world_size, rank = group.rank;
    at::NoGradGuard no_grad;
    for (auto& slots : units) {
        Unit u;
        std::vector<at::Tensor> flat;
        for (at::Tensor* slot : slots) {
            if (!slot || !slot->defined())
                throw std::invalid_argument("a unit's weight slot holds no tensor");
            device_ = slot->device();
            u.slots.push_back({slot, slot->sizes().vec(), u.total, slot->numel()});
            u.total += slot->numel();
            flat.push_back(slot->detach().reshape({-1}).to(at::kFloat));
        }
        u.shard = (u.total + world - 1) / world;
        at::Tensor all = at::cat(flat);
        flat.clear();
        const int64_t begin = std::min(rank * u.shard, u.total);
        const int64_t end = std::min(begin + u.shard, u.total);
        u.master = at::zeros({u.shard}, all.options());
        if (end > begin)
            u.master.narrow(0, 0, end - begin).copy_(all.narrow(0, begin, end - begin));
        u.master.requires_grad_(true);
        all = at::Tensor();
        const auto dtype = options_.compute_dtype.value_or(at::kFloat);
        u.buffer = at::empty({u.shard * world}, u.master.options().dtype(dtype));
        freeStorage(u.buffer);
        for (auto& s : u.slots) {
            freeStorage(*s.slot);  // the model's own whole weight: its memory goes now
            *s.slot = at::Tensor();
        }
        units_.push_back(std::move(u));
    }
    if (group.backend && group.backend->getBackendName() != "gloo") {
        try {
            group.backend->enableCollectivesTiming();
            timed_ = true;
        } catch (const std::exception&) {
        }
    }
}

FullyShardedParameters::~FullyShardedParameters() {
    // Collectives still in flight (a step that threw) finish before their tensors go.
    for (auto& u : units_)
        if (u.gather) try {
                u.gather->wait();
            } catch (...) {
            }
    for (auto& p : pending_) try {
            p.work->wait();
        } catch (...) {
        }
}

std::vector<at::Tensor> FullyShardedParameters::parameters() const {
    std::vector<at::Tensor> out;
    for (const auto& u : units_) out.push_back(u.master);
    out.insert(out.end(), replicated_.begin(), replicated_.end());
    return out;
}

int64_t FullyShardedParameters::shardBytes() const {
    int64_t n = 0;
    for (const auto& u : units_) n += u.master.numel() * static_cast<int64_t>(sizeof(float));
    return n;
}

int64_t FullyShardedParameters::replicatedBytes() const {
    int64_t n = 0;
    for (const auto& t : replicated_) n += t.numel() * static_cast<int64_t>(t.element_size());
    return n;
}

int64_t FullyShardedParameters::unitBytes(size_t unit) const {
    const auto& u = units_.at(unit);
    return u.buffer.numel() * static_cast<int64_t>(u.buffer.element_size());
}

int FullyShardedParameters::gatheredCount() const {
    int n = 0;
    for (const auto& u : units_) n += u.state != State::Freed ? 1 : 0;
    return n;
}

void FullyShardedParameters::issueGather(size_t unit) {
    if (unit >= units_.size()) return;
    Unit& u = units_[unit];
    if (u.state != State::Freed) return;
    at::NoGradGuard no_grad;
    allocateStorage(u.buffer);
    u.send =
        options_.compute_dtype ? u.master.detach().to(*options_.compute_dtype) : u.master.detach();
    u.gather = group_.backend->_allgather_base(u.buffer, u.send);
    if (timed_) gather_works_.push_back(u.gather);
    u.state = State::Gathering;
    ++counters_.gathers;
    counters_.gather_bytes += unitBytes(unit);
    counters_.max_units_gathered = std::max(counters_.max_units_gathered, gatheredCount());
}

void FullyShardedParameters::waitGather(size_t unit, bool forward) {
    Unit& u = units_.at(unit);
    if (u.state == State::Freed) issueGather(unit);
    if (u.state != State::Gathering) return;
    if (device_.is_cuda()) {
        // The compute stream waits on the device; the events around its wait say how long.
        WaitEvents w{c10::Event(device_.type(), c10::EventFlag::BACKEND_DEFAULT),
                     c10::Event(device_.type(), c10::EventFlag::BACKEND_DEFAULT), forward};
        w.before.record(currentStream(device_));
        u.gather->wait();
        w.after.record(currentStream(device_));
        waits_.push_back(std::move(w));
    } else {
        const auto t0 = Clock::now();
        u.gather->wait();
        (forward ? counters_.forward_wait_ms : counters_.backward_wait_ms) += msSince(t0);
    }
    u.gather.reset();
    u.send = at::Tensor();
    u.state = State::Ready;
}

std::vector<at::Tensor> FullyShardedParameters::slotAliases(size_t unit) const {
    const Unit& u = units_.at(unit);
    std::vector<at::Tensor> out;
    out.reserve(u.slots.size());
    for (const auto& s : u.slots) {
        // The buffer's storage under a tensor of its own, not a view of the buffer: gathering
        // into the buffer again in backward then changes no version counter autograd checks.
        std::vector<int64_t> strides(s.shape.size(), 1);
        for (size_t d = s.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * s.shape[d];
        at::Tensor alias = at::empty({0}, u.buffer.options());
        alias.set_(u.buffer.storage(), u.buffer.storage_offset() + s.offset, s.shape, strides);
        out.push_back(std::move(alias));
    }
    return out;
}

void FullyShardedParameters::reduceScatterSlots(size_t unit, const std::vector<at::Tensor>& grads) {
    const Unit& u = units_.at(unit);
    at::NoGradGuard no_grad;
    at::ScalarType dtype = u.buffer.scalar_type();
    for (const auto& g : grads)
        if (g.defined()) dtype = g.scalar_type();
    at::Tensor whole = at::empty({u.buffer.numel()}, u.buffer.options().dtype(dtype));
    std::vector<size_t> order(u.slots.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return u.slots[a].offset < u.slots[b].offset; });
    int64_t done = 0;  // what is written: the gaps between slots and the padding are zeros
    for (size_t i : order) {
        const Slot& s = u.slots[i];
        if (s.offset > done) whole.narrow(0, done, s.offset - done).zero_();
        at::Tensor region = whole.narrow(0, s.offset, s.numel);
        if (i < grads.size() && grads[i].defined())
            region.copy_(grads[i].reshape({-1}));
        else
            region.zero_();
        done = std::max(done, s.offset + s.numel);
    }
    if (done < whole.numel()) whole.narrow(0, done, whole.numel() - done).zero_();
    reduceScatter(unit, whole);
}

void FullyShardedParameters::bindSlots(size_t unit) {
    Unit& u = units_[unit];
    const torch::autograd::variable_list slots = GatheredWeights::apply(
        u.master, reinterpret_cast<int64_t>(this), static_cast<int64_t>(unit));
    for (size_t i = 0; i < u.slots.size(); ++i) *u.slots[i].slot = slots[i];
}

void FullyShardedParameters::release(size_t unit) {
    Unit& u = units_[unit];
    if (u.state == State::Gathering) {
        u.gather->wait();
        u.gather.reset();
        u.send = at::Tensor();
    }
    for (auto& s : u.slots) *s.slot = at::Tensor();
    freeStorage(u.buffer);
    u.state = State::Freed;
}

void FullyShardedParameters::beginStep() {
    for (size_t i = 0; i < units_.size(); ++i)
        if (units_[i].state != State::Freed) release(i);
    counters_ = FsdpCounters{};
    gather_works_.clear();
    reduce_works_.clear();
    waits_.clear();
    pending_.clear();
    backward_ = false;
    for (size_t i = 0; i < static_cast<size_t>(options_.prefetch) && i < units_.size(); ++i)
        issueGather(i);
}

void FullyShardedParameters::enter(size_t unit) {
    waitGather(unit, !backward_);
    bindSlots(unit);
}

at::Tensor FullyShardedParameters::leave(size_t unit, const at::Tensor& out) {
    if (!backward_) {
        if (unit + 1 < units_.size()) release(unit);  // backward starts with the last unit
        if (options_.prefetch > 0) issueGather(unit + static_cast<size_t>(options_.prefetch));
    }
    if (!at::GradMode::is_enabled() || !out.requires_grad()) return out;
    return BeforeUnitBackward::apply(out, reinterpret_cast<int64_t>(this),
                                     static_cast<int64_t>(unit));
}

void FullyShardedParameters::beginBackward() { backward_ = true; }

void FullyShardedParameters::backwardEnter(size_t unit) {
    waitGather(unit, /*forward=*/false);
    if (unit > 0) issueGather(unit - 1);
}

void FullyShardedParameters::reduceScatter(size_t unit, const at::Tensor& grad) {
    Unit& u = units_.at(unit);
    at::NoGradGuard no_grad;
    at::Tensor whole = grad.to(u.buffer.scalar_type()).contiguous();
    at::Tensor out = at::empty({u.shard}, whole.options());
    c10d::ReduceScatterOptions opts;
    opts.reduceOp = c10d::ReduceOp::SUM;
    auto work = group_.backend->_reduce_scatter_base(out, whole, opts);
    if (timed_) reduce_works_.push_back(work);
    ++counters_.reduce_scatters;
    counters_.reduce_scatter_bytes += whole.numel() * static_cast<int64_t>(whole.element_size());
    pending_.push_back({unit, std::move(work), std::move(whole), std::move(out)});
    release(unit);
}

void FullyShardedParameters::finishBackward() {
    at::NoGradGuard no_grad;
    const double world = group_.world_size;
    std::vector<bool> reduced(units_.size(), false);
    for (auto& p : pending_) {
        p.work->wait();
        Unit& u = units_[p.unit];
        at::Tensor g = p.out.to(at::kFloat).div_(world);
        if (reduced[p.unit])
            u.master.mutable_grad().add_(g);
        else
            u.master.mutable_grad() = g;
        reduced[p.unit] = true;
    }
    pending_.clear();
    for (size_t i = 0; i < units_.size(); ++i) {
        if (!reduced[i]) units_[i].master.mutable_grad() = at::zeros_like(units_[i].master);
        if (units_[i].state != State::Freed) release(i);
    }
    // The replicated weights: one all-reduce of their gradients, flat.
    if (!replicated_.empty()) {
        std::vector<at::Tensor> grads;
        for (auto& t : replicated_)
            grads.push_back(t.grad().defined() ? t.grad().reshape({-1})
                                               : at::zeros({t.numel()}, t.options()));
        std::vector<at::Tensor> flat{at::cat(grads)};
        group_.backend->allreduce(flat)->wait();
        flat[0].div_(world);
        int64_t offset = 0;
        for (auto& t : replicated_) {
            at::Tensor g = flat[0].narrow(0, offset, t.numel()).view_as(t).clone();
            offset += t.numel();
            t.mutable_grad() = g;
        }
    }
    backward_ = false;
}

std::vector<at::Tensor> FullyShardedParameters::wholeWeights() {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> out;
    for (auto& u : units_) {
        at::Tensor whole = at::empty({u.shard * group_.world_size}, u.master.options());
        at::Tensor shard = u.master.detach().clone();
        group_.backend->_allgather_base(whole, shard)->wait();
        for (const auto& s : u.slots)
            out.push_back(whole.narrow(0, s.offset, s.numel).view(s.shape));
    }
    return out;
}

FsdpCounters FullyShardedParameters::counters() {
    for (auto& w : waits_) {
        w.after.synchronize();
        (w.forward ? counters_.forward_wait_ms : counters_.backward_wait_ms) +=
            w.before.elapsedTime(w.after);
    }
    waits_.clear();
    if (timed_) {
        auto total = [](const std::vector<c10::intrusive_ptr<c10d::Work>>& works) {
            double ms = 0;
            try {
                for (const auto& w : works) ms += w->getDuration();
            } catch (const std::exception&) {
                return -1.0;
            }
            return ms;
        };
        counters_.gather_ms = total(gather_works_);
        counters_.reduce_scatter_ms = total(reduce_works_);
        gather_works_.clear();
        reduce_works_.clear();
    }
    return counters_;
}

}  // namespace ts::dist
