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

// Two profiles compared (See Note [profile diff]): the two headlines and totals, then one row
// per kernel (or op) name, A's and B's time and calls per profiled step, the difference and the
// ratio, largest |difference| first (`top` rows, 0: all). CSV: the rows alone.
std::string formatProfileDiff(const ProfileResult& a, const ProfileResult& b, TableFormat format,
                              int top = 0);

// A stored run's CSV tables (See Note [tables other programs read]): "kernels" (a GPU run's
// default), "ops" (the CPU's default), "calltree" (See Note [call tree]: depth, path, inclusive
// and self ms, share, calls). Every profile of the run under one header, its index first.
std::vector<CsvTable> profileCsvTables(const std::vector<ProfileResult>& results);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab profilerLab();

}  // namespace ts
