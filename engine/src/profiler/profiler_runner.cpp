// The profiler's runner: warm-up steps unprofiled, then K steps of the same TrainingStep under
// LibTorch's Kineto profiler (CPU ops and ranges; CUDA kernels through CUPTI on a GPU). The
// step's ranges (forward, backward, optimizer and the model's) come from TrainingStep and the
// model themselves. Kineto's events become a RawTrace; attribute() does the rest.
#include <ATen/record_function.h>
#include <c10/core/DeviceGuard.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "core/point_json.h"
#include "core/store.h"
#include "nn/training_step.h"
#include "profiler/profiler.h"
#include "profiler/profiler_json.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "runtime/kineto.h"
#include "runtime/point_run.h"
#include "runtime/step_ranges.h"

namespace ts {
// See Note [Kineto's first thread] (runtime/kineto.cpp).
void prepareProfilerOnThisThread() { prepareKinetoOnThisThread(); }

namespace {

namespace prof = torch::autograd::profiler;

// The libkineto::ActivityType values of the events we read (KinetoEvent::activityType()).
constexpr auto kind(libkineto::ActivityType t) { return static_cast<uint8_t>(t); }
constexpr uint8_t kCpuOp = kind(libkineto::ActivityType::CPU_OP),
                  kUserAnnotation = kind(libkineto::ActivityType::USER_ANNOTATION),
                  kGpuMemcpy = kind(libkineto::ActivityType::GPU_MEMCPY),
                  kGpuMemset = kind(libkineto::ActivityType::GPU_MEMSET),
                  kKernel = kind(libkineto::ActivityType::CONCURRENT_KERNEL),
                  kCudaRuntime = kind(libkineto::ActivityType::CUDA_RUNTIME),
                  kCudaDriver = kind(libkineto::ActivityType::CUDA_DRIVER);

// `driver_calls`: the driver API's launches (cuLaunchKernel: cuBLAS's, Triton's) too, as runtime
// calls; a graph's capture needs every call that made a node (See Note [a graph's kernels named
// by its capture]).
RawTrace fromKineto(const std::vector<prof::KinetoEvent>& events, bool driver_calls = false) {
    RawTrace raw;
    for (const auto& e : events) {
        if (e.isHiddenEvent()) continue;
        // The step annotations are for Kineto's readers (See Note [Kineto's trace]).
        if (std::string_view(e.name()).substr(0, kProfilerStepPrefix.size()) == kProfilerStepPrefix)
            continue;
        // Kernels, memcpys and memsets are told by their activity type, whatever device type
        // Kineto gives them (with a PrivateUse1 backend it says PrivateUse1, not CUDA).
        const uint8_t act = e.activityType();
        if (act == kKernel || act == kGpuMemcpy || act == kGpuMemset) {
            KernelEvent k;
            k.name = e.name();
            k.start_ns = static_cast<int64_t>(e.startNs());
            k.duration_ns = static_cast<int64_t>(e.durationNs());
            k.launcher = e.linkedCorrelationId();
            k.correlation = e.correlationId();
            k.stream = e.deviceResourceId();
            raw.kernels.push_back(std::move(k));
        } else if (e.deviceType() == c10::DeviceType::CPU &&
                   (act == kCpuOp || act == kUserAnnotation || act == kCudaRuntime ||
                    (driver_calls && act == kCudaDriver))) {
            CpuEvent c;
            c.name = e.name();
            c.thread = e.startThreadId();
            c.start_ns = static_cast<int64_t>(e.startNs());
            c.end_ns = static_cast<int64_t>(e.endNs());
            c.range = e.scope() == static_cast<uint8_t>(at::RecordScope::USER_SCOPE);
            // A runtime call's correlation id is CUPTI's, from another counter than the ops':
            // it must not be taken for an op's.
            const bool call = act == kCudaRuntime || act == kCudaDriver;
            c.correlation = call ? 0 : e.correlationId();
            c.runtime_correlation = call ? e.correlationId() : 0;
            c.sequence_nr = e.sequenceNr();
            c.fwd_thread = e.fwdThreadId();
            if (e.hasShapes())
                for (const auto& s : e.shapes()) c.shapes.push_back(s);
            raw.cpu.push_back(std::move(c));
        }
    }
    return raw;
}

// The metadata of Kineto's trace (See Note [Kineto's trace]), added while the profiler runs.
void addTraceMetadata(const ProfileSpec& spec) {
    KinetoSession::addMetadata("distributedInfo", R"({"rank": 0, "world_size": 1})");
    KinetoSession::addMetadata("trainscope", profileSpecJson(spec));
}

// Writes Kineto's trace; an Error through the observer when it cannot.
void saveKinetoTrace(prof::ProfilerResult& result, const ProfileOutputs& outputs,
                     ProfileObserver& obs) {
    if (outputs.kineto_trace.empty()) return;
    try {
        writeKinetoTrace(result, outputs.kineto_trace);
    } catch (const std::exception& e) {
        obs.log(LogLevel::Error, fmt::format("could not write Kineto's trace {}: {}",
                                             outputs.kineto_trace, firstLine(e.what())));
    }
}

void profile(const ProfileSpec& spec, const c10::Device& device, ProfileObserver& obs,
             const CancelToken& cancel, const ProfileOutputs& outputs, ProfileResult& r) {
    const PointConfig& cfg = spec.bench;
    c10::OptionalDeviceGuard guard;
    if (device.is_cuda()) guard.reset_device(device);
    TrainingSetup setup = trainingSetup(cfg);
    TrainingStep step(setup, device);
    // Compiled mode: the capture (in the first warm-up step) recorded on its own, to name the
    // replays' kernels (See Note [a graph's kernels named by its capture]).
    std::optional<KinetoSession> capture_session;
    std::vector<ProfiledKernel> capture_launches;
    // Never throws: it runs from a destructor when a capture fails. A capture that cannot be
    // recorded leaves the replays' kernels with their phases, and says so.
    if (setup.exec == ExecMode::Compiled)
        step.onCapture([&](bool begins) {
            try {
                if (begins) {
                    capture_session.emplace(device.is_cuda());
                    return;
                }
                if (!capture_session) return;
                const auto recorded = capture_session->stop();
                capture_session.reset();
                capture_launches = graphCaptureLaunches(fromKineto(recorded->events(), true));
            } catch (const std::exception& e) {
                capture_session.reset();
                capture_launches.clear();
                obs.log(LogLevel::Warning,
                        fmt::format("compiled mode: the graphs' capture could not be recorded "
                                    "({}); their kernels keep their phases only",
                                    firstLine(e.what())));
            }
        });
    DeviceTimer timer(device, 4);
    ProgressMeter meter(obs);
    const int total = cfg.warmup + spec.profile_steps;
    auto cancelled = [&](int i) {
        if (!cancel.cancelled()) return false;
        r.status = Status::Cancelled;
        r.error = i < cfg.warmup ? fmt::format("during warm-up step {} of {}", i + 1, cfg.warmup)
                                 : fmt::format("after {} of {} profiled steps", i - cfg.warmup,
                                               spec.profile_steps);
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
    KinetoSession session(device.is_cuda());
    for (int i = cfg.warmup; i < total; ++i) {
        if (cancelled(i)) break;  // the profiled steps so far are kept
        const auto range = ranges.step(i, false);
        {
            RECORD_USER_SCOPE(fmt::format("{}{}", kProfilerStepPrefix, i - cfg.warmup));
            r.steps.push_back(stepSample(step.run(timer), i, false));
        }
        obs.stepFinished(r.steps.back());
        meter.report(i + 1, total);
    }
    ranges.finish();
    addTraceMetadata(spec);
    const auto result = session.stop();
    obs.profileCollected();
    saveKinetoTrace(*result, outputs, obs);
    r.gpu = device.is_cuda();
    r.trace = attribute(fromKineto(result->events()));
    if (setup.exec == ExecMode::Compiled) {
        const GraphNaming named = nameGraphKernels(r.trace, capture_launches);
        r.graph_kernels = named.replayed;
        r.graph_kernels_named = named.named;
        for (const auto& p : named.problems)
            obs.log(LogLevel::Warning, fmt::format("compiled mode: {}", p));
        obs.log(named.named == named.replayed ? LogLevel::Info : LogLevel::Warning,
                fmt::format("compiled mode: {} of {} replayed kernels named by the capture's "
                            "{} launches (op and model range)",
                            named.named, named.replayed, capture_launches.size()));
    }
}

// The user's code (the Python source): the runner profiles its steps with torch.profiler and
// sends Kineto's events as a RawTrace in parts ("trace" lines with "cpu" or "kernels", then one
// with "done"; runner/trainscope_runner/profile.py), attributed as TrainScope's own events are.
void addRunnerTrace(const nlohmann::json& j, RawTrace& raw) {
    for (const auto& e : j.value("cpu", nlohmann::json::array())) {
        CpuEvent c;
        c.name = e.at("name").get<std::string>();
        c.thread = e.value("thread", uint64_t{0});
        c.start_ns = e.value("start_ns", int64_t{0});
        c.end_ns = e.value("end_ns", int64_t{0});
        c.range = e.value("range", false);
        c.correlation = e.value("correlation", uint64_t{0});
        c.runtime_correlation = e.value("runtime_correlation", uint64_t{0});
        c.sequence_nr = e.value("sequence_nr", int64_t{-1});
        c.fwd_thread = e.value("fwd_thread", uint64_t{0});
        if (const auto sh = e.find("shapes"); sh != e.end())
            for (const auto& s : *sh) c.shapes.push_back(s.get<std::vector<int64_t>>());
        raw.cpu.push_back(std::move(c));
    }
    for (const auto& e : j.value("kernels", nlohmann::json::array())) {
        KernelEvent k;
        k.name = e.at("name").get<std::string>();
        k.start_ns = e.value("start_ns", int64_t{0});
        k.duration_ns = e.value("duration_ns", int64_t{0});
        k.launcher = e.value("launcher", uint64_t{0});
        k.correlation = e.value("correlation", uint64_t{0});
        k.stream = e.value("stream", int64_t{0});
        raw.kernels.push_back(std::move(k));
    }
}

void profilePython(const ProfileSpec& spec, ProfileObserver& obs, const CancelToken& cancel,
                   const ProfileOutputs& outputs, ProfileResult& r) {
    const PointConfig& cfg = spec.bench;
    nlohmann::json js = pythonRunnerSpec(cfg);
    js["steps"] = spec.profile_steps;  // profiled, after the warm-up
    if (!outputs.kineto_trace.empty()) {
        js["kineto_trace"] = outputs.kineto_trace;
        js["trainscope"] = profileSpecJson(spec);
    }
    ProgressMeter meter(obs);
    const int total = cfg.warmup + spec.profile_steps;
    bool traced = false;
    RawTrace raw;
    const PythonPointOutcome out = runPythonPoint(
        cfg, "profile", js, obs, 0, cancel,
        [&](const StepSample& s) {
            r.steps.push_back(s);
            obs.stepFinished(r.steps.back());
            meter.report(static_cast<double>(r.steps.size()), total);
        },
        [&](const nlohmann::json& j) {
            if (j.value("event", "") != "trace") return;
            addRunnerTrace(j, raw);
            if (j.value("done", false)) {
                obs.profileCollected();
                r.trace = attribute(raw);
                traced = true;
            }
        });
    r.status = out.status;
    r.error = out.error;
    r.gpu = cfg.device.rfind("cuda", 0) == 0 && traced;
}

}  // namespace

ProfileResult runProfile(const ProfileSpec& spec, ProfileObserver& observer,
                         const CancelToken& cancel, ResultStore* store, int64_t run_id,
                         const ProfileOutputs& outputs) {
    ProfileResult r;
    r.spec = spec;
    r.environment = currentEnvironment(spec.bench.device);
    std::vector<std::string> problems = validateProfile(spec);
    if (problems.empty()) problems = checkPointRunnable(spec.bench);
    if (!problems.empty()) {
        r.status = Status::Failed;
        r.error = fmt::format("{}", fmt::join(problems, "; "));
    } else if (spec.bench.source == Source::Python) {
        runRecordingFailure(r, [&] { profilePython(spec, observer, cancel, outputs, r); });
    } else {
        const c10::Device device = parseDevice(spec.bench.device);
        runRecordingFailure(r, [&] { profile(spec, device, observer, cancel, outputs, r); });
        releaseCachedMemory(device);
    }
    if (r.status != Status::Ok && r.status != Status::Cancelled)
        observer.log(LogLevel::Warning,
                     fmt::format("profile: {}: {}", toString(r.status), r.error));
    if (store) {
        try {
            storeProfile(*store, run_id, r);
        } catch (const std::exception& e) {
            observer.log(LogLevel::Error, storeFailure("profile", 0, 1, e));
        }
    }
    return r;
}

}  // namespace ts
