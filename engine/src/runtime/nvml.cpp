#include "runtime/nvml.h"

#include <dlfcn.h>

namespace ts {

namespace {
template <typename Fn>
Fn symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(dlsym(lib, name));
}
}  // namespace

Nvml::Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib_) return;
    auto init = symbol<int (*)()>(lib_, "nvmlInit_v2");
    shutdown_ = symbol<int (*)()>(lib_, "nvmlShutdown");
    driver_version_ = symbol<int (*)(char*, unsigned)>(lib_, "nvmlSystemGetDriverVersion");
    by_bus_ = symbol<int (*)(const char*, void**)>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
    memory_info_ = symbol<int (*)(void*, void*)>(lib_, "nvmlDeviceGetMemoryInfo");
    initialised_ = init && init() == 0;
}

Nvml::~Nvml() {
    if (initialised_ && shutdown_) shutdown_();
    if (lib_) dlclose(lib_);
}

std::string Nvml::driverVersion() const {
    char buf[96] = {};
    if (!initialised_ || !driver_version_ || driver_version_(buf, sizeof buf) != 0) return {};
    return buf;
}

void* Nvml::deviceByBusId(const std::string& bus_id) const {
    void* handle = nullptr;
    if (!initialised_ || !by_bus_ || by_bus_(bus_id.c_str(), &handle) != 0) return nullptr;
    return handle;
}

std::optional<int64_t> Nvml::usedMemory(void* device) const {
    struct {
        unsigned long long total, free, used;  // nvmlMemory_t
    } m{};
    if (!initialised_ || !memory_info_ || !device || memory_info_(device, &m) != 0)
        return std::nullopt;
    return static_cast<int64_t>(m.used);
}

}  // namespace ts
