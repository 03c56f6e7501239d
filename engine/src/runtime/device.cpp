#include "runtime/device.h"

#include <ATen/DeviceAccelerator.h>
#include <c10/core/Event.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <unistd.h>

#include <regex>

namespace ts {

c10::Device parseDevice(const std::string& device) {
    c10::Device d(device);
    if (d.is_cuda() && !d.has_index()) d = c10::Device(c10::kCUDA, 0);  // "cuda" = the first GPU
    return d;
}

DeviceTimer::DeviceTimer(const c10::Device& device, int marks) : device_(device), times_(marks) {
    if (device.is_cuda())
        for (int i = 0; i < marks; ++i)
            events_.push_back(std::make_unique<c10::Event>(c10::DeviceType::CUDA,
                                                           c10::EventFlag::BACKEND_DEFAULT));
}

DeviceTimer::~DeviceTimer() = default;

void DeviceTimer::mark(int i) {
    if (device_.is_cuda())
        events_[i]->record(at::accelerator::getCurrentStream(device_.index()));
    else
        times_[i] = std::chrono::steady_clock::now();
}

void DeviceTimer::wait(int i) {
    if (device_.is_cuda()) events_[i]->synchronize();
}

double DeviceTimer::ms(int i, int j) const {
    if (device_.is_cuda()) return events_[i]->elapsedTime(*events_[j]);
    return std::chrono::duration<double, std::milli>(times_[j] - times_[i]).count();
}

namespace {
// "cuda" without an index is the current device; the allocator's calls need its index.
c10::DeviceIndex indexOf(const c10::Device& device) {
    return device.has_index() ? device.index() : at::accelerator::getDeviceIndex();
}
}  // namespace

MemoryStats memoryStats(const c10::Device& device) {
    if (!device.is_cuda()) return {};
    const auto stats = at::accelerator::getDeviceStats(indexOf(device));
    const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return {stats.allocated_bytes[agg].current, stats.reserved_bytes[agg].current,
            stats.allocated_bytes[agg].peak};
}

void resetPeakMemory(const c10::Device& device) {
    if (device.is_cuda()) at::accelerator::resetPeakStats(indexOf(device));
}

void releaseCachedMemory(const c10::Device& device) noexcept {
    if (!device.is_cuda()) return;
    try {
        at::accelerator::synchronizeDevice(indexOf(device));
        at::accelerator::emptyCache();
    } catch (const std::exception&) {
        // A device that cannot synchronise has failed the point already; nothing to add.
    }
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

namespace {
// "Tried to allocate 2.00 GiB" → bytes; 0 when the message has no size.
int64_t requestedBytes(const std::string& message) {
    static const std::regex re(R"(Tried to allocate ([0-9.]+) (B|KiB|MiB|GiB|TiB))");
    std::smatch m;
    if (!std::regex_search(message, m, re)) return 0;
    static const std::pair<const char*, double> units[] = {{"B", 1.0},
                                                           {"KiB", 1024.0},
                                                           {"MiB", 1048576.0},
                                                           {"GiB", 1073741824.0},
                                                           {"TiB", 1099511627776.0}};
    for (const auto& [u, f] : units)
        if (m[2] == u) return static_cast<int64_t>(std::stod(m[1]) * f);
    return 0;
}

// LibTorch's CPU allocator: "[enforce fail at alloc_cpu.cpp:127] ... you tried to allocate
// 640000000000 bytes. ..." → bytes; 0 when the message is not that one.
int64_t cpuAllocationBytes(const std::string& message) {
    static const std::regex re(R"(can't allocate memory: you tried to allocate ([0-9]+) bytes)");
    std::smatch m;
    return std::regex_search(message, m, re) ? std::stoll(m[1]) : 0;
}
}  // namespace

Failure describeFailure(const std::exception& e) {
    Failure f;
    const auto* ce = dynamic_cast<const c10::Error*>(&e);
    f.message = firstLine(ce ? ce->what_without_backtrace() : e.what());
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) {
        f.status = Status::OOM;
        f.oom_bytes = requestedBytes(f.message);
    } else if (const int64_t bytes = cpuAllocationBytes(f.message); bytes > 0) {
        f.status = Status::OOM;
        f.oom_bytes = bytes;
        f.message = fmt::format("out of memory on the CPU: tried to allocate {:.1f} GiB",
                                bytes / 1073741824.0);
    }
    return f;
}

int64_t systemMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

}  // namespace ts
