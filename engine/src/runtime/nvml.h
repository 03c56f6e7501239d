// NVML, the NVIDIA driver's management library, in one place: loaded at run time (dlopen) so
// that no build needs it and a machine without the driver simply has none. What TrainScope
// asks of it: the driver's version (a run's environment) and a device's used memory as the
// driver sees it (the memory lab). Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ts {

class Nvml {
public:
    Nvml();  // loads and initialises the library; ok() is false where that fails
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    bool ok() const { return initialised_; }
    // "580.159.04", or empty.
    std::string driverVersion() const;
    // A device by its PCI bus id ("0000:19:00.0": by bus, so that CUDA_VISIBLE_DEVICES cannot
    // mix devices up); nullptr where NVML does not know it.
    void* deviceByBusId(const std::string& bus_id) const;
    // The device's used memory in bytes, nullopt where NVML cannot say.
    std::optional<int64_t> usedMemory(void* device) const;

private:
    void* lib_ = nullptr;
    bool initialised_ = false;
    int (*shutdown_)() = nullptr;
    int (*driver_version_)(char*, unsigned) = nullptr;
    int (*by_bus_)(const char*, void**) = nullptr;
    int (*memory_info_)(void*, void*) = nullptr;
};

}  // namespace ts
