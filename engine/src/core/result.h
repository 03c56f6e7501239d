// Results of a run: plain value types (no LibTorch, no Qt), streamed through the observer
// and stored as they arrive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainscope/engine/config.h"

namespace ts {

// Where a result was measured. Filled once per process (see environment.h).
struct Environment {
    std::string device_name;     // "NVIDIA H100 80GB HBM3" or the CPU model for cpu runs
    std::string driver_version;  // CUDA driver, empty on the CPU
    std::string cuda_version;    // CUDA runtime LibTorch was built with, empty if none
    std::string torch_version;   // e.g. "2.11.0"
    std::string cpu;             // CPU model name
    std::string hostname;
    std::string date;            // ISO 8601, UTC, when the run started
    std::string git_commit;      // of the TrainScope build
    std::string trainscope_version;
};

// One training step as measured. Times in milliseconds; memory in bytes (0 on the CPU).
struct StepSample {
    int index = 0;        // 0-based over warm-up and measured steps together
    bool warmup = false;  // warm-up steps are recorded but not in the statistics
    double forward_ms = 0;
    double backward_ms = 0;   // 0 in forward mode
    double optimizer_ms = 0;  // 0 unless train mode
    double total_ms = 0;
    double loss = 0;
    int64_t memory_allocated = 0;  // after the step
    int64_t memory_reserved = 0;
    int64_t memory_peak = 0;  // peak allocated during the step
};

struct Stats {
    int count = 0;
    double mean = 0, std = 0, median = 0, min = 0, max = 0;
    double cv = 0;  // coefficient of variation: std / mean (0 when the mean is 0)
};

// Sample statistics (std with Bessel's correction; 0 for fewer than two values).
Stats computeStats(const std::vector<double>& values);

enum class RunStatus { Ok, OOM, Failed, Cancelled };
std::string_view toString(RunStatus s);

struct BenchResult {
    BenchConfig config;
    RunStatus status = RunStatus::Ok;
    std::string error;       // the message for OOM / Failed
    int64_t oom_bytes = 0;   // bytes the failed allocation asked for, when known
    int64_t parameter_count = 0;
    std::vector<StepSample> steps;  // warm-up and measured, in order
    Stats forward, backward, optimizer, total;  // over measured steps only
    int64_t peak_memory = 0;  // bytes, over the whole run (0 on the CPU)
    Environment environment;
};

// Recomputes the four Stats of `r` from its measured (non-warm-up) steps.
void summarize(BenchResult& r);

}  // namespace ts
