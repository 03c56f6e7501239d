// LibTorch's Kineto profiler started and stopped, and its Chrome trace written: what the profiler
// lab (a point's steps, attributed) and the distributed lab (each rank's steps, merged into one
// trace: distributed/rank_traces.h) share. LibTorch inside.
#pragma once

#include <torch/csrc/autograd/profiler_kineto.h>

#include <memory>
#include <set>
#include <string>

namespace ts {

// Registers Kineto on the calling thread (see Note [Kineto's first thread] in kineto.cpp), once
// per process; a no-op after the first call.
void prepareKinetoOnThisThread();

// Kineto records CPU ops and ranges (with their input shapes) and, with `cuda`, the GPU's kernels,
// memcpys and memsets through CUPTI, from construction until stop(). One at a time per process.
// Stops the profiler when destroyed running (a step threw), so that the next one can start.
class KinetoSession {
public:
    explicit KinetoSession(bool cuda);
    ~KinetoSession();
    KinetoSession(const KinetoSession&) = delete;
    KinetoSession& operator=(const KinetoSession&) = delete;

    // A key of the trace's top-level metadata, `json` its value as JSON text (Kineto's trace
    // carries it: "distributedInfo", "trainscope"). Only while running.
    static void addMetadata(const std::string& key, const std::string& json);
    // Stops recording: the events, and what writes the trace.
    std::unique_ptr<torch::autograd::profiler::ProfilerResult> stop();
    bool running() const { return active_; }

private:
    std::set<torch::profiler::impl::ActivityType> activities_;
    bool active_ = false;
};

// Writes Kineto's own Chrome trace of `result` to `path` (a .json file); throws
// std::runtime_error naming the path when it is not there afterwards.
void writeKinetoTrace(torch::autograd::profiler::ProfilerResult& result, const std::string& path);

}  // namespace ts
