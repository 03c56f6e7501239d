// The options that set one benchmark point, shared by `bench` (which sweeps them) and
// `profile` (one point): their flags, and the points they ask for, checked. Kept out of
// cli_common so that the torch-free fuzz targets that compile cli_common need no engine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace ts {
struct BenchConfig;
}

namespace ts::cli {

// Numbers are kept as text and checked here, so that a message can name the text as typed
// ("4294967297", "-1") rather than what a conversion made of it.
struct BenchOptions {
    std::string size = "small", context = "256", precision = "fp32", attention = "naive";
    std::string model_table = "2026";  // Note [two model tables]: the edition --size names
    std::string mode = "train", warmup = "5", batch_size = "4", device, sweep_file, db, label;
    std::optional<std::string> d_model, d_ff, num_layers, num_heads, vocab_size;
    std::string steps = "10", seed = "0", lr = "1e-4";
    std::string exec = "eager";  // --exec; --compile is --exec compiled
    bool compile = false;
    // The user's code (the Python source): --code, --optimizer, --python, --timeout, and
    // --source (default: python when --code is given, else trainscope).
    std::string source, code, optimizer, python, timeout = "600";
    bool check = false;  // bench --check: say what --code names, run nothing
    bool markdown = false, csv = false, jsonl = false, no_store = false, quiet = false;
    std::vector<std::string> given;  // the options on the command line, as named in --help
};

// Adds the point's options (--size ... --lr; --steps, --exec and --compile only when
// `measured_steps`: the benchmark's, since the profiler and memory labs run eager steps) to `cmd`.
void addPointOptions(CLI::App& cmd, BenchOptions& o, bool measured_steps);
// Adds the user's-code options (--code, --source, --optimizer, --python, --timeout).
void addCodeOptions(CLI::App& cmd, BenchOptions& o);
// Notes in o.given which of cmd's options the command line gave (call in the callback).
void recordGivenOptions(const CLI::App& cmd, BenchOptions& o);
// Whether the command line gave option `name` ("--sweep").
bool given(const BenchOptions& o, std::string_view name);
// The points the options (or the --sweep file) ask for, each validated and checked runnable
// here (BadInput naming the problem); `spec_json` is the run's spec as the store keeps it.
std::vector<ts::BenchConfig> benchPoints(const BenchOptions& o, std::string& spec_json);

}  // namespace ts::cli
