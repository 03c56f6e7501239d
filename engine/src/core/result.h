// What every lab's results share: where they were measured, statistics, status. Plain
// value types (no LibTorch, no Qt).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// Where a result was measured. Filled once per process (see environment.h).
struct Environment {
    std::string device_name;     // "NVIDIA H100 80GB HBM3" or the CPU model for cpu runs
    std::string driver_version;  // CUDA driver, empty on the CPU
    std::string cuda_version;    // CUDA runtime LibTorch was built with, empty if none
    std::string torch_version;   // e.g. "2.11.0"
    std::string cpu;             // CPU model name
    std::string hostname;
    std::string date;        // ISO 8601, UTC, when the run started
    std::string git_commit;  // of the TrainScope build
    std::string trainscope_version;
};

struct Stats {
    int count = 0;
    double mean = 0, std = 0, median = 0, min = 0, max = 0;
    double cv = 0;  // coefficient of variation: std / mean (0 when the mean is 0)
};

// Sample statistics (std with Bessel's correction; 0 for fewer than two values).
Stats computeStats(const std::vector<double>& values);

// How a point, cell or step of any lab ended. Failures are results, not exceptions.
enum class Status { Ok, OOM, Failed, Unsupported, Cancelled };
std::string_view toString(Status s);  // "ok", "OOM", "failed", "unsupported", "cancelled"
std::optional<Status> parseStatus(std::string_view s);
const std::vector<Status>& allStatuses();
std::string namesOf(const std::vector<Status>&);

// An error's text as one line for a person (a worker's failure, a row's error): LibTorch's
// first line without its C++ backtrace ("frame #0: ...", "Exception raised from ...") and
// without "[enforce fail at alloc_cpu.cpp:127] err == 0. "; a CPU allocation that failed is
// "out of memory on the CPU: tried to allocate 16384.0 GiB". The whole text belongs in a log.
std::string oneLineError(std::string_view what);

}  // namespace ts
