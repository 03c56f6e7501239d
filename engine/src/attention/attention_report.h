// The attention lab's results as tables for people and files, and its stored runs.
#pragma once

#include <string>
#include <vector>

#include "attention/attention_lab.h"
#include "core/lab.h"

namespace ts {

// The settings every cell of a run shares, a Markdown line: "Median of 10 measured step(s) after
// 3 warm-up, on cuda."
std::string attentionSettings(int steps, int warmup, const std::string& device);
// A Markdown table (the passes' ms and TFLOP/s, memory), CSV, one JSON object a line.
std::string attentionMarkdown(const std::vector<AttentionCell>& cells,
                              const std::vector<AttentionPass>& passes);
std::string attentionCsvHeader();
std::string attentionCsvRow(const AttentionCell& cell);
std::string attentionJsonLine(const AttentionCell& cell);

// A stored attention run's cells; throws std::runtime_error naming an unreadable row.
std::vector<AttentionCell> attentionCellsFromRows(const RunInfo& run,
                                                  const std::vector<StoredRow>& rows);
// The passes a run measured, read off its cells.
std::vector<AttentionPass> measuredPasses(const std::vector<AttentionCell>& cells);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab attentionLab();

}  // namespace ts
