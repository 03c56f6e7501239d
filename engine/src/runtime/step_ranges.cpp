// See Note [capture ranges] in step_ranges.h.
#include "runtime/step_ranges.h"

#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "core/observer.h"

#if defined(TRAINSCOPE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif
#if defined(TRAINSCOPE_TORCH_CUDA)
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#endif

namespace ts {
namespace {

#if defined(TRAINSCOPE_NVTX)
// "warmup" and "measured" as registered strings of the default domain (what nsys's
// --nvtx-capture matches without NSYS_NVTX_PROFILER_REGISTER_ONLY=0). Registering is cheap and
// needs no tool attached; with none, the handles are null and pushing them does nothing.
void pushRegistered(const char* name) {
    // One handle per name for the process (a tool attached later registers on first use).
    static const nvtxStringHandle_t warmup = nvtxDomainRegisterStringA(nullptr, "warmup");
    static const nvtxStringHandle_t measured = nvtxDomainRegisterStringA(nullptr, "measured");
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = std::string_view(name) == "warmup" ? warmup : measured;
    nvtxDomainRangePushEx(nullptr, &a);
}
void push(const std::string& name) { nvtxRangePushA(name.c_str()); }
void pop() { nvtxRangePop(); }
#else
void pushRegistered(const char*) {}
void push(const std::string&) {}
void pop() {}
#endif

}  // namespace

bool nvtxBuilt() {
#if defined(TRAINSCOPE_NVTX)
    return true;
#else
    return false;
#endif
}

StepRanges::StepRanges(const c10::Device& device, bool cuda_profiler_range, Observer* observer)
    : device_(device),
      cuda_profiler_range_(cuda_profiler_range && device.is_cuda()),
      observer_(observer) {
#if !defined(TRAINSCOPE_TORCH_CUDA)
    cuda_profiler_range_ = false;  // a CPU LibTorch has no CUDA device to get here with
#endif
}

StepRanges::~StepRanges() { close(); }

StepRanges::Step::Step(const std::string& name) { push(name); }
StepRanges::Step::~Step() { pop(); }

StepRanges::Step StepRanges::step(int index, bool warmup) {
    if (warmup && open_ != Open::Warmup) {
        close();
        pushRegistered("warmup");
        open_ = Open::Warmup;
    } else if (!warmup && open_ != Open::Measured) {
        close();
#if defined(TRAINSCOPE_TORCH_CUDA)
        if (cuda_profiler_range_) {
            const cudaError_t e = cudaProfilerStart();
            profiler_started_ = e == cudaSuccess;
            if (!profiler_started_) {
                const std::string m =
                    fmt::format("cudaProfilerStart failed: {}", cudaGetErrorString(e));
                if (observer_)
                    observer_->log(LogLevel::Warning, m);
                else
                    fmt::print(stderr, "warning: {}\n", m);
            }
        }
#endif
        pushRegistered("measured");
        open_ = Open::Measured;
    }
    return Step(fmt::format("step {}", index));
}

void StepRanges::finish() { close(); }

void StepRanges::close() {
    if (open_ == Open::None) return;
    pop();
#if defined(TRAINSCOPE_TORCH_CUDA)
    if (open_ == Open::Measured && profiler_started_) {
        // The steps' last kernels inside the capture; errors here are the step's to report.
        cudaDeviceSynchronize();
        cudaProfilerStop();
        profiler_started_ = false;
    }
#endif
    open_ = Open::None;
}

}  // namespace ts
