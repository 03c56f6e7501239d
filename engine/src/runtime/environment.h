// What this machine can run, and where results were measured. No LibTorch in this header.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/result.h"

namespace ts {

struct DeviceInfo {
    std::string id;            // "cpu", "cuda:0", ...
    std::string name;          // human-readable
    int64_t total_memory = 0;  // bytes, 0 for the CPU
    int compute_major = 0, compute_minor = 0;
    bool bf16 = false;          // bf16 autocast usable
    bool fp16 = false;          // fp16 autocast usable
    std::string flash_kernels;  // which of our attention kernels run here; empty: none
};

struct Capabilities {
    std::string torch_version;
    bool torch_cuda_build = false;    // LibTorch built with CUDA
    bool cuda_available = false;      // ... and a GPU is present
    bool flash_kernels = false;       // this build has our CUDA attention kernels
    std::vector<DeviceInfo> devices;  // "cpu" first, then each GPU
};

// Queries LibTorch once and caches the answer.
const Capabilities& capabilities();

// The environment of a run on `device` ("cpu", "cuda", "cuda:N"), dated now.
Environment currentEnvironment(const std::string& device);

// What a run needs of this machine: a device, the precisions it computes in, the attention
// implementations it calls. Every lab asks through this one check.
struct RunNeeds {
    std::string device = "cpu";
    std::vector<Precision> precisions;
    std::vector<AttentionImpl> attentions;
};

// Why a run with these needs cannot run here (device absent, dtype unsupported, kernels not
// built), each a sentence; empty if it can. Complements each lab's validation of its values.
std::vector<std::string> checkRunnable(const RunNeeds& needs);

}  // namespace ts
