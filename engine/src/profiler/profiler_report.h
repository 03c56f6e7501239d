// The profiler's results as tables for people: aligned text, Markdown and CSV. Shared by the
// CLI (`profile`, `runs show`) and, later, the window's exports. No LibTorch.
#pragma once

#include <string>

#include "core/lab.h"
#include "profiler/profiler.h"

namespace ts {

struct ProfileReportOptions {
    EventFilter filter;  // none: the course's default (the forward pass, then the whole step)
    int top = 10;        // rows per table (0: all)
    TableFormat format = TableFormat::Text;
};

// Text / Markdown: the phases (profiled against measured time), the top kernels (on the CPU:
// the top ops by self time) of the filter or of forward and the whole step, the matmuls with
// their FLOPs, and the category roll-up. CSV: every kernel (CPU: op) row of the filter.
std::string formatProfile(const ProfileResult& r, const ProfileReportOptions& options);

// "small ctx=256 batch=4 fp32 naive train on cuda, 3 profiled steps after 5 warm-up"
std::string profileHeadline(const ProfileResult& r);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab profilerLab();

}  // namespace ts
