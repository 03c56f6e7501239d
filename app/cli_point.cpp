#include "cli_point.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_common.h"
#include "core/json.h"
#include "core/point.h"
#include "core/sweep.h"
#include "runtime/environment.h"
#include "runtime/point_run.h"
#include "runtime/python_runner.h"

namespace ts::cli {

namespace {

// The option of dimension `d` as typed ("" where not given and without a default).
const std::string& dimOption(const BenchOptions& o, ts::Dimension d) {
    static const std::string none;
    const auto it = o.dims.find(d);
    return it == o.dims.end() ? none : it->second;
}

// A dimension's comma list, each item checked as its row in the point's table says: a whole
// number in its range, one of its choices, or text.
std::vector<std::string> parseDimension(const ts::DimensionDef& d, const std::string& value) {
    const std::string flag(d.flag);
    std::vector<std::string> out;
    if (d.kind == ts::DimensionDef::Kind::Integer) {
        for (int64_t v : parseIntList(flag, value, d.min, d.max)) out.push_back(std::to_string(v));
        return out;
    }
    for (const auto& item : requireList(flag, value)) {
        try {
            out.push_back(ts::parseValue(d, item));
        } catch (const std::invalid_argument& e) {
            throw BadInput(fmt::format("{}: {}", flag, e.what()));
        }
    }
    return out;
}

// Options that set points besides the dimensions' own (see Note [point dimensions]): with
// --sweep the file sets them, so giving one too is refused rather than silently ignored.
constexpr const char* kPointOptions[] = {
    "--d-model", "--d-ff", "--num-layers", "--num-heads", "--vocab-size", "--seed",       "--lr",
    "--compile", "--code", "--optimizer",  "--python",    "--timeout",    "--model-table"};

// A sweep file larger than this is no sweep (a log, a device, a mistake).
constexpr std::uintmax_t kMaxSweepFileBytes = 16 << 20;

// The sweep file's text. A folder opens as a stream on Linux and fails later with no name
// attached, so it is refused here.
std::string readSweepFile(const std::string& path) {
    // Regular files only, and not huge: /dev/zero would grow without end, a FIFO would block.
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw BadInput(fmt::format("--sweep: cannot read '{}': no such file", path));
    if (fs::is_directory(st))
        throw BadInput(fmt::format("--sweep: '{}' is a directory, not a JSON file", path));
    if (!fs::is_regular_file(st))
        throw BadInput(fmt::format(
            "--sweep: '{}' is not a regular file (a device, a pipe or a socket)", path));
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > kMaxSweepFileBytes)
        throw BadInput(
            fmt::format("--sweep: '{}' has {} bytes, more than a sweep file's limit of {} MiB",
                        path, size, kMaxSweepFileBytes >> 20));
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) throw BadInput(fmt::format("--sweep: cannot read '{}'", path));
    return text.str();
}

void checkSweepAlone(const BenchOptions& o) {
    if (o.sweep_file.empty()) throw BadInput("--sweep: no file given");
    std::vector<std::string> names(std::begin(kPointOptions), std::end(kPointOptions));
    for (const auto& d : ts::pointDimensions()) names.emplace_back(d.flag);
    for (const auto& name : names)
        if (given(o, name))
            throw BadInput(fmt::format(
                "--sweep {}: {} cannot be given with --sweep; set it in the file's \"base\" or "
                "its lists",
                o.sweep_file, name));
}

// A model dimension given on the command line: a positive whole number.
void readDimension(const std::optional<std::string>& text, const char* flag, int64_t& out) {
    if (text) out = parseIntIn(flag, *text, 1, std::numeric_limits<int64_t>::max());
}

}  // namespace

// The Python source's flags into the sweep: --source (a dimension) and the code's settings,
// checked up front (an interpreter that cannot be found, a file that does not exist).
static void readCodeOptions(const BenchOptions& o, ts::SweepSpec& spec) {
    for (const char* flag : {"--optimizer", "--python", "--timeout"})
        if (given(o, flag) && o.code.empty())
            throw BadInput(fmt::format("{} is for your own code: give --code too", flag));
    if (given(o, "--code") && o.code.empty()) throw BadInput("--code: no code given");
    const std::string& source = dimOption(o, ts::Dimension::Source);
    auto& sources = spec[ts::Dimension::Source];
    sources = parseDimension(ts::dimensionDef(ts::Dimension::Source),
                             source.empty() ? (o.code.empty() ? "trainscope" : "python") : source);
    const bool python = std::find(sources.begin(), sources.end(), "python") != sources.end();
    if (!python) {
        if (!o.code.empty())
            throw BadInput(
                "--code: --source trainscope runs TrainScope's own model; add python to run yours");
        return;
    }
    if (o.code.empty())
        throw BadInput(
            "--source python: give your code with --code (a course checkout, module:callable or "
            "path/file.py:callable)");
    ts::PythonCode& c = spec.base.python;
    c.code = o.code;
    c.optimizer = o.optimizer;
    c.python = o.python;
    c.timeout_s = parseFinite("--timeout", o.timeout);
    if (!(c.timeout_s > 0) || c.timeout_s > 86400)
        throw BadInput(fmt::format("--timeout: {} is outside (0, 86400] seconds", o.timeout));
}

bool given(const BenchOptions& o, std::string_view name) {
    return std::find(o.given.begin(), o.given.end(), name) != o.given.end();
}

void addPointOptions(CLI::App& cmd, BenchOptions& o, bool measured_steps, bool exec) {
    // One option per dimension of the point (see Note [point dimensions]), its default the
    // default point's value (the course's small model).
    ts::PointConfig defaults;
    defaults.model = *ts::modelPreset("small");
    for (const auto& d : ts::pointDimensions()) {
        if (d.id() == ts::Dimension::Source) continue;  // with the user's code (addCodeOptions)
        // The profiler and memory labs run their own steps (--profile-steps); the memory lab's
        // are eager.
        if ((!measured_steps && d.id() == ts::Dimension::Steps) ||
            (!exec && d.id() == ts::Dimension::Exec))
            continue;
        std::string help(d.help);
        if (d.kind == ts::DimensionDef::Kind::Choice)
            help += fmt::format(": {}", fmt::join(d.choices(), " | "));
        if (d.id() == ts::Dimension::Device) {
            cmd.add_option(std::string(d.flag), o.dims[d.id()],
                           help + " (default: cuda when present)");
            continue;
        }
        o.dims[d.id()] = d.get(defaults);
        // See Note [one spelling]: --batch, as other commands had it, is --batch-size.
        const std::string names =
            d.id() == ts::Dimension::Batch ? std::string(d.flag) + ",--batch" : std::string(d.flag);
        cmd.add_option(names, o.dims[d.id()], help)->capture_default_str();
        if (d.id() == ts::Dimension::Size)
            cmd.add_option("--model-table,--sizes", o.model_table,
                           "2026 | 2025: the course edition whose table --size names (xl is 2560 "
                           "wide, 32 layers in 2026; 1600 wide, 48 layers in 2025)")
                ->capture_default_str();
    }
    if (measured_steps) cmd.add_flag("--compile", o.compile, "Shorthand for --exec compiled");
    cmd.add_option("--d-model", o.d_model, "Custom model width (overrides the size)");
    cmd.add_option("--d-ff", o.d_ff, "Custom feed-forward width");
    cmd.add_option("--num-layers", o.num_layers, "Custom number of layers");
    cmd.add_option("--num-heads", o.num_heads, "Custom number of heads");
    cmd.add_option("--vocab-size", o.vocab_size, "Vocabulary size (default 10000)");
    cmd.add_option("--seed", o.seed, "Random seed for weights and batch")->capture_default_str();
    cmd.add_option("--lr,--learning-rate", o.lr, "AdamW learning rate")->capture_default_str();
    cli::addCudaProfilerRangeOption(cmd, o.cuda_profiler_range,
                                    "the measured steps (of every point)");
}

void addCodeOptions(CLI::App& cmd, BenchOptions& o) {
    cmd.add_option("--code", o.code,
                   "Your own model (the Python source): a course checkout's folder (cs336_basics, "
                   "tests/adapters.py), "
                   "module:callable or path/file.py:callable returning an nn.Module from the "
                   "point's configuration");
    cmd.add_option(
        "--source", o.dims[ts::Dimension::Source],
        "trainscope | python, or both to compare (default: python with --code, else trainscope)");
    cmd.add_option(
        "--optimizer", o.optimizer,
        "With --code: module:callable taking (params, lr=...) (default: the checkout's AdamW, else "
        "torch.optim.AdamW)");
    cmd.add_option("--python", o.python,
                   "With --code: the Python interpreter (default: $TRAINSCOPE_PYTHON or the one "
                   "set-up found with torch)");
    cmd.add_option("--timeout", o.timeout,
                   "With --code: seconds a step (or a compilation) of your code may take before it "
                   "is stopped")
        ->capture_default_str();
}

void addFormatOptions(CLI::App& cmd, BenchOptions& o, const std::string& markdown_help,
                      const std::string& csv_help, const std::string& jsonl_help) {
    auto* group = cmd.add_option_group("output", "Output format (default: aligned tables)");
    o.format.add(cmd, {"table", "markdown", "csv", "jsonl"},
                 {{"markdown", markdown_help}, {"csv", csv_help}, {"jsonl", jsonl_help}}, group);
}

void readFormat(BenchOptions& o) {
    const std::string format = o.format.get();
    o.markdown = format == "markdown";
    o.csv = format == "csv";
    o.jsonl = format == "jsonl";
}

void recordGivenOptions(const CLI::App& cmd, BenchOptions& o) {
    for (const CLI::Option* opt : cmd.get_options())
        if (opt->count() > 0) o.given.push_back(opt->get_name());
}

std::vector<ts::PointConfig> benchPoints(const BenchOptions& o, ts::SweepSpec* sweep) {
    ts::SweepSpec spec;
    if (given(o, "--sweep")) {
        checkSweepAlone(o);
        try {
            spec = ts::sweepFromJson(ts::parseJson(readSweepFile(o.sweep_file)));
        } catch (const nlohmann::json::exception& e) {
            throw BadInput(fmt::format("--sweep {}: not valid JSON: {}", o.sweep_file, e.what()));
        } catch (const std::invalid_argument& e) {
            throw BadInput(fmt::format("--sweep {}: {}", o.sweep_file, e.what()));
        }
    } else {
        ts::PointConfig& b = spec.base;
        const bool custom = o.d_model || o.d_ff || o.num_layers || o.num_heads;
        const auto table = ts::parseModelTable(o.model_table);
        if (!table)
            throw BadInput(fmt::format(
                "--model-table: '{}' is not 2026 or 2025 (the course edition whose sizes --size "
                "names; the sizes themselves go to --size)",
                o.model_table));
        spec.table = *table;
        const std::string& size = dimOption(o, ts::Dimension::Size);
        for (const auto& given_size : requireList("--size", size)) {
            const std::string s = ts::presetName(given_size, *table);
            if (s != "custom" && !ts::modelPreset(s))
                throw BadInput(fmt::format("--size: '{}' is not one of {}, custom", given_size,
                                           fmt::join(ts::modelPresetNames(), ", ")));
            spec[ts::Dimension::Size].push_back(s);
        }
        auto& sizes = spec[ts::Dimension::Size];
        if (custom) {
            // Custom dimensions start from the (single) size given and override it.
            if (sizes.size() > 1)
                throw BadInput("--d-model/--d-ff/--num-layers/--num-heads need a single --size");
            b.model = sizes.empty() || sizes[0] == "custom" ? ts::ModelConfig{}
                                                            : *ts::modelPreset(sizes[0]);
            b.model.name = "custom";
            readDimension(o.d_model, "--d-model", b.model.d_model);
            readDimension(o.d_ff, "--d-ff", b.model.d_ff);
            readDimension(o.num_layers, "--num-layers", b.model.num_layers);
            readDimension(o.num_heads, "--num-heads", b.model.num_heads);
            sizes = {"custom"};
        }
        readDimension(o.vocab_size, "--vocab-size", b.model.vocab_size);
        // Every other swept dimension from its option (see Note [point dimensions]); the size and
        // the source have their own rules (above, readCodeOptions), the device its default.
        for (const auto& d : ts::pointDimensions()) {
            if (d.list_key.empty() || d.id() == ts::Dimension::Size ||
                d.id() == ts::Dimension::Source || d.id() == ts::Dimension::Device)
                continue;
            const std::string& text = dimOption(o, d.id());
            if (!text.empty()) spec[d.id()] = parseDimension(d, text);
        }
        if (o.compile) {
            const std::string& exec = dimOption(o, ts::Dimension::Exec);
            if (given(o, "--exec") &&
                spec[ts::Dimension::Exec] != std::vector<std::string>{"compiled"})
                throw BadInput(fmt::format(
                    "--compile means --exec compiled; it cannot be given with --exec {}", exec));
            spec[ts::Dimension::Exec] = {"compiled"};
        }
        readCodeOptions(o, spec);
        spec[ts::Dimension::Device] =
            given(o, "--device")
                ? requireList("--device", dimOption(o, ts::Dimension::Device))
                : std::vector<std::string>{ts::capabilities().cuda_available ? "cuda" : "cpu"};
        if (const std::string& steps = dimOption(o, ts::Dimension::Steps); !steps.empty())
            b.steps = static_cast<int>(parseIntIn("--steps", steps, 1, ts::kMaxSteps));
        b.seed = parseSeed("--seed", o.seed);
        b.learning_rate = parseFinite("--lr", o.lr);
    }
    // Not a point setting but how its steps run: allowed beside --sweep too.
    if (o.cuda_profiler_range) spec.base.cuda_profiler_range = true;
    std::vector<ts::PointConfig> points;
    try {
        points = ts::expandSweep(spec);
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
    for (const auto& p : points) {
        auto problems = ts::validatePoint(p);
        if (problems.empty()) problems = ts::checkPointRunnable(p);
        if (problems.empty() && p.source == ts::Source::Python)
            if (std::string e = ts::pythonCodeProblem(p.python.code, p.python.python); !e.empty())
                problems.push_back(e);
        if (!problems.empty())
            throw BadInput(fmt::format(
                "{} (size {}, context {}, {}{}{} on {})", fmt::join(problems, "; "), p.model.name,
                p.model.context_length, ts::toString(p.precision),
                p.exec == ts::ExecMode::Eager ? "" : " " + std::string(ts::toString(p.exec)),
                p.source == ts::Source::Python ? " (your code)" : "", p.device));
    }
    if (o.cuda_profiler_range)
        for (const auto& p : points)
            if (p.device.rfind("cuda", 0) != 0) {
                noteCudaProfilerRangeOff(true, p.device);
                break;
            }
    if (sweep) *sweep = std::move(spec);
    return points;
}

}  // namespace ts::cli
