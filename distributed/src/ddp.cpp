#include "trainscope/distributed/ddp.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "dtype_groups.h"
#include "gradient_views.h"
#include "trainscope/distributed/buckets.h"

namespace ts::dist {

GradientSync::~GradientSync() = default;

void GradientSync::beforeBackward() {
    counters_ = SyncCounters{};
    step_works_.clear();
}

void GradientSync::enableTiming(const Group& group) {
    timed_ = false;
    // Captured: the events NCCL records inside a capture cannot be timed (see setCaptured()).
    if (captured_ || !group.backend || group.backend->getBackendName() == "gloo") return;
    try {
        group.backend->enableCollectivesTiming();
        timed_ = true;
    } catch (const std::exception&) {
        // A backend without timing: deviceCommMs() stays negative.
    }
}

c10::intrusive_ptr<c10d::Work> GradientSync::record(c10::intrusive_ptr<c10d::Work> work) {
    if (timed_) step_works_.push_back(work);
    return work;
}

double GradientSync::deviceCommMs() const {
    if (!timed_ || step_works_.empty()) return -1;
    double total = 0;
    try {
        for (const auto& w : step_works_) total += w->getDuration();
    } catch (const std::exception&) {
        return -1;
    }
    return total;
}

namespace {

using Clock = std::chrono::steady_clock;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

double msBetween(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

int64_t bytesOf(const at::Tensor& t) { return t.numel() * static_cast<int64_t>(t.element_size()); }

// The gradient of `p`, a zero one when backward gave it none (so every rank makes the same calls).
at::Tensor& gradOrZero(const at::Tensor& p) {
    at::Tensor& g = const_cast<at::Tensor&>(p).mutable_grad();
    if (!g.defined()) g = at::zeros_like(p, at::MemoryFormat::Contiguous);
    return g;
}

// Note [hidden communication]: each collective's span runs from its launch (host clock) to its
// future's completion callback. Gloo completes the future on its worker thread once the
// reduction is done, so the union of the spans before afterBackward() began is the time
// communication ran hidden behind backward. NCCL completes its futures at enqueue time (the
// data dependency is carried by CUDA streams), so its spans say nothing and are not used; there
// the engine estimates the hidden part from the collectives' device time (deviceCommMs(), NCCL's
// own CUDA events) less the time the compute stream waited after backward.
class CommLog {
public:
    void reset(const Group& group) {
        spans_.clear();
        measurable_ = group.backend && group.backend->getBackendName() == "gloo";
    }
    // Records the span of `work` launched now; returns it.
    WorkPtr track(WorkPtr work) {
        auto done = std::make_shared<std::atomic<int64_t>>(0);
        spans_.push_back({Clock::now(), done});
        if (measurable_) {
            try {
                work->getFuture()->addCallback([done](c10::ivalue::Future&) {
                    done->store(Clock::now().time_since_epoch().count(), std::memory_order_release);
                });
            } catch (const std::exception&) {
                measurable_ = false;  // a backend without futures
            }
        }
        return work;
    }
    void syncStarted() { sync_start_ = Clock::now(); }
    // The union of the spans launched before syncStarted(), cut there; -1 when not measurable.
    double hiddenMs() const {
        if (!measurable_) return -1;
        std::vector<std::pair<Clock::time_point, Clock::time_point>> cut;
        for (const auto& s : spans_) {
            if (s.launch >= sync_start_) continue;
            const int64_t d = s.done->load(std::memory_order_acquire);
            Clock::time_point end = sync_start_;
            if (d != 0) end = std::min(end, Clock::time_point(Clock::duration(d)));
            if (end > s.launch) cut.emplace_back(s.launch, end);
        }
        std::sort(cut.begin(), cut.end());
        double total = 0;
        Clock::time_point open{}, close{};
        bool any = false;
        for (const auto& [a, b] : cut) {
            if (!any || a > close) {
                if (any) total += msBetween(open, close);
                open = a;
                close = b;
                any = true;
            } else {
                close = std::max(close, b);
            }
        }
        if (any) total += msBetween(open, close);
        return total;
    }

private:
    struct Span {
        Clock::time_point launch;
        std::shared_ptr<std::atomic<int64_t>> done;
    };
    std::vector<Span> spans_;
    Clock::time_point sync_start_{};
    bool measurable_ = false;
};

// Note [per-bucket timing]: each bucket's all-reduce as a span of the step, per rank: when its
// last gradient was accumulated (ready), when it was issued (launch: c10d matches collectives by
// order, so a ready bucket waits for the ones before it) and when it was done (end), in ms from
// the step's start (stepStarted(), just after the step's first mark). On the CPU (Gloo) these are
// the host's clock: ready and launch when the hooks ran, the end when the work's future completed
// (Gloo completes it on its worker thread once the data is reduced), or, where no callback came,
// when afterBackward()'s wait on the work returned. On a GPU (NCCL) the host's clock says when
// work was queued, not when it ran, so every time is a CUDA event: ready and launch recorded on
// the stream backward runs on (the step's start is an event on the same stream), the end on a
// side stream of our own that is made to wait for the work (work->wait() under a stream guard
// only makes the current stream wait for NCCL's end event) and records right after it. The
// events are read once the step has finished on the device. The gradients' ready times are kept
// too (one event per gradient on a GPU): what the bucket-size model predicts from (see Note
// [bucket-size model] in bucket_model.cpp).
class StepClock {
public:
    struct Stamp {
        Clock::time_point host{};
        std::shared_ptr<c10::Event> event;           // a GPU: recorded on a stream
        std::shared_ptr<std::atomic<int64_t>> done;  // Gloo: the future's completion (0: not yet)
        bool set() const { return event || done || host != Clock::time_point{}; }
    };
    // Each step's start: the events of the step before may be recorded again from here on (its
    // times have been read: timeline() comes before the next step).
    void start(const c10::Device& device) {
        if (device != device_) pool_.clear();
        device_ = device;
        if (device_.is_cuda() && !side_)
            side_ = c10::impl::VirtualGuardImpl(device_.type()).getStreamFromGlobalPool(device_);
        used_ = 0;
        start_ = now();
    }
    // Now: the host's clock, and on a GPU an event on the current stream.
    Stamp now() const {
        Stamp s;
        s.host = Clock::now();
        if (device_.is_cuda()) {
            s.event = nextEvent();
            s.event->record(c10::impl::VirtualGuardImpl(device_.type()).getStream(device_));
        }
        return s;
    }
    // When `work` will be done: on a GPU an event on the side stream after the work; elsewhere
    // its future's completion callback (the caller sets `host` when its wait returns).
    Stamp completion(const WorkPtr& work) const {
        Stamp s;
        if (device_.is_cuda()) {
            s.event = nextEvent();
            {
                c10::StreamGuard guard(*side_);
                work->wait();  // NCCL: the side stream waits on the device, the host does not
            }
            s.event->record(*side_);
            return s;
        }
        auto done = std::make_shared<std::atomic<int64_t>>(0);
        try {
            work->getFuture()->addCallback([done](c10::ivalue::Future&) {
                done->store(Clock::now().time_since_epoch().count(), std::memory_order_release);
            });
            s.done = done;
        } catch (const std::exception&) {
            // A backend without futures: the wait's return is the end.
        }
        return s;
    }
    // ms from the start; once the step's work is done on the device.
    double ms(const Stamp& s) const {
        if (s.event && start_.event) {
            s.event->synchronize();
            return start_.event->elapsedTime(*s.event);
        }
        Clock::time_point t = s.host;
        if (s.done) {
            const int64_t d = s.done->load(std::memory_order_acquire);
            if (d != 0) {
                const Clock::time_point callback{Clock::duration(d)};
                t = t == Clock::time_point{} ? callback : std::min(t, callback);
            }
        }
        return t == Clock::time_point{} ? 0.0 : msBetween(start_.host, t);
    }

private:
    // A step's events come from a pool kept across steps: a step records one per gradient and
    // two per bucket (hundreds at xl), and in a step whose pace is the host's, creating and
    // destroying each of them every step shows (see Note [a bucket's gradients in one copy]).
    std::shared_ptr<c10::Event> nextEvent() const {
        if (used_ == pool_.size())
            pool_.push_back(
                std::make_shared<c10::Event>(device_.type(), c10::EventFlag::BACKEND_DEFAULT));
        return pool_[used_++];
    }

    c10::Device device_{c10::kCPU};
    std::optional<c10::Stream> side_;
    Stamp start_;
    mutable std::vector<std::shared_ptr<c10::Event>> pool_;
    mutable size_t used_ = 0;
};

// A flat buffer holding some parameters' gradients back to back.
struct FlatBuffer {
    at::Tensor data;
    std::vector<int> params;
    std::vector<int64_t> offsets;  // element offset of each parameter in `data`

    FlatBuffer(const std::vector<at::Tensor>& all, std::vector<int> members)
        : params(std::move(members)) {
        int64_t n = 0;
        for (int i : params) {
            offsets.push_back(n);
            n += all[static_cast<size_t>(i)].numel();
        }
        data = at::empty({n}, all[static_cast<size_t>(params.front())].options());
    }
    at::Tensor slot(size_t k, const at::Tensor& like) const {
        return data.narrow(0, offsets[k], like.numel()).view(like.sizes());
    }
    void gather(const std::vector<at::Tensor>& all, size_t k) {
        const at::Tensor& p = all[static_cast<size_t>(params[k])];
        const at::Tensor& g = p.grad();
        if (g.defined())
            slot(k, p).copy_(g);
        else
            slot(k, p).zero_();
    }
    void scatter(const std::vector<at::Tensor>& all) const {
        for (size_t k = 0; k < params.size(); ++k) {
            const at::Tensor& p = all[static_cast<size_t>(params[k])];
            gradOrZero(p).copy_(slot(k, p));
        }
    }
};

WorkPtr allreduce(const Group& group, at::Tensor& t) {
    std::vector<at::Tensor> ts{t};
    return group.backend->allreduce(ts);
}

// Note [the average in the collective]: the bucketed strategy (and overlap, its one-parameter
// case) summed each bucket and then divided it by the world size once every all-reduce was
// waited for: on the xl of the 2025 table (7.44 GiB of fp32 gradients) that division read and
// wrote every gradient after backward, about 5 ms of every step on an H100, and it was most of
// what the bucket-size model (which takes the division as free) could not predict (predicted
// 0.7 ms of wait after backward, measured 6 ms, at every bucket size). NCCL averages in the
// collective itself (ncclAvg, c10d's ReduceOp::AVG), so there the division is gone; Gloo has no
// average, and its buckets are still summed and divided.
bool averagesInTheCollective(const Group& group) {
    return group.backend->getBackendName() == "nccl";
}

WorkPtr allreduceAverage(const Group& group, at::Tensor& t) {
    std::vector<at::Tensor> ts{t};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::AVG;
    return group.backend->allreduce(ts, options);
}

// Calls `ready(index)` from autograd when a parameter's gradient has been accumulated.
class ReadyHook final : public torch::autograd::PostAccumulateGradHook {
public:
    ReadyHook(std::function<void(int)> ready, int index)
        : ready_(std::move(ready)), index_(index) {}
    void operator()(const torch::autograd::Variable&) override { ready_(index_); }

private:
    std::function<void(int)> ready_;
    int index_;
};

// The overlapped strategies' common part: a hook on every parameter, removed on destruction.
class HookedSync : public GradientSync {
public:
    ~HookedSync() override {
        for (const auto& p : params_) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
    }

protected:
    void installHooks() {
        for (size_t i = 0; i < params_.size(); ++i)
            torch::autograd::impl::set_post_acc_grad_hooks(
                params_[i],
                std::make_unique<ReadyHook>([this](int k) { onReady(k); }, static_cast<int>(i)));
    }
    virtual void onReady(int index) = 0;

    Group group_;
    std::vector<at::Tensor> params_;
    CommLog log_;
    std::mutex mutex_;  // hooks run on autograd's threads
};

// One blocking all-reduce per gradient after backward, as the course's first version writes it.
class NaiveSync final : public GradientSync {
public:
    std::string name() const override { return "naive"; }
    void prepare(const Group& group, const std::vector<at::Tensor>& params) override {
        group_ = group;
        params_ = params;
        enableTiming(group);
    }
    void afterBackward() override {
        const auto t0 = Clock::now();
        for (const auto& p : params_) {
            at::Tensor& g = gradOrZero(p);
            record(allreduce(group_, g))->wait();
            g.div_(group_.world_size);
            ++counters_.collectives;
            counters_.bytes += bytesOf(g);
        }
        counters_.wait_ms = msBetween(t0, Clock::now());
        counters_.hidden_ms = 0;
    }

private:
    Group group_;
    std::vector<at::Tensor> params_;
};

// After backward: every gradient copied into one preallocated flat buffer (one per dtype), one
// all-reduce, averaged, copied back.
class FlatSync final : public GradientSync {
public:
    std::string name() const override { return "flat"; }
    void prepare(const Group& group, const std::vector<at::Tensor>& params) override {
        group_ = group;
        params_ = params;
        enableTiming(group);
        buffers_.clear();
        for (auto& members : groupByDtype(params))
            buffers_.emplace_back(params, std::move(members));
    }
    void afterBackward() override {
        const auto t0 = Clock::now();
        std::vector<WorkPtr> works;
        for (auto& b : buffers_) {
            for (size_t k = 0; k < b.params.size(); ++k) b.gather(params_, k);
            works.push_back(record(allreduce(group_, b.data)));
            ++counters_.collectives;
            counters_.bytes += bytesOf(b.data);
        }
        for (size_t i = 0; i < buffers_.size(); ++i) {
            works[i]->wait();
            buffers_[i].data.div_(group_.world_size);
            buffers_[i].scatter(params_);
        }
        counters_.wait_ms = msBetween(t0, Clock::now());
        counters_.hidden_ms = 0;
    }
    int64_t bufferBytes() const override {
        int64_t n = 0;
        for (const auto& b : buffers_) n += bytesOf(b.data);
        return n;
    }

private:
    Group group_;
    std::vector<at::Tensor> params_;
    std::vector<FlatBuffer> buffers_;
};

// Note [gradients as bucket views]: as in PyTorch's reducer (gradient_as_bucket_view), a bucket
// is one flat tensor and, once the bucket has its gradients, each of its parameters' gradients is
// a view into it: the all-reduce and the division by the world size run on the bucket, the
// optimizer reads the views, and nothing is copied back. How the gradients get into the bucket
// is See Note [a bucket's gradients in one copy]. A gradient replaced after its bucket was filled
// (a backward outside the protocol) is copied into its view after the all-reduces and the view
// put back; counters().gradient_copies says how often.
//
// Note [a bucket's gradients in one copy]: the training step drops its gradients before each
// step (set to none, as optimizer.zero_grad() does) and beforeBackward() leaves them so, so that
// AccumulateGrad keeps each gradient backward gives it as it is, with no kernel. When a bucket's
// last gradient is ready, one batched copy (_foreach_copy_: a launch or two for the whole bucket
// on a GPU) puts them into the bucket, the slots of parameters backward gave no gradient are
// zeroed, every gradient becomes its view, and the all-reduce is launched. Until this commit
// each gradient was its view from backward's start: beforeBackward() zero-filled every bucket and
// AccumulateGrad added each gradient into its view, an add kernel a gradient. On a GPU the
// eager bf16 step of xl waits on the host's launches (docs/BENCHMARKS.md, "where the eager bf16
// DDP step's extra time goes"): one rank of that DDP added 342 launches and 11 ms of
// AccumulateGrad and hook to backward's host thread, against one GPU's step, where AccumulateGrad
// takes the gradient as it is. Between steps the gradients are still views into the same buckets.
// TRAINSCOPE_DDP_FILL=add brings the old way back (zero fills, an add a gradient), so that one
// build can time both in one call (scripts/ddp-overhead-evidence.sh).
//
// The overlapped strategy is the same class with a bucket per parameter (launched as each
// gradient is ready, in reverse registration order), the bucketed one with assignBuckets' buckets.
class BucketedSync final : public HookedSync {
public:
    // bucket_mb <= 0: one parameter per bucket ("overlap").
    BucketedSync(std::string name, double bucket_mb)
        : name_(std::move(name)),
          bucket_bytes_(bucket_mb > 0 ? std::max<int64_t>(
                                            static_cast<int64_t>(bucket_mb * 1024.0 * 1024.0), 1)
                                      : 0) {}
    std::string name() const override { return name_; }
    bool launchesDuringBackward() const override { return true; }
    void prepare(const Group& group, const std::vector<at::Tensor>& params) override {
        group_ = group;
        averaged_ = averagesInTheCollective(group);  // See Note [the average in the collective]
        params_ = params;
        enableTiming(group);
        buckets_.clear();
        where_.assign(params.size(), {0, 0});
        for (const auto& members : groupByDtype(params)) {
            std::vector<std::vector<int>> assigned;
            if (bucket_bytes_ > 0) {
                std::vector<int64_t> bytes;
                for (int i : members) bytes.push_back(bytesOf(params[static_cast<size_t>(i)]));
                assigned =
                    assignBuckets(bytes, bucket_bytes_, std::min(bucket_bytes_, kFirstBucketBytes));
            } else {
                for (int k = static_cast<int>(members.size()) - 1; k >= 0; --k)
                    assigned.push_back({k});
            }
            for (const auto& local : assigned) {
                std::vector<int> global;
                for (int k : local) global.push_back(members[static_cast<size_t>(k)]);
                buckets_.emplace_back(params, global);
                for (size_t k = 0; k < global.size(); ++k)
                    where_[static_cast<size_t>(global[k])] = {buckets_.size() - 1, k};
            }
        }
        views_.clear();
        for (size_t i = 0; i < params.size(); ++i)
            views_.push_back(buckets_[where_[i].first].slot(where_[i].second, params[i]));
        bindViews();
        pending_.assign(buckets_.size(), 0);
        works_.assign(buckets_.size(), WorkPtr());
        launched_.assign(buckets_.size(), {});
        ended_.assign(buckets_.size(), {});
        ready_.assign(params.size(), {});
        installHooks();
    }
    void stepStarted() override {
        std::lock_guard lock(mutex_);
        if (captured_) return;  // no per-bucket times (see setCaptured())
        clock_.start(params_.empty() ? c10::Device(c10::kCPU) : params_.front().device());
        started_ = true;
    }
    void beforeBackward() override {
        GradientSync::beforeBackward();
        std::lock_guard lock(mutex_);
        // A caller without stepStarted() (the protocol's tests): times from backward's start.
        if (!started_ && !captured_ && !params_.empty()) clock_.start(params_.front().device());
        started_ = false;
        std::fill(launched_.begin(), launched_.end(), StepClock::Stamp{});
        std::fill(ended_.begin(), ended_.end(), StepClock::Stamp{});
        std::fill(ready_.begin(), ready_.end(), StepClock::Stamp{});
        // See Note [a bucket's gradients in one copy]
        if (add_into_views_)
            bindViews();
        else
            dropGradients(params_);
        for (size_t b = 0; b < buckets_.size(); ++b)
            pending_[b] = static_cast<int>(buckets_[b].params.size());
        std::fill(works_.begin(), works_.end(), WorkPtr());
        next_ = 0;
        in_backward_ = true;
        log_.reset(group_);
    }
    void afterBackward() override {
        const auto t0 = Clock::now();
        std::lock_guard lock(mutex_);
        TORCH_CHECK(in_backward_, name(), ": afterBackward() without beforeBackward()");
        log_.syncStarted();
        in_backward_ = false;
        // A parameter backward gave no gradient gets a zeroed slot (fill()): every rank still
        // launches every bucket.
        while (next_ < buckets_.size()) launch(next_++);
        for (size_t b = 0; b < buckets_.size(); ++b) {
            works_[b]->wait();  // captured: the current stream waits, and so joins NCCL's back
            if (!captured_ && !ended_[b].event)
                ended_[b].host = Clock::now();  // See Note [per-bucket timing]
            if (!averaged_) buckets_[b].data.div_(group_.world_size);
        }
        for (size_t i = 0; i < params_.size(); ++i) useView(i);  // a gradient replaced since
        counters_.wait_ms = msBetween(t0, Clock::now());
        counters_.hidden_ms = log_.hiddenMs();
    }
    int64_t bufferBytes() const override {
        int64_t n = 0;
        for (const auto& b : buckets_) n += bytesOf(b.data);
        return n;
    }
    SyncTimeline timeline() const override {
        SyncTimeline t;
        if (captured_) return t;  // no per-bucket times (see setCaptured())
        std::vector<double> ready(params_.size(), -1);
        for (size_t i = 0; i < params_.size(); ++i)
            if (ready_[i].set()) ready[i] = clock_.ms(ready_[i]);
        for (size_t b = 0; b < buckets_.size(); ++b) {
            if (!launched_[b].set()) continue;
            BucketSpan s;
            s.index = static_cast<int>(b);
            s.bytes = bytesOf(buckets_[b].data);
            s.params = static_cast<int>(buckets_[b].params.size());
            s.launch_ms = clock_.ms(launched_[b]);
            s.end_ms = std::max(s.launch_ms, clock_.ms(ended_[b]));
            s.ready_ms = 0;
            for (int i : buckets_[b].params) {
                // A gradient backward never gave is as ready as its bucket's launch.
                double& r = ready[static_cast<size_t>(i)];
                if (r < 0) r = s.launch_ms;
                s.ready_ms = std::max(s.ready_ms, r);
            }
            s.ready_ms = std::min(s.ready_ms, s.launch_ms);
            t.buckets.push_back(s);
        }
        for (size_t i = 0; i < params_.size(); ++i)
            t.gradients.push_back({bytesOf(params_[i]), std::max(0.0, ready[i])});
        return t;
    }

private:
    // Zeroed buckets, each gradient its view: the gradients between prepare() and the first step.
    void bindViews() {
        at::NoGradGuard no_grad;
        for (auto& b : buckets_) b.data.zero_();
        for (size_t i = 0; i < params_.size(); ++i)
            const_cast<at::Tensor&>(params_[i]).mutable_grad() = views_[i];
    }
    // Bucket b's gradients into it, each gradient its view (See Note [a bucket's gradients in one
    // copy]).
    void fill(size_t b) { gradientsIntoViews(params_, views_, buckets_[b].params); }
    // The gradient of parameter i back in its view, copied there if it is a tensor of its own.
    void useView(size_t i) {
        counters_.gradient_copies += gradientsIntoViews(params_, views_, {static_cast<int>(i)});
    }
    void onReady(int index) override {
        std::lock_guard lock(mutex_);
        if (!in_backward_) return;
        if (!captured_)
            ready_[static_cast<size_t>(index)] = clock_.now();  // See Note [per-bucket timing]
        --pending_[where_[static_cast<size_t>(index)].first];
        while (next_ < buckets_.size() && pending_[next_] == 0) {
            launch(next_++);
            ++counters_.launched_before_sync;
        }
    }
    void launch(size_t b) {
        fill(b);
        if (!captured_) launched_[b] = clock_.now();
        // See Note [the average in the collective]
        works_[b] = record(log_.track(averaged_ ? allreduceAverage(group_, buckets_[b].data)
                                                : allreduce(group_, buckets_[b].data)));
        // Captured: no side stream may join the capture (See Note [per-bucket timing]).
        if (!captured_) ended_[b] = clock_.completion(works_[b]);
        ++counters_.collectives;
        counters_.bytes += bytesOf(buckets_[b].data);
    }

    std::string name_;
    bool add_into_views_ = fillByAdding();  // See Note [a bucket's gradients in one copy]
    int64_t bucket_bytes_;                  // 0: one parameter per bucket
    bool averaged_ = false;                 // NCCL: no division after backward (set by prepare)
    std::vector<FlatBuffer> buckets_;
    std::vector<std::pair<size_t, size_t>> where_;  // parameter → (bucket, slot)
    std::vector<at::Tensor> views_;                 // parameter → its gradient's view
    std::vector<int> pending_;
    std::vector<WorkPtr> works_;
    size_t next_ = 0;
    bool in_backward_ = false;
    // See Note [per-bucket timing]: this step's times, per bucket and per parameter.
    StepClock clock_;
    bool started_ = false;
    std::vector<StepClock::Stamp> launched_, ended_, ready_;
};

}  // namespace

const std::vector<std::string>& gradientSyncNames() {
    static const std::vector<std::string> names{"naive", "flat", "overlap", "bucketed"};
    return names;
}

std::unique_ptr<GradientSync> makeGradientSync(const std::string& name, double bucket_mb) {
    if (!(bucket_mb > 0) || !std::isfinite(bucket_mb))
        throw std::invalid_argument("bucket size must be a positive number of MiB, not " +
                                    std::to_string(bucket_mb));
    if (name == "naive") return std::make_unique<NaiveSync>();
    if (name == "flat") return std::make_unique<FlatSync>();
    if (name == "overlap") return std::make_unique<BucketedSync>(name, 0.0);
    if (name == "bucketed") return std::make_unique<BucketedSync>(name, bucket_mb);
    std::string valid;
    for (const auto& n : gradientSyncNames()) valid += (valid.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown DDP strategy '" + name + "' (valid: " + valid + ")");
}

void broadcastParameters(const Group& group, const std::vector<at::Tensor>& params) {
    if (group.world_size <= 1 || params.empty()) return;
    at::NoGradGuard no_grad;
    for (const auto& members : groupByDtype(params)) {
        std::vector<at::Tensor> flat_parts;
        for (int i : members)
            flat_parts.push_back(params[static_cast<size_t>(i)].detach().reshape({-1}));
        std::vector<at::Tensor> buffer{at::cat(flat_parts)};
        c10d::BroadcastOptions options;
        options.rootRank = 0;
        group.backend->broadcast(buffer, options)->wait();
        if (group.rank == 0) continue;
        int64_t offset = 0;
        for (int i : members) {
            const at::Tensor& p = params[static_cast<size_t>(i)];
            const_cast<at::Tensor&>(p).copy_(
                buffer[0].narrow(0, offset, p.numel()).view(p.sizes()));
            offset += p.numel();
        }
    }
}

}  // namespace ts::dist
