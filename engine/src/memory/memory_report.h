// The memory lab's results for people: aligned text, Markdown and CSV. Shared by the CLI
// (`memory`, `runs show/export`) and the window's exports. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "core/lab.h"
#include "memory/memory.h"

namespace ts {

struct MemoryReportOptions {
    int top = 10;  // rows of the largest-allocations and live-at-peak tables (0: all)
    TableFormat format = TableFormat::Text;
};

// Text / Markdown: the peak (when, by category, against the analytic model), the exact bytes
// of parameters, gradients and optimizer state, the largest allocations, what was live at
// the peak, the frontier. CSV: the timeline (one row per event that changed memory).
std::string formatMemory(const MemoryResult& r, const MemoryReportOptions& options);
// The timeline as CSV: event,time_us,phase,step,allocated,reserved,<one column per category>.
std::string memoryTimelineCsv(const MemoryResult& r);
// The peak-memory table over the points of a run: size, context, batch, precision, attention,
// mode, status, measured peak, predicted peak, and the peak's categories.
std::string memoryPeakTable(const std::vector<MemoryResult>& results, TableFormat format);

// Two memory runs (a point of each) category by category at their peaks, measured and
// predicted, with B − A; then the exact bytes of the model's and AdamW's tensors.
std::string formatMemoryComparison(const MemoryResult& a, const MemoryResult& b,
                                   TableFormat format);
// The point of a stored memory run: its rows' results (throws std::runtime_error naming a row
// that cannot be read, or a point that is not there).
MemoryResult storedMemoryPoint(const RunInfo& run, const std::vector<StoredRow>& rows, int point);

// "2.00 GiB asked for in backward of step 0 (layer.3/attention, aten::bmm), with 61.2 GiB
// allocated, 62.0 GiB reserved and 1.20 GiB free on the device"
std::string describeFailedAllocation(const FailedAllocation& f);

// "small ctx=256 batch=4 fp32 naive train on cuda, 2 recorded steps after 5 warm-up"
std::string memoryHeadline(const MemoryResult& r);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab memoryLab();

}  // namespace ts
