#include "runtime/kineto.h"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <kineto/libkineto.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

// LibTorch's, declared in torch/csrc/profiler/kineto_shim.h, which includes Kineto's headers by
// a path of their own (ActivityType.h): the one declaration, here.
namespace torch::autograd::profiler {
TORCH_API void addMetadataJson(const std::string& key, const std::string& value);
}  // namespace torch::autograd::profiler

namespace ts {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;

// Note [Kineto's first thread]: LibTorch registers its Kineto client on the thread that loads
// it (the main thread) and Kineto starts on the first profile. Started from a worker thread (the
// window runs its profiles in one), it logs "External init callback must run in same thread as
// registerClient" as an ERROR, though the profile is whole. The window's profile panel starts
// it on the UI thread before its first job (prepareProfilerOnThisThread); the CLI and a DDP
// rank's worker profile on their main thread anyway. Kineto reads its log level when it starts:
// without a CUDA device it logs "gpuGetDeviceCount failed with code 35" as an ERROR on every CPU
// profile, so there it is quieted first, unless the user set KINETO_LOG_LEVEL.
void prepareKinetoOnThisThread() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (!at::hasCUDA()) ::setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
        // What LibTorch's prepareProfiler does on the first profile (registering Kineto's
        // profiler runs the client's init, which must be on the client's thread), done here.
        if (!libkineto::api().isProfilerRegistered()) {
            libkineto_init(/*cpuOnly=*/!at::hasCUDA(), /*logOnError=*/true);
            libkineto::api().suppressLogMessages();  // as LibTorch does: no INFO dump per trace
        }
        libkineto::api().initProfilerIfRegistered();
    });
}

KinetoSession::KinetoSession(bool cuda) {
    prepareKinetoOnThisThread();  // a no-op once the window's UI thread has done it
    activities_.insert(ActivityType::CPU);
    if (cuda) activities_.insert(ActivityType::CUDA);
    const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO,
                                                       /*report_input_shapes=*/true);
    prof::prepareProfiler(config, activities_);
    prof::enableProfiler(config, activities_);
    active_ = true;
}

KinetoSession::~KinetoSession() {
    if (!active_) return;
    try {
        prof::disableProfiler();
    } catch (...) {
    }
}

void KinetoSession::addMetadata(const std::string& key, const std::string& json) {
    prof::addMetadataJson(key, json);
}

std::unique_ptr<prof::ProfilerResult> KinetoSession::stop() {
    active_ = false;
    return prof::disableProfiler();
}

void writeKinetoTrace(prof::ProfilerResult& result, const std::string& path) {
    result.save(path);
    // Kineto logs a file it cannot open and goes on: its absence is the error.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw std::runtime_error(fmt::format("{} was not written", path));
}

}  // namespace ts
