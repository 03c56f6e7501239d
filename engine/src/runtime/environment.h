// What this machine can run, and where results were measured. No LibTorch in this header.
#pragma once

#include <string>
#include <vector>

#include "trainscope/engine/result.h"

namespace ts {

struct DeviceInfo {
    std::string id;    // "cpu", "cuda:0", ...
    std::string name;  // human-readable
    int64_t total_memory = 0;  // bytes, 0 for the CPU
    int compute_major = 0, compute_minor = 0;
    bool bf16 = false;  // bf16 autocast usable
    bool fp16 = false;  // fp16 autocast usable
    std::string flash_kernels;  // which of our attention kernels run here; empty: none
};

struct Capabilities {
    std::string torch_version;
    bool torch_cuda_build = false;  // LibTorch built with CUDA
    bool cuda_available = false;    // ... and a GPU is present
    bool flash_kernels = false;     // this build has our CUDA attention kernels
    std::vector<DeviceInfo> devices;  // "cpu" first, then each GPU
};

// Queries LibTorch once and caches the answer.
const Capabilities& capabilities();

// The environment of a run on `device` ("cpu", "cuda", "cuda:N"), dated now.
Environment currentEnvironment(const std::string& device);

// Why `config` cannot run on this machine, or empty if it can (device present, dtype
// supported, backend built). Complements validateBench(), which checks the values alone.
std::vector<std::string> checkRunnable(const BenchConfig& config);

}  // namespace ts
