// The options that set one benchmark point, shared by `bench` (which sweeps them) and
// `profile` (one point): their flags, and the points they ask for, checked. Kept out of
// cli_common so that the torch-free fuzz targets that compile cli_common need no engine.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.h"
#include "core/sweep.h"

namespace CLI {
class App;
}

namespace ts::cli {

// Numbers are kept as text and checked here, so that a message can name the text as typed
// ("4294967297", "-1") rather than what a conversion made of it.
struct BenchOptions {
    // Each dimension's option as typed (see Note [point dimensions]: one option per row of the
    // point's table, by its flag), defaults filled in by addPointOptions. Empty: not given
    // where the default depends on the machine or other options (--device: cuda when present;
    // --source: python when --code is given, else trainscope) or the command has no such option.
    std::map<ts::Dimension, std::string> dims;
    std::string model_table = "2026";  // see Note [two model tables]: the edition --size names
    std::string sweep_file, db, label;
    std::optional<std::string> d_model, d_ff, num_layers, num_heads, vocab_size;
    std::string seed = "0", lr = "1e-4";
    bool compile = false;              // --compile is --exec compiled
    bool cuda_profiler_range = false;  // see Note [capture ranges] (runtime/step_ranges.h)
    // The user's code (the Python source): --code, --optimizer, --python, --timeout (--source is
    // a dimension).
    std::string code, optimizer, python, timeout = "600";
    bool check = false;   // bench --check: say what --code names, run nothing
    FormatChoice format;  // --format, or --markdown / --csv / --jsonl (see Note [one spelling])
    bool markdown = false, csv = false, jsonl = false, no_store = false, quiet = false;
    std::vector<std::string> given;  // the options on the command line, as named in --help
};

// Adds the point's options (--size ... --lr) to `cmd`; --steps and --compile only when
// `measured_steps` (the benchmark's: the profiler and memory labs count their own steps), --exec
// only when `exec` (the benchmark and the profiler; the memory lab runs eager steps).
void addPointOptions(CLI::App& cmd, BenchOptions& o, bool measured_steps, bool exec);
// Adds the user's-code options (--code, --source, --optimizer, --python, --timeout).
void addCodeOptions(CLI::App& cmd, BenchOptions& o);
// Notes in o.given which of cmd's options the command line gave (call in the callback).
void recordGivenOptions(const CLI::App& cmd, BenchOptions& o);
// Adds the output format (--format table|markdown|csv|jsonl, and --markdown, --csv, --jsonl as its
// aliases: see Note [one spelling]) to `cmd`, in an "output" group; `csv_help` says what the CSV
// holds.
void addFormatOptions(CLI::App& cmd, BenchOptions& o, const std::string& markdown_help,
                      const std::string& csv_help, const std::string& jsonl_help);
// Sets o.markdown, o.csv and o.jsonl from the format asked for (call in the callback).
void readFormat(BenchOptions& o);
// Whether the command line gave option `name` ("--sweep").
bool given(const BenchOptions& o, std::string_view name);
// The points the options (or the --sweep file) ask for, each validated and checked runnable
// here (BadInput naming the problem); `sweep`, when given, receives the sweep they came from.
std::vector<ts::PointConfig> benchPoints(const BenchOptions& o, ts::SweepSpec* sweep = nullptr);

}  // namespace ts::cli
