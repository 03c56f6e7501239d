// Results as tables for people: aligned text, Markdown (shaped like the course writeups) and
// CSV. Shared by the CLI and the window's exports. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "trainscope/engine/result.h"

namespace ts {

enum class TableFormat { Text, Markdown, Csv };

// One row per result: the model's dimensions, then those configuration columns that differ
// between the results (context, precision, mode, ...), then forward / backward / optimizer /
// total as mean ± std in ms, peak memory and status. CSV always has every column, raw numbers.
std::string formatResults(const std::vector<BenchResult>& results, TableFormat format);

// The environment as "key: value" lines (Text), a Markdown list, or CSV "key,value" rows.
std::string formatEnvironment(const Environment& env, TableFormat format);

// A whole run as a Markdown report: environment, configuration, results table, per-step table.
std::string markdownReport(const std::string& title, const std::vector<BenchResult>& results);

}  // namespace ts
