#include "runtime/device.h"

#include <ATen/DeviceAccelerator.h>
#include <c10/core/Event.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <string_view>

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

namespace {

// The first whole number in a file (0 when it has none, or "max").
int64_t numberIn(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return 0;
    long long v = 0;
    const int n = std::fscanf(f, "%lld", &v);
    std::fclose(f);
    return n == 1 && v > 0 ? static_cast<int64_t>(v) : 0;
}

int64_t memAvailable() {
    std::FILE* f = std::fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char key[64];
    long long kb = 0;
    int64_t out = 0;
    while (std::fscanf(f, "%63s %lld kB\n", key, &kb) == 2)
        if (std::string_view(key) == "MemAvailable:") {
            out = static_cast<int64_t>(kb) * 1024;
            break;
        }
    std::fclose(f);
    return out;
}

// This process's cgroup folder (v2: the "0::" line of /proc/self/cgroup).
std::string cgroupFolder() {
    std::FILE* f = std::fopen("/proc/self/cgroup", "r");
    if (!f) return {};
    char line[4096];
    std::string out;
    while (std::fgets(line, sizeof line, f)) {
        std::string_view l(line);
        if (l.substr(0, 3) == "0::") {
            out = std::string(l.substr(3));
            while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
            break;
        }
    }
    std::fclose(f);
    return out;
}

}  // namespace

int64_t availableMemoryBytes() {
    int64_t available = memAvailable();
    auto lower = [&](int64_t limit, int64_t used) {
        // A limit near 2^63 (v1's "none") is no limit.
        if (limit <= 0 || limit > (int64_t{1} << 60)) return;
        const int64_t left = std::max<int64_t>(0, limit - used);
        available = available > 0 ? std::min(available, left) : left;
    };
    if (const std::string g = cgroupFolder(); !g.empty()) {
        const std::string dir = "/sys/fs/cgroup" + (g == "/" ? std::string() : g);
        lower(numberIn(dir + "/memory.max"), numberIn(dir + "/memory.current"));
    }
    lower(numberIn("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
          numberIn("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    return available;
}

int64_t systemMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

}  // namespace ts
