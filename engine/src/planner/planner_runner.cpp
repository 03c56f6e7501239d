// The planner's measurements of this machine: C from a GEMM, W from an all-reduce between the
// local devices (ranks as threads of this process), the backend's beside our ring all-reduce.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/store.h"
#include "core/table.h"
#include "planner/planner.h"
#include "planner/planner_report.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "trainscope/distributed/process_group.h"
#include "trainscope/distributed/ring_allreduce.h"

namespace ts {

namespace {

using Clock = std::chrono::steady_clock;

void settle(const c10::Device& device) {
    if (device.is_cuda()) at::accelerator::synchronizeDevice(device.index());
}

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Mean milliseconds of `iters` calls of f after `warmup` untimed ones, host clock around the
// whole loop with the device drained before and after.
template <typename F>
double meanMs(const c10::Device& device, int warmup, int iters, F&& f) {
    for (int i = 0; i < warmup; ++i) f();
    settle(device);
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    settle(device);
    return msSince(t0) / iters;
}

void measureGemm(const MeasureSpec& spec, bool gpu, MachineMeasurement& m) {
    const c10::Device device = gpu ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    m.gemm_n = spec.gemm_n > 0 ? spec.gemm_n : (gpu ? 8192 : 1024);
    const auto dtype = gpu ? at::kBFloat16 : at::kFloat;
    m.gemm_dtype = gpu ? "bf16" : "fp32";
    const auto options = at::TensorOptions().device(device).dtype(dtype);
    const at::Tensor a = at::randn({m.gemm_n, m.gemm_n}, options);
    const at::Tensor b = at::randn({m.gemm_n, m.gemm_n}, options);
    at::Tensor c = at::empty({m.gemm_n, m.gemm_n}, options);
    m.gemm_ms = meanMs(device, spec.warmup, spec.iters, [&] { at::mm_out(c, a, b); });
    const double n = static_cast<double>(m.gemm_n);
    m.flops = 2 * n * n * n / (m.gemm_ms / 1e3);
}

struct RankTimes {
    double backend_ms = 0, ring_ms = 0;
    bool exact = false;
};

// One rank: checks our ring's sum against the backend's on integer-valued data (exact in any
// order of addition), then times both on the same buffer.
RankTimes allreduceRank(const MeasureSpec& spec, dist::Group& g, const c10::Device& device,
                        at::ScalarType dtype, int64_t elements, const CancelToken& cancel) {
    RankTimes t;
    const auto options = at::TensorOptions().device(device).dtype(dtype);
    const at::Tensor x = at::randint(-4, 5, {elements}, options);
    at::Tensor theirs = x.clone(), ours = x.clone();
    std::vector<at::Tensor> ts{theirs};
    g.backend->allreduce(ts)->wait();
    dist::ringAllReduce(g, ours);
    settle(device);
    t.exact = at::equal(theirs, ours);
    if (cancel.cancelled()) return t;
    at::Tensor buf = x.clone();
    std::vector<at::Tensor> bufs{buf};
    g.backend->barrier()->wait();
    t.backend_ms =
        meanMs(device, spec.warmup, spec.iters, [&] { g.backend->allreduce(bufs)->wait(); });
    if (cancel.cancelled()) return t;
    g.backend->barrier()->wait();
    t.ring_ms = meanMs(device, spec.warmup, spec.iters, [&] { dist::ringAllReduce(g, buf); });
    return t;
}

void measureAllreduce(const MeasureSpec& spec, bool gpu, MachineMeasurement& m, Observer& observer,
                      const CancelToken& cancel) {
    const int world =
        spec.world > 0 ? spec.world : (gpu ? static_cast<int>(torch::cuda::device_count()) : 2);
    m.backend = gpu ? "nccl" : "gloo";
    m.world = world;
    if (world < 2) {
        m.note = "one device: no all-reduce to measure W on (give W yourself)";
        return;
    }
    if (gpu && world > static_cast<int>(torch::cuda::device_count()))
        throw std::invalid_argument(
            fmt::format("{} ranks asked for, {} GPU(s) here", world, torch::cuda::device_count()));
    if (gpu && !dist::ncclBuilt())
        throw std::invalid_argument("this TrainScope was built without NCCL (a CPU LibTorch)");
    const auto dtype = gpu ? at::kBFloat16 : at::kFloat;
    m.allreduce_dtype = gpu ? "bf16" : "fp32";
    const int64_t elt = gpu ? 2 : 4;
    const int64_t asked = spec.allreduce_bytes > 0 ? spec.allreduce_bytes
                                                   : (gpu ? int64_t{256} << 20 : int64_t{16} << 20);
    const int64_t elements = std::max<int64_t>(1, asked / elt);
    m.allreduce_bytes = elements * elt;
    // See Note [flight recorder]: ranks are threads here, so c10d's flight recorder is off
    // before the first group is made (it reads the variable once).
    ::setenv("TORCH_FR_BUFFER_SIZE", "0", 0);
    const int port = dist::freeLoopbackPort();
    std::vector<RankTimes> times(static_cast<size_t>(world));
    std::vector<std::string> errors(static_cast<size_t>(world));
    std::vector<std::thread> ranks;
    for (int r = 0; r < world; ++r)
        ranks.emplace_back([&, r] {
            try {
                const c10::Device device =
                    gpu ? c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(r))
                        : c10::Device(c10::kCPU);
                c10::OptionalDeviceGuard guard;
                if (gpu) guard.reset_device(device);
                dist::GroupSpec gs;
                gs.backend = gpu ? dist::CommBackend::Nccl : dist::CommBackend::Gloo;
                gs.rank = r;
                gs.world_size = world;
                gs.local_rank = r;
                gs.master_port = port;
                gs.timeout = std::chrono::seconds(120);
                dist::Group g = dist::makeGroup(gs);
                times[static_cast<size_t>(r)] =
                    allreduceRank(spec, g, device, dtype, elements, cancel);
            } catch (const std::exception& e) {
                errors[static_cast<size_t>(r)] = e.what();
            }
        });
    for (auto& t : ranks) t.join();
    for (const auto& e : errors)
        if (!e.empty()) throw std::runtime_error("all-reduce: " + e);
    // The collective ends when every rank's does: the slowest rank's time.
    m.ring_exact = true;
    for (const RankTimes& t : times) {
        m.backend_ms = std::max(m.backend_ms, t.backend_ms);
        m.ring_ms = std::max(m.ring_ms, t.ring_ms);
        m.ring_exact = m.ring_exact && t.exact;
    }
    const double bytes = static_cast<double>(m.allreduce_bytes);
    const double bus = 2.0 * (world - 1) / world;
    if (m.backend_ms > 0) m.backend_busbw = bytes / (m.backend_ms / 1e3) * bus;
    if (m.ring_ms > 0) m.ring_busbw = bytes / (m.ring_ms / 1e3) * bus;
    observer.log(LogLevel::Info,
                 fmt::format("all-reduce of {} over {} {} ranks: {:.3f} ms ({}), ring {:.3f} ms "
                             "({}), sums {}",
                             formatBytes(m.allreduce_bytes), world, m.backend, m.backend_ms,
                             formatByteRate(m.backend_busbw), m.ring_ms,
                             formatByteRate(m.ring_busbw), m.ring_exact ? "equal" : "DIFFERENT"));
}

}  // namespace

MachineMeasurement measureMachine(const MeasureSpec& spec, Observer& observer,
                                  const CancelToken& cancel) {
    if (const auto problems = validateMeasureSpec(spec); !problems.empty())
        throw std::invalid_argument(problems.front());
    const bool gpu = spec.device == "cuda";
    if (gpu && !torch::cuda::is_available())
        throw std::invalid_argument("measure on cuda: no GPU is available here");
    MachineMeasurement m;
    m.device = spec.device;
    m.device_name = currentEnvironment(gpu ? "cuda" : "cpu").device_name;
    ProgressMeter meter(observer);
    observer.log(LogLevel::Info, "measuring C: a GEMM on " + spec.device);
    measureGemm(spec, gpu, m);
    observer.log(LogLevel::Info,
                 fmt::format("C = {} ({}³ {} GEMM, {:.3f} ms)", formatFlopRate(m.flops), m.gemm_n,
                             m.gemm_dtype, m.gemm_ms));
    meter.report(1, 2);
    if (!cancel.cancelled()) measureAllreduce(spec, gpu, m, observer, cancel);
    meter.report(2, 2);
    return m;
}

PlannerReport runPlanner(const PlannerInputs& in, const std::optional<MeasureSpec>& measure,
                         Observer& observer, const CancelToken& cancel, ResultStore* store,
                         int64_t run_id) {
    PlannerInputs inputs = in;
    std::optional<MachineMeasurement> measured;
    if (measure) {
        measured = measureMachine(*measure, observer, cancel);
        inputs = withMeasurement(inputs, *measured);
    }
    if (const auto problems = validatePlannerInputs(inputs); !problems.empty())
        throw std::invalid_argument(problems.front());
    PlannerReport report = makePlannerReport(inputs, measured);
    if (store) {
        try {
            storePlannerReport(*store, run_id, 0, report);
        } catch (const std::exception& e) {
            observer.log(LogLevel::Error, storeFailure("plan", 0, 1, e));
            throw std::runtime_error(e.what());
        }
    }
    return report;
}

}  // namespace ts
