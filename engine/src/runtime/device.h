// What every lab's runner does with a device: time phases with marks (CUDA events on the
// current stream, a steady clock on the CPU), read the caching allocator's statistics, turn
// an exception into a result (OOM with the bytes asked for, or Failed with a one-line
// message), and hand cached memory back between points. LibTorch inside.
#pragma once

#include <c10/core/Device.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "runtime/host_memory.h"

namespace c10 {
struct Event;
}

namespace ts {

// "cpu", "cuda" (the first GPU) or "cuda:N" as a LibTorch device.
c10::Device parseDevice(const std::string& device);

// Marks the phase boundaries of a step. On a GPU these are device events on the current
// stream, so the times are the device's, not the host's launch times, and no host
// synchronisation happens between marks; on the CPU, where every op is synchronous, a clock.
class DeviceTimer {
public:
    DeviceTimer(const c10::Device& device, int marks);
    ~DeviceTimer();
    DeviceTimer(const DeviceTimer&) = delete;
    DeviceTimer& operator=(const DeviceTimer&) = delete;

    int marks() const { return static_cast<int>(times_.size()); }
    void mark(int i);
    // Waits until mark `i` has happened on the device.
    void wait(int i);
    // Milliseconds between marks i and j (both waited for).
    double ms(int i, int j) const;

private:
    c10::Device device_;
    std::vector<std::unique_ptr<c10::Event>> events_;
    std::vector<std::chrono::steady_clock::time_point> times_;
};

struct MemoryStats {
    int64_t allocated = 0, reserved = 0, peak = 0;  // bytes; 0 on the CPU
};
MemoryStats memoryStats(const c10::Device& device);
void resetPeakMemory(const c10::Device& device);
// Waits for the device, then returns the allocator's cached blocks, so that the next point
// starts from an empty device. Never throws.
void releaseCachedMemory(const c10::Device& device) noexcept;

// An exception as a result: OOM (with the bytes the failed allocation asked for, when the
// message says) or Failed, with the first line of the message (LibTorch appends a backtrace).
struct Failure {
    Status status = Status::Failed;
    std::string message;
    int64_t oom_bytes = 0;
};
Failure describeFailure(const std::exception& e);

// Runs `work`; an exception it throws becomes `result`'s status, error and oom_bytes (an OOM
// is a result, not a crash).
template <typename Result, typename Work>
void runRecordingFailure(Result& result, Work&& work) {
    try {
        work();
    } catch (const std::exception& e) {
        const Failure f = describeFailure(e);
        result.status = f.status;
        result.error = f.message;
        result.oom_bytes = f.oom_bytes;
    }
}

// The first line of a message.
std::string firstLine(const std::string& s);

}  // namespace ts
