// The labs the engine offers, each known to the shared code (the store, `runs show/export`,
// the window's History) by its id alone. Registering a lab is one line in engine/src/labs.cpp.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/store.h"

namespace ts {

enum class TableFormat { Text, Markdown, Csv };
// How a stored run is shown: the table formats, or the run as one JSON document.
enum class ReportFormat { Table, Markdown, Csv, Json };

// One CSV table of a stored run, by name (see Note [tables other programs read]).
struct CsvTable {
    std::string name;  // "sums", "ops", "strategies"
    std::string csv;   // the header line and the rows
};
// The CSV of the table named `name`, the first table when `name` is empty, "" when there are
// none; a name that is not one throws std::invalid_argument saying which tables there are
// ("<whose> has no table 'x' (it has: a, b)").
std::string pickCsvTable(const std::vector<CsvTable>& tables, const std::string& name,
                         const std::string& whose);

struct Lab {
    std::string id;     // the store's run kind, the presets' and the window's name: "bench"
    std::string title;  // "End-to-end benchmark"
    // A stored run (its info and rows) in a format; throws std::runtime_error naming a row
    // that cannot be read.
    std::function<std::string(const RunInfo&, const std::vector<StoredRow>&, ReportFormat)> report;
    // Why a stored row cannot be read (damaged JSON, a bad value), or empty when it can: lets
    // `runs show` report the good rows of a run and name the bad ones.
    std::function<std::string(const StoredRow&)> row_problem;
    // A run whose results are several tables (the precision lab's sums and ops, the distributed
    // lab's all-reduce and strategies): each as its own CSV, the default first; only the tables
    // the run has. Empty: the run's CSV is report(..., ReportFormat::Csv), one table.
    std::function<std::vector<CsvTable>(const RunInfo&, const std::vector<StoredRow>&)> csv_tables;
};

// The settings of a stored run's spec (its JSON's numbers, text and yes/no, "command" left out)
// as one line for a report: "batch 8, context_length 16, device cpu"; empty when it has none.
std::string specSettings(const RunInfo& run);

// A stored run as one CSV table: the lab's table named `table`, or its first where `table` is
// empty. Throws std::invalid_argument naming the tables the run has when it has no such table.
std::string runCsv(const Lab& lab, const RunInfo& run, const std::vector<StoredRow>& rows,
                   const std::string& table);
// The names of a stored run's CSV tables (one, "results", for a lab of one table).
std::vector<std::string> runCsvTables(const Lab& lab, const RunInfo& run,
                                      const std::vector<StoredRow>& rows);

// Every lab, in display order (engine/src/labs.cpp).
const std::vector<Lab>& labs();
// The lab of a stored run, or nullptr (a store written by a newer TrainScope).
const Lab* findLab(std::string_view id);

std::string rowError(const RunInfo& run, const StoredRow& row, const char* what);

// Parses every row's result JSON with `parse`; an error names the run and the row.
template <typename T, typename Parse>
std::vector<T> parseRows(const RunInfo& run, const std::vector<StoredRow>& rows, Parse parse) {
    std::vector<T> out;
    out.reserve(rows.size());
    for (const auto& row : rows) {
        try {
            out.push_back(parse(row.result_json));
        } catch (const std::exception& e) {
            throw std::runtime_error(rowError(run, row, e.what()));
        }
    }
    return out;
}

// Text from a store or a user (a label, a device name) made safe for a terminal: control
// characters (newline, ESC, C1 codes such as CSI) and bytes that are not UTF-8 are written as
// escapes (\n, \x1b, \u009b, \xff), so a label can neither forge rows nor drive the terminal.
std::string printable(std::string_view text);
// printable() line by line: the newlines of a report stay, every other control goes.
std::string printableLines(std::string_view text);

// A Lab::row_problem from the function that parses a row's result JSON.
template <typename Parse>
std::function<std::string(const StoredRow&)> rowProblemOf(Parse parse) {
    return [parse](const StoredRow& row) -> std::string {
        try {
            parse(row.result_json);
            return {};
        } catch (const std::exception& e) {
            return e.what();
        }
    };
}

// A CSV field, quoted where it must be.
std::string csvEscape(const std::string& s);

// The environment as "key: value" lines (Text), a Markdown list, or CSV "key,value" rows.
std::string formatEnvironment(const Environment& env, TableFormat format);
// The CUDA line of an environment: "13.0", or "13.0 (LibTorch's build; no GPU)" where no driver
// was seen (a machine without a GPU reports the CUDA its LibTorch was built with, nothing more);
// "-" without CUDA.
std::string cudaLine(const Environment& env);

// The header line of a shown run: "run 3 (bench), 2026-11-23T10:00:00Z — 4 point(s), label",
// and " — not finished: 4 of 8 planned points stored" for a run that never ended.
std::string runHeadline(const RunInfo& run, size_t row_count, std::string_view rows_word);

}  // namespace ts
