#include "runtime/environment.h"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/headeronly/version.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>

#include "runtime/build_info.h"
#include "runtime/nvml.h"

#ifdef TRAINSCOPE_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

#include "trainscope/kernels/flash_attention.h"

namespace ts {
namespace {

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown CPU";
}

std::string hostName() {
    char buf[256] = {};
    return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string();
}

std::string isoNowUtc() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The NVIDIA driver's version ("580.159.04"); empty where there is none.
std::string nvidiaDriverVersion() { return Nvml().driverVersion(); }

// -1 for the CPU, the GPU index otherwise ("cuda" is the current device, 0).
int deviceIndex(const std::string& device) {
    if (device.rfind("cuda", 0) != 0) return -1;
    return device.size() > 5 ? std::stoi(device.substr(5)) : 0;
}

Capabilities query() {
    Capabilities c;
    c.torch_version =
        fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
#ifdef TRAINSCOPE_TORCH_CUDA
    c.torch_cuda_build = true;
#endif
    c.flash_kernels = kernels::flashKernelsBuilt();
    DeviceInfo cpu;
    cpu.id = "cpu";
    cpu.name = cpuModel();
    cpu.bf16 = true;
    cpu.fp16 = true;
    c.devices.push_back(cpu);
    c.cuda_available = torch::cuda::is_available();
#ifdef TRAINSCOPE_TORCH_CUDA
    if (c.cuda_available) {
        for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i) {
            const cudaDeviceProp* p = at::cuda::getDeviceProperties(i);
            DeviceInfo d;
            d.id = fmt::format("cuda:{}", i);
            d.name = p->name;
            d.total_memory = static_cast<int64_t>(p->totalGlobalMem);
            d.compute_major = p->major;
            d.compute_minor = p->minor;
            d.bf16 = p->major >= 8;
            d.fp16 = p->major >= 6;
            d.flash_kernels = kernels::flashKernelPath(p->major, p->minor);
            c.devices.push_back(d);
        }
    }
#endif
    return c;
}

const DeviceInfo* findDevice(const std::string& device) {
    const int idx = deviceIndex(device);
    const std::string id = idx < 0 ? "cpu" : fmt::format("cuda:{}", idx);
    for (const auto& d : capabilities().devices)
        if (d.id == id) return &d;
    return nullptr;
}

}  // namespace

const Capabilities& capabilities() {
    static const Capabilities c = query();
    return c;
}

Environment currentEnvironment(const std::string& device) {
    Environment e;
    const Capabilities& caps = capabilities();
    e.torch_version = caps.torch_version;
    e.cpu = caps.devices.front().name;
    e.hostname = hostName();
    e.date = isoNowUtc();
    e.git_commit = build::gitCommit();
    e.trainscope_version = build::version();
    const DeviceInfo* d = findDevice(device);
    e.device_name = d ? d->name : device;
#ifdef TRAINSCOPE_TORCH_CUDA
    e.cuda_version = fmt::format("{}.{}", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
    if (caps.cuda_available) {
        static const std::string nvidia = nvidiaDriverVersion();
        int v = 0;
        std::string api;
        if (cudaDriverGetVersion(&v) == cudaSuccess)
            api = fmt::format("CUDA {}.{}", v / 1000, (v % 1000) / 10);
        e.driver_version = nvidia.empty() ? api : fmt::format("{} ({})", nvidia, api);
    }
#endif
    return e;
}

std::vector<std::string> checkRunnable(const RunNeeds& needs) {
    std::vector<std::string> problems;
    const Capabilities& caps = capabilities();
    if (auto e = validateDevice(needs.device); !e.empty()) return {e};
    const DeviceInfo* d = findDevice(needs.device);
    if (!d) {
        if (!caps.torch_cuda_build)
            problems.push_back(
                fmt::format("device '{}': this LibTorch is a CPU-only build", needs.device));
        else if (!caps.cuda_available)
            problems.push_back(
                fmt::format("device '{}': no CUDA device is available", needs.device));
        else
            problems.push_back(fmt::format("device '{}': there are only {} CUDA device(s)",
                                           needs.device, caps.devices.size() - 1));
        return problems;
    }
    for (Precision p : needs.precisions) {
        if (p == Precision::BF16 && !d->bf16)
            problems.push_back(
                fmt::format("{} does not support bf16 (needs compute capability 8.0)", d->name));
        if (p == Precision::FP16 && !d->fp16)
            problems.push_back(fmt::format("{} does not support fp16 autocast", d->name));
    }
    for (AttentionImpl a : needs.attentions) {
        if (a == AttentionImpl::Flash && !caps.flash_kernels)
            problems.push_back("attention 'flash': this build has no CUDA attention kernels");
        else if (a == AttentionImpl::Flash && d->id == "cpu")
            problems.push_back("attention 'flash' runs on CUDA devices only");
        // LibTorch's memory-efficient and cuDNN kernels exist for CUDA only (its flash and
        // math kernels have CPU versions).
        else if ((a == AttentionImpl::SdpaEfficient || a == AttentionImpl::SdpaCudnn) &&
                 d->id == "cpu")
            problems.push_back(fmt::format(
                "attention '{}' runs on CUDA devices only: LibTorch has no CPU version of it",
                toString(a)));
    }
    return problems;
}

}  // namespace ts
