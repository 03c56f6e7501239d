// The warm-up and measured steps of a point as Nsight Systems sees them: NVTX ranges around
// them, and optionally cudaProfilerStart/Stop around the measured ones, so that `nsys profile
// --capture-range=cudaProfilerApi` (or `--capture-range=nvtx --nvtx-capture=measured`) records
// the measured steps and not the warm-up. Every lab that runs steps opens one: a point's steps
// (benchmark, profiler, memory), an attention cell's, a DDP rank's, an all-reduce size's
// iterations and precision's training steps. LibTorch inside (the device); NVTX where the build
// found it.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace ts {

class Observer;

// Note [capture ranges]: before the first warm-up step a range "warmup" opens, before the first
// measured step it closes and "measured" opens, until the last measured step ends; each step is
// a range "step N" inside (N over warm-up and measured steps together, from 0). "warmup" and
// "measured" are registered NVTX strings, which is what `nsys --nvtx-capture` matches by
// default (unregistered names need NSYS_NVTX_PROFILER_REGISTER_ONLY=0). With
// `cuda_profiler_range` on a CUDA device, cudaProfilerStart is called as "measured" opens and
// cudaProfilerStop (after the device finished the steps' work) as it closes: nsys's
// `--capture-range=cudaProfilerApi` records exactly that; a sweep's points each open their own,
// so `--capture-range-end=repeat` makes one report per point. On the CPU the option does
// nothing (the command line says so, cli::benchPoints). The ranges are NVTX only, not profiler
// scopes: the profiler lab's ranges (forward, layer.N, ...) stay as they were. A step that
// throws closes everything on the way out (the destructor).
class StepRanges {
public:
    // `observer` hears a failed cudaProfilerStart; null (a rank's worker): standard error.
    StepRanges(const c10::Device& device, bool cuda_profiler_range, Observer* observer);
    ~StepRanges();
    StepRanges(const StepRanges&) = delete;
    StepRanges& operator=(const StepRanges&) = delete;

    // The range of step `index` (a warm-up step or a measured one) until it is destroyed;
    // opens "warmup" or "measured" first when the step starts one.
    class Step {
    public:
        ~Step();
        Step(Step&&) = delete;
        Step& operator=(Step&&) = delete;

    private:
        friend class StepRanges;
        explicit Step(const std::string& name);
    };
    [[nodiscard]] Step step(int index, bool warmup);
    // Closes "warmup" or "measured" (and stops the CUDA profiler): the steps are over.
    void finish();

    // Whether cudaProfilerStart was called (and not yet stopped): for the tests.
    bool profilerStarted() const { return profiler_started_; }

private:
    enum class Open { None, Warmup, Measured };
    void close();
    c10::Device device_;
    bool cuda_profiler_range_;
    Open open_ = Open::None;
    bool profiler_started_ = false;
    Observer* observer_;
};

// Whether the build has NVTX ranges (the CUDA toolkit's NVTX 3 headers were found).
bool nvtxBuilt();

}  // namespace ts
