// The memory lab's runner: warm-up steps, then K steps of the same TrainingStep with the CUDA
// caching allocator's history on. Our own context recorder tags every alloc and free with
// the step's phase, the model's ranges and the innermost op (see Note [allocation context]); the
// allocator's snapshot then becomes a torch-free RawMemoryTrace, with the exact storage of the
// parameters, gradients and AdamW's state beside it. The OOM frontier runs one step per probe
// and takes an out-of-memory as its answer.
#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/record_function.h>
#include <c10/core/DeviceGuard.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

#ifdef TRAINSCOPE_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/profiler/unwind/unwind.h>
#endif

#include "core/point_json.h"
#include "core/store.h"
#include "memory/memory.h"
#include "memory/memory_json.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "runtime/nvml.h"
#include "runtime/point_run.h"
#include "runtime/python_runner.h"
#include "runtime/step_ranges.h"

namespace ts {
namespace {

// The memory lab records eager steps.
TrainingSetup setupOf(const PointConfig& c) {
    TrainingSetup s = trainingSetup(c);
    s.exec = ExecMode::Eager;
    return s;
}

int64_t wallMicros() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The OOM frontier of a spec (TrainScope's model or the user's): bisection over the axis, one
// `probe` of the point at each value; the latest out-of-memory's picture is the frontier's
// (bisection only lowers its smallest OOM). `whose` goes into the log line.
using ProbeFn = std::function<FrontierProbe(const PointConfig&, std::optional<RawMemoryTrace>&)>;
void searchFrontier(const MemorySpec& spec, MemoryObserver& obs, const CancelToken& cancel,
                    MemoryResult& r, std::string_view whose, const ProbeFn& probe) {
    const bool context = spec.frontier == FrontierAxis::Context;
    const int64_t hi = spec.frontier_max > 0 ? spec.frontier_max
                       : context             ? kDefaultContextFrontierMax
                                             : kDefaultBatchFrontierMax;
    obs.log(LogLevel::Info, fmt::format("memory: OOM frontier{} by {} up to {}", whose,
                                        toString(spec.frontier), hi));
    std::optional<RawMemoryTrace> oom_trace;
    r.frontier =
        findFrontier(spec.frontier, context ? 16 : 1, hi, context ? 16 : 1, [&](int64_t v) {
            FrontierProbe p;
            if (cancel.cancelled()) {
                p.status = Status::Cancelled;
                p.error = "cancelled";
                return p;
            }
            PointConfig c = spec.bench;
            (context ? c.model.context_length : c.batch_size) = v;
            std::optional<RawMemoryTrace> trace;
            p = probe(c, trace);
            p.value = v;
            if (trace) oom_trace = std::move(trace);
            obs.frontierProbed(p);
            return p;
        });
    r.frontier->oom_trace = std::move(oom_trace);
}

#ifdef TRAINSCOPE_TORCH_CUDA

namespace alloc = c10::cuda::CUDACachingAllocator;

// The device's used memory as the driver sees it: NVML (loaded at run time, found by the
// device's PCI bus id so that CUDA_VISIBLE_DEVICES cannot mix devices up), else cudaMemGetInfo.
class DriverMemory {
public:
    explicit DriverMemory(int device) {
        char bus[32] = {};
        if (nvml_.ok() && cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess)
            handle_ = nvml_.deviceByBusId(bus);
    }

    int64_t used() const {
        if (auto used = nvml_.usedMemory(handle_)) return *used;
        size_t free = 0, total = 0;
        if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
        return static_cast<int64_t>(total - free);
    }

private:
    Nvml nvml_;
    void* handle_ = nullptr;
};

// Note [allocation context]: the allocator asks its context recorder for a context at every
// alloc and free (RecordContext::ALL). Ours reads what a RecordFunction callback keeps: the
// step's phase (TrainingStep's "forward", "backward", "optimizer" ranges, process-wide, since
// backward's ops run on autograd's thread while the main thread sits in "backward"), and per
// thread the model's ranges ("layer.3", "attention") and the innermost op or autograd node.
// Names are interned, so a context is three integers (and a C++ stack when asked for).
struct Recording {
    std::atomic<int> phase{static_cast<int>(Phase::Other)};
    std::atomic<int> step{-1};
    bool stacks = false;
    std::mutex mutex;  // names and driver samples
    std::unordered_map<std::string, int32_t> ids;
    std::vector<std::string> names;
    DriverMemory* driver = nullptr;
    std::vector<DriverSample> samples;  // time_ns holds wall-clock µs until the trace is read

    int32_t intern(const std::string& name) {
        std::lock_guard lock(mutex);
        auto [it, added] = ids.try_emplace(name, static_cast<int32_t>(names.size()));
        if (added) names.push_back(name);
        return it->second;
    }
    void sample() {
        if (!driver) return;
        const int64_t used = driver->used();
        std::lock_guard lock(mutex);
        samples.push_back({wallMicros(), used});
    }
};
Recording* g_recording =
    nullptr;  // one recording at a time: the allocator's history is process-wide

thread_local std::vector<std::string> t_ranges;
thread_local std::vector<std::string> t_ops;

struct Context : c10::GatheredContext {
    Phase phase = Phase::Other;
    int step = -1;
    int32_t range = -1, op = -1;
    std::vector<void*> frames;
};

std::shared_ptr<c10::GatheredContext> gatherContext() {
    auto c = std::make_shared<Context>();
    Recording* rec = g_recording;
    if (!rec) return c;
    c->phase = static_cast<Phase>(rec->phase.load(std::memory_order_relaxed));
    c->step = rec->step.load(std::memory_order_relaxed);
    if (!t_ranges.empty()) c->range = rec->intern(fmt::format("{}", fmt::join(t_ranges, "/")));
    if (!t_ops.empty()) c->op = rec->intern(t_ops.back());
    if (rec->stacks) c->frames = torch::unwind::unwind();
    return c;
}

std::optional<Phase> phaseRange(std::string_view name) {
    if (name == "forward") return Phase::Forward;
    if (name == "backward") return Phase::Backward;
    if (name == "optimizer") return Phase::Optimizer;
    return std::nullopt;
}

std::unique_ptr<at::ObserverContext> onEnter(const at::RecordFunction& fn) {
    Recording* rec = g_recording;
    if (!rec) return nullptr;
    const char* name = fn.name();
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
        if (auto p = phaseRange(name)) {
            rec->sample();
            rec->phase.store(static_cast<int>(*p));
        } else {
            t_ranges.emplace_back(name);
        }
    } else {
        t_ops.emplace_back(name);
    }
    return nullptr;
}

void onExit(const at::RecordFunction& fn, at::ObserverContext*) {
    Recording* rec = g_recording;
    if (!rec) return;
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
        if (phaseRange(fn.name())) {
            rec->phase.store(static_cast<int>(Phase::Other));
            rec->sample();
        } else if (!t_ranges.empty()) {
            t_ranges.pop_back();
        }
    } else if (!t_ops.empty()) {
        t_ops.pop_back();
    }
}

// Turns the history and our callback on for its lifetime, and both off again whatever
// happens (an out-of-memory in a recorded step).
class HistoryRecorder {
public:
    HistoryRecorder(Recording& rec, size_t max_entries) {
        g_recording = &rec;
        t_ranges.clear();
        t_ops.clear();
        handle_ = at::addGlobalCallback(
            at::RecordFunctionCallback(onEnter, onExit)
                .scopes({at::RecordScope::USER_SCOPE, at::RecordScope::FUNCTION,
                         at::RecordScope::BACKWARD_FUNCTION}));
        alloc::recordHistory(true, gatherContext, max_entries, alloc::RecordContext::ALL,
                             /*clearHistory=*/true, {});
    }
    ~HistoryRecorder() {
        try {
            alloc::recordHistory(false, nullptr, 0, alloc::RecordContext::NEVER,
                                 /*clearHistory=*/true, {});
        } catch (...) {
        }
        at::removeCallback(handle_);
        g_recording = nullptr;
    }
    HistoryRecorder(const HistoryRecorder&) = delete;
    HistoryRecorder& operator=(const HistoryRecorder&) = delete;

private:
    at::CallbackHandle handle_ = 0;
};

constexpr size_t kMaxTraceEntries = 4'000'000;

std::vector<MemorySegment> segmentsOf(const alloc::SnapshotInfo& snap, int device) {
    std::vector<MemorySegment> out;
    for (const auto& s : snap.segments) {
        if (s.device != device) continue;
        MemorySegment m;
        m.addr = s.address;
        m.total_size = static_cast<int64_t>(s.total_size);
        m.stream = reinterpret_cast<uint64_t>(s.stream);
        m.large = s.is_large;
        uint64_t addr = s.address;
        for (const auto& b : s.blocks) {
            m.blocks.push_back({addr, static_cast<int64_t>(b.size),
                                static_cast<int64_t>(b.requested_size), b.allocated});
            addr += b.size;
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::optional<AllocAction> actionOf(alloc::TraceEntry::Action a) {
    using A = alloc::TraceEntry::Action;
    switch (a) {
        case A::ALLOC:
            return AllocAction::Alloc;
        case A::FREE_REQUESTED:
            return AllocAction::FreeRequested;
        case A::FREE_COMPLETED:
            return AllocAction::FreeCompleted;
        case A::SEGMENT_ALLOC:
            return AllocAction::SegmentAlloc;
        case A::SEGMENT_FREE:
            return AllocAction::SegmentFree;
        case A::OOM:
            return AllocAction::Oom;
        default:
            return std::nullopt;  // snapshots, expandable segments' maps
    }
}

// The allocator's trace as ours: times from the first entry, names moved over, C++ stacks
// symbolized once for all their distinct addresses.
void readTrace(const alloc::SnapshotInfo& snap, int device, Recording& rec, RawMemoryTrace& t) {
    t.segments = segmentsOf(snap, device);
    if (static_cast<size_t>(device) >= snap.device_traces.size()) return;
    const auto& entries = snap.device_traces[device];
    const int64_t t0_us = entries.empty() ? 0 : static_cast<int64_t>(entries.front().time_.t_);
    // Stacks deduplicated by their addresses: every step repeats the same few thousand.
    std::map<std::vector<void*>, int32_t> stack_of;
    std::vector<const std::vector<void*>*> with_frames;
    for (const auto& te : entries) {
        auto action = actionOf(te.action_);
        if (!action) continue;
        AllocEvent e;
        e.action = *action;
        e.addr = te.addr_;
        e.size = static_cast<int64_t>(te.size_);
        e.time_ns = (static_cast<int64_t>(te.time_.t_) - t0_us) * 1000;
        e.stream = reinterpret_cast<uint64_t>(te.stream_);
        if (const auto* c = dynamic_cast<const Context*>(te.context_.get())) {
            e.phase = c->phase;
            e.step = c->step;
            e.range = c->range;
            e.op = c->op;
            if (!c->frames.empty()) {
                auto [it, added] =
                    stack_of.try_emplace(c->frames, static_cast<int32_t>(with_frames.size()));
                if (added) with_frames.push_back(&it->first);
                e.stack = it->second;
            }
        }
        t.events.push_back(e);
    }
    {
        std::lock_guard lock(rec.mutex);
        t.names = rec.names;
        for (const auto& s : rec.samples)
            t.driver.push_back({(s.time_ns - t0_us) * 1000, s.used_bytes});
    }
    if (with_frames.empty()) return;
    // Symbolize every distinct address once ("fast": LibTorch's own DWARF reader; dladdr, which
    // names only exported functions, when that fails).
    std::unordered_map<void*, size_t> index;
    std::vector<void*> ips;
    for (const auto* frames : with_frames)
        for (void* ip : *frames)
            if (index.try_emplace(ip, ips.size()).second) ips.push_back(ip);
    std::vector<torch::unwind::Frame> frames;
    try {
        frames = torch::unwind::symbolize(ips, torch::unwind::Mode::fast);
    } catch (const std::exception&) {
        frames = torch::unwind::symbolize(ips, torch::unwind::Mode::dladdr);
    }
    constexpr size_t kMaxFrames = 48;
    for (const auto* addresses : with_frames) {
        std::vector<StackFrame> stack;
        for (void* ip : *addresses) {
            if (stack.size() == kMaxFrames) break;
            const auto& f = frames.at(index.at(ip));
            stack.push_back({f.funcname, f.filename, static_cast<int64_t>(f.lineno)});
        }
        t.stacks.push_back(std::move(stack));
    }
}

// What is live before recording (the trace shows only what changes after) and the bytes
// reserved then.
void readInitial(int dev, RawMemoryTrace& t) {
    at::accelerator::synchronizeDevice(dev);
    const auto before = alloc::snapshot({0, 0}, /*include_traces=*/false);
    for (const auto& s : segmentsOf(before, dev)) {
        t.initial_reserved += s.total_size;
        // Requested bytes, as the trace's alloc entries count them (not the rounded block).
        for (const auto& b : s.blocks)
            if (b.allocated) t.initial.push_back({b.addr, b.requested});
    }
}

void addKnown(std::vector<KnownStorage>& known, const at::Tensor& t, MemoryCategory c, int step) {
    if (!t.defined() || !t.has_storage()) return;
    known.push_back({reinterpret_cast<uint64_t>(t.storage().data()),
                     static_cast<int64_t>(t.storage().nbytes()), c, step});
}

void addGradients(std::vector<KnownStorage>& known, TrainingStep& step, int index) {
    for (const auto& p : step.parameters())
        addKnown(known, p.grad(), MemoryCategory::Gradients, index);
}

void record(const MemorySpec& spec, const c10::Device& device, MemoryObserver& obs,
            const CancelToken& cancel, MemoryResult& r) {
    const PointConfig& cfg = spec.bench;
    c10::OptionalDeviceGuard guard;
    guard.reset_device(device);
    TrainingStep step(setupOf(cfg), device);
    DeviceTimer timer(device, 4);
    ProgressMeter meter(obs);
    const int total = cfg.warmup + spec.record_steps;
    auto cancelled = [&](int i) {
        if (!cancel.cancelled()) return false;
        r.status = Status::Cancelled;
        r.error = i < cfg.warmup ? fmt::format("during warm-up step {} of {}", i + 1, cfg.warmup)
                                 : fmt::format("after {} of {} recorded steps", i - cfg.warmup,
                                               spec.record_steps);
        return true;
    };
    StepRanges ranges(device, cfg.cuda_profiler_range, &obs);
    for (int i = 0; i < cfg.warmup; ++i) {
        if (cancelled(i)) return;
        const auto range = ranges.step(i, true);
        r.steps.push_back(stepSample(step.run(timer), i, true));
        obs.stepFinished(r.steps.back());
        meter.report(i + 1, total);
    }
    const int dev = device.index();
    RawMemoryTrace& t = r.trace;
    t.device = dev;
    readInitial(dev, t);
    for (const auto& p : step.parameters()) addKnown(t.known, p, MemoryCategory::Parameters, -1);
    for (const auto& s : step.optimizer().state())
        addKnown(t.known, s, MemoryCategory::OptimizerState, -1);
    addGradients(t.known, step, -1);  // the last warm-up step's, freed by the first recorded step

    Recording rec;
    rec.stacks = spec.record_stacks;
    DriverMemory driver(dev);
    rec.driver = &driver;
    {
        HistoryRecorder history(rec, kMaxTraceEntries);
        rec.sample();
        // An out-of-memory in a recorded step is kept for after the trace is read: the trace
        // up to the failed allocation (and its oom entry) is what explains it.
        std::exception_ptr failure;
        try {
            for (int i = cfg.warmup; i < total; ++i) {
                if (cancelled(i)) break;  // the recorded steps so far are kept
                rec.step.store(i - cfg.warmup);
                {
                    const auto range = ranges.step(i, false);
                    r.steps.push_back(stepSample(step.run(timer), i, false));
                }
                rec.step.store(-1);
                // Optimizer state is made by the first step when there was no warm-up.
                if (i == 0)
                    for (const auto& s : step.optimizer().state())
                        addKnown(t.known, s, MemoryCategory::OptimizerState, -1);
                addGradients(t.known, step, i - cfg.warmup);
                obs.stepFinished(r.steps.back());
                meter.report(i + 1, total);
            }
            at::accelerator::synchronizeDevice(dev);
            ranges.finish();
        } catch (const std::exception&) {
            failure = std::current_exception();
        }
        rec.step.store(-1);
        rec.sample();
        obs.traceCollected();
        readTrace(alloc::snapshot({0, 0}, /*include_traces=*/true), dev, rec, t);
        if (failure) std::rethrow_exception(failure);
    }
    if (t.events.size() >= kMaxTraceEntries)
        obs.log(LogLevel::Warning,
                fmt::format("memory: the allocator's trace filled its {} entries; the first events "
                            "are lost (record fewer steps)",
                            kMaxTraceEntries));
    for (const auto& p : step.parameters()) {
        r.parameter_bytes += static_cast<int64_t>(p.nbytes());
        if (p.grad().defined()) r.gradient_bytes += static_cast<int64_t>(p.grad().nbytes());
    }
    for (const auto& s : step.optimizer().state())
        r.optimizer_bytes += static_cast<int64_t>(s.nbytes());
}

// Note [the snapshot at an out-of-memory]: the allocator calls its out-of-memory observers
// once it has recorded the oom entry and let go of its lock, before the exception unwinds the
// step and frees its tensors: a snapshot taken there is the memory as it was when the
// allocation failed (what PyTorch's memory_viz documentation does from Python). Observers
// cannot be detached, so one is attached once and armed by each probe.
struct OomCapture {
    int device = 0;
    std::mutex mutex;
    std::optional<alloc::SnapshotInfo> snapshot;
};
std::atomic<OomCapture*> g_oom_capture{nullptr};

void attachOomObserverOnce() {
    static std::once_flag once;
    std::call_once(once, [] {
        alloc::attachOutOfMemoryObserver([](int64_t device, size_t, size_t, size_t) {
            OomCapture* c = g_oom_capture.load();
            if (!c || device != c->device) return;
            try {
                std::lock_guard lock(c->mutex);
                if (!c->snapshot) c->snapshot = alloc::snapshot({0, 0}, /*include_traces=*/true);
            } catch (...) {
                // No snapshot: the probe is still an OOM, only without its picture.
            }
        });
    });
}

// Arms the observer for its lifetime.
class OomArm {
public:
    explicit OomArm(OomCapture& c) { g_oom_capture.store(&c); }
    ~OomArm() { g_oom_capture.store(nullptr); }
    OomArm(const OomArm&) = delete;
    OomArm& operator=(const OomArm&) = delete;
};

// One step of a point of the frontier: fits, or runs out of memory. The step runs with the
// allocator's history on; when it runs out of memory, `oom_trace` gets that history up to
// the failed allocation and the segments at that moment (Note [the snapshot at an
// out-of-memory]).
FrontierProbe probePoint(const PointConfig& cfg, const c10::Device& device,
                         std::optional<RawMemoryTrace>& oom_trace) {
    FrontierProbe p;
    oom_trace.reset();
    const int dev = device.index();
    attachOomObserverOnce();
    Recording rec;
    OomCapture capture;
    capture.device = dev;
    RawMemoryTrace trace;
    trace.device = dev;
    try {
        c10::OptionalDeviceGuard guard;
        guard.reset_device(device);
        readInitial(dev, trace);
        HistoryRecorder history(rec, kMaxTraceEntries);
        OomArm arm(capture);
        std::optional<TrainingStep> step;
        try {
            rec.step.store(0);
            step.emplace(setupOf(cfg), device);
            DeviceTimer timer(device, 4);
            const StepTimes t = step->run(timer);
            p.fits = true;
            p.peak_bytes = t.memory_peak;
        } catch (const std::exception& e) {
            const Failure f = describeFailure(e);
            p.status = f.status;
            p.error = f.message;
            std::lock_guard lock(capture.mutex);
            if (f.status == Status::OOM && capture.snapshot) {
                // What we own is known exactly: the model, AdamW's state, the gradients made so
                // far.
                if (step) {
                    for (const auto& x : step->parameters())
                        addKnown(trace.known, x, MemoryCategory::Parameters, -1);
                    for (const auto& x : step->optimizer().state())
                        addKnown(trace.known, x, MemoryCategory::OptimizerState, -1);
                    addGradients(trace.known, *step, 0);
                }
                readTrace(*capture.snapshot, dev, rec, trace);
                oom_trace = std::move(trace);
            }
        }
    } catch (const std::exception& e) {  // the recorder itself
        p.fits = false;
        const Failure f = describeFailure(e);
        p.status = f.status;
        p.error = f.message;
    }
    releaseCachedMemory(device);
    return p;
}

void frontier(const MemorySpec& spec, const c10::Device& device, MemoryObserver& obs,
              const CancelToken& cancel, MemoryResult& r) {
    searchFrontier(spec, obs, cancel, r, "",
                   [&](const PointConfig& c, std::optional<RawMemoryTrace>& trace) {
                       return probePoint(c, device, trace);
                   });
}

#endif  // TRAINSCOPE_TORCH_CUDA

// ---- The user's code (the Python source) ----
// The runner (runner/trainscope_runner/memory.py) records the allocator's history around the
// user's steps and sends it in parts under `key` ("memory", or "oom_trace" for a frontier
// probe that ran out of memory): events, then stacks, then the rest with "done".
class RunnerTrace {
public:
    explicit RunnerTrace(std::string key) : key_(std::move(key)) {}
    // Takes a line of the runner's; true when it was one of this trace's.
    bool take(const nlohmann::json& j) {
        if (j.value("event", "") != key_) return false;
        if (auto it = j.find("events"); it != j.end())
            for (const auto& e : *it) events_.push_back(e);
        if (auto it = j.find("stacks"); it != j.end())
            for (const auto& e : *it) stacks_.push_back(e);
        if (j.value("done", false)) {
            nlohmann::json t = j;
            t["events"] = std::move(events_);
            t["stacks"] = std::move(stacks_);
            truncated_ = j.value("truncated", false);
            trace_ = memoryTraceFromJson(t);
        }
        return true;
    }
    std::optional<RawMemoryTrace>& trace() { return trace_; }
    bool truncated() const { return truncated_; }

private:
    std::string key_;
    nlohmann::json events_ = nlohmann::json::array(), stacks_ = nlohmann::json::array();
    std::optional<RawMemoryTrace> trace_;
    bool truncated_ = false;
};

void recordPython(const MemorySpec& spec, MemoryObserver& obs, const CancelToken& cancel,
                  MemoryResult& r) {
    const PointConfig& cfg = spec.bench;
    nlohmann::json js = pythonRunnerSpec(cfg);
    js["record_steps"] = spec.record_steps;
    ProgressMeter meter(obs);
    const int total = cfg.warmup + spec.record_steps;
    RunnerTrace trace("memory");
    const PythonPointOutcome out = runPythonPoint(
        cfg, "memory", js, obs, 0, cancel,
        [&](const StepSample& s) {
            r.steps.push_back(s);
            obs.stepFinished(r.steps.back());
            meter.report(static_cast<double>(r.steps.size()), total);
            if (static_cast<int>(r.steps.size()) == total) obs.traceCollected();
        },
        [&](const nlohmann::json& j) { trace.take(j); },
        [&](const nlohmann::json& result) {
            r.parameter_bytes = result.value("parameter_bytes", int64_t{0});
            r.gradient_bytes = result.value("gradient_bytes", int64_t{0});
            r.optimizer_bytes = result.value("optimizer_bytes", int64_t{0});
        });
    r.status = out.status;
    r.error = out.error;
    r.parameter_count = out.parameter_count;
    r.gpu = trace.trace().has_value();
    if (trace.trace()) r.trace = std::move(*trace.trace());
    if (trace.truncated())
        obs.log(LogLevel::Warning,
                "memory: the allocator's history filled; the first events are "
                "lost (record fewer steps)");
}

void frontierPython(const MemorySpec& spec, MemoryObserver& obs, const CancelToken& cancel,
                    MemoryResult& r) {
    searchFrontier(
        spec, obs, cancel, r, " of your code",
        [&](const PointConfig& c, std::optional<RawMemoryTrace>& oom_trace) {
            nlohmann::json js = pythonRunnerSpec(c);
            js["probe"] = true;
            RunnerTrace trace("oom_trace");
            FrontierProbe p;
            Observer
                quiet;  // a probe's "ready", steps and warnings are not the run's: its row says
            const PythonPointOutcome out = runPythonPoint(
                c, "memory", js, quiet, 0, cancel, [](const StepSample&) {},
                [&](const nlohmann::json& j) { trace.take(j); },
                [&](const nlohmann::json& result) {
                    p.fits = result.value("fits", false);
                    p.peak_bytes = result.value("peak_bytes", int64_t{0});
                });
            p.status = out.status;
            p.error = out.error;
            if (p.status != Status::Ok) p.fits = false;
            oom_trace = std::move(trace.trace());
            return p;
        });
}

}  // namespace

MemoryResult runMemory(const MemorySpec& spec, MemoryObserver& observer, const CancelToken& cancel,
                       ResultStore* store, int64_t run_id, int index, int count) {
    observer.pointStarted(index, count, spec.bench);
    MemoryResult r;
    r.spec = spec;
    r.environment = currentEnvironment(spec.bench.device);
    r.parameter_count = parameterCount(spec.bench.model);
    std::vector<std::string> problems = validateMemory(spec);
    if (problems.empty()) problems = checkPointRunnable(spec.bench);
    if (!problems.empty()) {
        r.status = Status::Failed;
        r.error = fmt::format("{}", fmt::join(problems, "; "));
    } else {
        const c10::Device device = parseDevice(spec.bench.device);
        if (device.is_cuda() && spec.bench.source == Source::Python) {
            runRecordingFailure(r, [&] { recordPython(spec, observer, cancel, r); });
            if (spec.frontier != FrontierAxis::None && r.status != Status::Cancelled &&
                !cancel.cancelled())
                runRecordingFailure(r, [&] { frontierPython(spec, observer, cancel, r); });
        } else if (!device.is_cuda()) {
            r.status = Status::Failed;
            r.error =
                "memory recording needs a CUDA device (the caching allocator's history); the "
                "analytic model "
                "is shown without measurements";
        } else {
#ifdef TRAINSCOPE_TORCH_CUDA
            r.gpu = true;
            runRecordingFailure(r, [&] { record(spec, device, observer, cancel, r); });
            releaseCachedMemory(device);
            if (spec.frontier != FrontierAxis::None && r.status != Status::Cancelled &&
                !cancel.cancelled())
                runRecordingFailure(r, [&] { frontier(spec, device, observer, cancel, r); });
#else
            r.status = Status::Failed;
            r.error = "memory recording needs LibTorch built with CUDA";
#endif
        }
    }
    if (r.status != Status::Ok && r.status != Status::Cancelled)
        observer.log(LogLevel::Warning, fmt::format("memory: {}: {}", toString(r.status), r.error));
    if (store) {
        try {
            storeMemory(*store, run_id, index, r);
        } catch (const std::exception& e) {
            observer.log(LogLevel::Error, storeFailure("memory", index, count, e));
        }
    }
    observer.pointFinished(index, r);
    return r;
}

}  // namespace ts
