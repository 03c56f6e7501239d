// A table for people, as the labs' reports print it: aligned text, Markdown or CSV. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/lab.h"

namespace ts {

struct TextTable {
    std::vector<std::string> headers;
    std::vector<bool> right;  // per column: right-aligned (numbers)
    std::vector<std::vector<std::string>> rows;
    // Markdown: cells as they are, not padded to their column's width ("| a | b |").
    bool compact = false;
};

// Text: columns padded to their widest cell; Markdown: a pipe table (right-aligned columns
// marked, every header and cell through markdownText); CSV: fields quoted where they must be
// (see Note [tables other programs read]: the headers are then csvName's).
std::string renderTable(const TextTable& t, TableFormat format);

// Note [tables other programs read]: a CSV (the CLI's --csv, `runs export --format csv`, the
// window's table export) is one table that pandas, a spreadsheet or R reads as it is: one header
// line, no comment lines, snake_case headers (csvName), numbers as numbers with their unit in the
// header (`total_ms_mean`, `peak_memory_bytes`, `hidden_share` as a fraction), and an empty field
// for what was not measured (never 0, "-" or "n/a"). Where a run has several tables (the
// precision lab's sums, tensors, ops and steps; the distributed lab's all-reduce, strategies and
// memory), each is its own CSV, chosen by name (--table); the environment, where one is wanted,
// goes beside it as JSON. The Markdown a report prints escapes every label and cell
// (markdownText), and says the settings the table's rows share.

// Text as Markdown shows it, not as markup: a label, a device's name, a cell. The characters
// Markdown gives a meaning (\ ` * _ [ ] < > | # ~ &) are backslash-escaped (`_` only where it
// could start or end emphasis, so "d_model" stays as it is; `&` only where it could start an
// entity) and a newline becomes a space: "<b>" stays "<b>", a "|" does not split a cell, a "#"
// starts no heading.
std::string markdownText(std::string_view text);
// A CSV header from a header for people: lower-case ASCII letters, digits and underscores.
// "Forward (ms)" → "forward_ms", "algbw GB/s" → "algbw_gb_per_s", "% peak" → "percent_peak",
// "B − A" → "b_minus_a", "Total (µs)" → "total_us"; empty → "column".
std::string csvName(std::string_view header);
// A number for CSV: the shortest text that reads back as the same double ("0.1", "1e-05");
// empty for NaN or infinity (not measured).
std::string csvNumber(double v);
// The same for a value that may be absent (not measured: empty).
std::string csvNumber(const std::optional<double>& v);
// A table's title line: "### title" in Markdown, a plain line otherwise.
std::string tableHeading(const std::string& title, TableFormat format);
// Columns a string takes on a terminal: its UTF-8 code points.
size_t displayWidth(const std::string& s);
// Bytes for people: "1.50 GiB", "12.0 MiB", "3.0 KiB", "512 B".
std::string formatBytes(int64_t bytes);

}  // namespace ts
