// Benchmark results as tables for people: aligned text, Markdown (shaped like the course writeups)
// and CSV. Shared by the CLI and the window's exports. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/lab.h"

namespace ts {

// One row per result: the model's dimensions, then those configuration columns that differ
// between the results (context, precision, mode, ...), then forward / backward / optimizer /
// total as mean ± std in ms, peak memory and status. CSV always has every column, raw numbers.
std::string formatResults(const std::vector<BenchResult>& results, TableFormat format);

// The settings every result shares, which the tables leave out ("context length 256, batch size
// 4, precision fp32, ..., measured steps 10, device cuda"): said above a Markdown table.
std::string sharedSettings(const std::vector<BenchResult>& results);

// A whole run as a Markdown report: environment, configuration, results table, per-step table.
std::string markdownReport(const std::string& title, const std::vector<BenchResult>& results);

// A stored benchmark run's results; throws std::runtime_error naming an unreadable row.
std::vector<BenchResult> benchResultsFromRows(const RunInfo& run,
                                              const std::vector<StoredRow>& rows);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab benchmarkLab();

}  // namespace ts
