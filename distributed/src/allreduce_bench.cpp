// The all-reduce benchmark's runner: one rank's part. The only file of the benchmark that sees
// LibTorch.
#include "trainscope/distributed/allreduce_bench.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/core/Event.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "trainscope/distributed/process_group.h"

namespace ts::dist {

namespace {

// Times `iters` calls of a function: CUDA events on the device's current stream (the
// collective's wait() makes that stream wait for NCCL's), read after one synchronisation at
// the end; on the CPU the steady clock around each call (Gloo's wait() blocks the host).
class IterationTimer {
public:
    IterationTimer(const c10::Device& device, int iters) : device_(device) {
        if (device.is_cuda())
            for (int i = 0; i < 2 * iters; ++i)
                events_.push_back(std::make_unique<c10::Event>(c10::DeviceType::CUDA,
                                                               c10::EventFlag::BACKEND_DEFAULT));
        cpu_ms_.reserve(iters);
    }
    template <typename F>
    void time(int i, F&& f) {
        if (device_.is_cuda()) {
            const c10::Stream stream = at::accelerator::getCurrentStream(device_.index());
            events_[2 * i]->record(stream);
            f();
            events_[2 * i + 1]->record(stream);
        } else {
            const auto t0 = std::chrono::steady_clock::now();
            f();
            cpu_ms_.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
        }
    }
    std::vector<double> ms() {
        if (!device_.is_cuda()) return cpu_ms_;
        std::vector<double> out;
        if (!events_.empty()) events_.back()->synchronize();
        for (size_t i = 0; i + 1 < events_.size(); i += 2)
            out.push_back(events_[i]->elapsedTime(*events_[i + 1]));
        return out;
    }

private:
    c10::Device device_;
    std::vector<std::unique_ptr<c10::Event>> events_;
    std::vector<double> cpu_ms_;
};

at::ScalarType scalarType(BenchDtype d) {
    return d == BenchDtype::BFloat16 ? at::kBFloat16 : at::kFloat;
}

void allreduce(Group& g, at::Tensor& t) {
    std::vector<at::Tensor> ts{t};
    g.backend->allreduce(ts)->wait();
}

}  // namespace

void runAllreduceRank(const GroupSpec& group, const AllreduceSpec& spec,
                      AllreduceObserver& observer, const std::function<bool()>& stop) {
    if (const std::string problem = allreduceSpecProblem(spec); !problem.empty())
        throw std::invalid_argument(problem);
    const std::string who = "rank " + std::to_string(group.rank) + ": ";
    c10::Device device(c10::kCPU);
    if (group.backend == CommBackend::Nccl) {
        // The rank's GPU is its local rank (one rank per GPU); NCCL binds to the current device.
        device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(group.local_rank));
        at::accelerator::setDeviceIndex(device.index());
    }
    Group g = makeGroup(group);
    observer.ready(g.rank, g.world_size, device.str());
    const int total = static_cast<int>(spec.sizes.size() * spec.dtypes.size());
    int done = 0;
    for (BenchDtype dtype : spec.dtypes) {
        for (int64_t bytes : spec.sizes) {
            if (stop && stop()) return;
            AllreduceTiming t;
            t.rank = g.rank;
            t.world_size = g.world_size;
            t.backend = group.backend;
            t.device = device.str();
            t.dtype = dtype;
            t.elements = std::max<int64_t>(1, bytes / dtypeBytes(dtype));
            t.bytes = t.elements * dtypeBytes(dtype);
            t.iters = spec.iters;
            try {
                auto opts = at::TensorOptions().dtype(scalarType(dtype)).device(device);
                // One checked all-reduce first: every rank adds rank + 1, so each element must
                // be n(n+1)/2 (exact in bf16 for the world sizes launched here).
                at::Tensor x = at::full({t.elements}, static_cast<double>(g.rank + 1), opts);
                allreduce(g, x);
                const double want = g.world_size * (g.world_size + 1) / 2.0;
                const double got = x[0].item<double>();
                if (got != want)
                    throw std::runtime_error("the check all-reduce summed to " +
                                             std::to_string(got) + ", not " + std::to_string(want));
                x.zero_();  // zeros stay zeros: no overflow and no denormals over many iterations
                for (int i = 0; i < spec.warmup; ++i) allreduce(g, x);
                IterationTimer timer(device, spec.iters);
                for (int i = 0; i < spec.iters; ++i) timer.time(i, [&] { allreduce(g, x); });
                const std::vector<double> ms = timer.ms();
                t.mean_ms =
                    std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
                t.min_ms = *std::min_element(ms.begin(), ms.end());
                t.max_ms = *std::max_element(ms.begin(), ms.end());
                // Every rank's mean/min/max to every rank; rank 0 reports them.
                at::Tensor mine = at::tensor({t.mean_ms, t.min_ms, t.max_ms},
                                             at::TensorOptions().dtype(at::kDouble))
                                      .to(device);
                std::vector<std::vector<at::Tensor>> out(1);
                for (int r = 0; r < g.world_size; ++r) out[0].push_back(at::empty_like(mine));
                std::vector<at::Tensor> in{mine};
                g.backend->allgather(out, in)->wait();
                if (g.rank == 0)
                    for (int r = 0; r < g.world_size; ++r) {
                        const at::Tensor v = out[0][r].cpu();
                        const double* p = v.data_ptr<double>();
                        t.ranks.push_back({r, p[0], p[1], p[2]});
                    }
            } catch (const std::exception& e) {
                std::string what = e.what();
                if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
                throw std::runtime_error(who + "all-reduce of " + formatByteSize(t.bytes) + " " +
                                         dtypeName(dtype) + " failed: " + what);
            }
            observer.measured(t, ++done, total);
        }
    }
}

}  // namespace ts::dist
