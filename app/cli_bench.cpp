// `trainscope-cli bench`: the benchmark lab from the command line. A comma list in a flag
// sweeps it; every finished point is stored.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_report.h"
#include "cli_common.h"
#include "core/json.h"
#include "core/store.h"
#include "runtime/environment.h"

namespace {

using namespace ts::cli;

template <typename T, typename Parse>
std::vector<T> parseList(const std::string& flag, const std::string& value, Parse parse,
                         const char* allowed) {
    std::vector<T> out;
    for (const auto& item : requireList(flag, value)) {
        auto v = parse(item);
        if (!v) throw BadInput(fmt::format("{}: '{}' is not one of {}", flag, item, allowed));
        out.push_back(*v);
    }
    return out;
}

// Prints progress on stderr and, with --jsonl, every step and result on stdout.
class CliObserver : public ts::BenchObserver {
public:
    CliObserver(bool jsonl, bool quiet) : jsonl_(jsonl), quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}
    void pointStarted(int index, int count, const ts::BenchConfig& c) override {
        count_ = count;
        current_ = c;
        if (!quiet_)
            std::fprintf(stderr, "%s[%d/%d] %s ctx=%lld batch=%lld %s %s %s on %s\n", tty_ ? "\r\033[K" : "",
                         index + 1, count, c.model.name.c_str(), static_cast<long long>(c.model.context_length),
                         static_cast<long long>(c.batch_size), std::string(ts::toString(c.precision)).c_str(),
                         std::string(ts::toString(c.attention)).c_str(), std::string(ts::toString(c.mode)).c_str(),
                         c.device.c_str());
    }
    void stepFinished(int point, const ts::StepSample& s) override {
        if (jsonl_) {
            nlohmann::json j = ts::toJson(s);
            j["type"] = "step";
            j["point"] = point;
            std::cout << ts::dumpJson(j) << '\n' << std::flush;
        }
        if (!quiet_ && tty_)
            std::fprintf(stderr, "\r\033[K    step %d/%d%s  %.2f ms  loss %.4f", s.index + 1,
                         current_.warmup + current_.steps, s.warmup ? " (warm-up)" : "", s.total_ms, s.loss);
    }
    void pointFinished(int point, const ts::BenchResult& r) override {
        if (jsonl_) {
            nlohmann::json j = ts::toJson(r);
            j["type"] = "result";
            j["point"] = point;
            std::cout << ts::dumpJson(j) << '\n' << std::flush;
        }
        const std::string status(ts::toString(r.status));
        if (!quiet_) {
            if (tty_) std::fputs("\r\033[K", stderr);
            if (r.status == ts::Status::Ok)
                std::fprintf(stderr, "    total %.2f ± %.2f ms per step\n", r.total.mean, r.total.std);
            else
                std::fprintf(stderr, "    %s: %s\n", status.c_str(), r.error.c_str());
        } else if (r.status != ts::Status::Ok && r.status != ts::Status::Cancelled) {
            // Quiet hides progress, not the reason for a failure.
            std::fprintf(stderr, "point %d: %s: %s\n", point + 1, status.c_str(), r.error.c_str());
        }
    }
    void log(ts::LogLevel level, const std::string& message) override {
        if (level != ts::LogLevel::Error) return;
        std::fprintf(stderr, "error: %s\n", message.c_str());
        error_ = true;
    }
    // An Error was logged (a point that could not be stored): the run failed.
    bool sawError() const { return error_; }

private:
    bool jsonl_, quiet_, tty_;
    bool error_ = false;
    int count_ = 0;
    ts::BenchConfig current_;
};

// Numbers are kept as text and checked here, so that a message can name the text as typed
// ("4294967297", "-1") rather than what a conversion made of it.
struct BenchOptions {
    std::string size = "small", context = "256", precision = "fp32", attention = "naive";
    std::string mode = "train", warmup = "5", batch_size = "4", device, sweep_file, db, label;
    std::optional<std::string> d_model, d_ff, num_layers, num_heads, vocab_size;
    std::string steps = "10", seed = "0", lr = "1e-4";
    bool markdown = false, csv = false, jsonl = false, no_store = false, quiet = false;
    std::vector<std::string> given;  // the options on the command line, as named in --help
};

// Options that set points: with --sweep the file sets them, so giving one too is refused
// rather than silently ignored.
constexpr const char* kPointOptions[] = {"--size", "--d-model", "--d-ff", "--num-layers", "--num-heads",
                                         "--vocab-size", "--context-length", "--batch-size", "--warmup",
                                         "--steps", "--mode", "--precision", "--attention", "--device",
                                         "--seed", "--lr"};

// The sweep file's text. A folder opens as a stream on Linux and fails later with no name
// attached, so it is refused here.
std::string readSweepFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw BadInput(fmt::format("--sweep: '{}' is a directory, not a JSON file", path));
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) throw BadInput(fmt::format("--sweep: cannot read '{}'", path));
    return text.str();
}

bool given(const BenchOptions& o, std::string_view name) {
    return std::find(o.given.begin(), o.given.end(), name) != o.given.end();
}

void checkSweepAlone(const BenchOptions& o) {
    if (o.sweep_file.empty()) throw BadInput("--sweep: no file given");
    for (const char* name : kPointOptions)
        if (given(o, name))
            throw BadInput(fmt::format("--sweep {}: {} cannot be given with --sweep; set it in the file's \"base\" or "
                                       "its lists",
                                       o.sweep_file, name));
}

// A model dimension given on the command line: a positive whole number.
void readDimension(const std::optional<std::string>& text, const char* flag, int64_t& out) {
    if (text) out = parseIntIn(flag, *text, 1, std::numeric_limits<int64_t>::max());
}

std::vector<ts::BenchConfig> benchPoints(const BenchOptions& o, std::string& spec_json) {
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
        ts::BenchConfig& b = spec.base;
        const bool custom = o.d_model || o.d_ff || o.num_layers || o.num_heads;
        for (const auto& s : requireList("--size", o.size)) {
            if (s != "custom" && !ts::modelPreset(s))
                throw BadInput(fmt::format("--size: '{}' is not one of {}, custom", s,
                                           fmt::join(ts::modelPresetNames(), ", ")));
            spec.sizes.push_back(s);
        }
        if (custom) {
            // Custom dimensions start from the (single) size given and override it.
            if (spec.sizes.size() > 1) throw BadInput("--d-model/--d-ff/--num-layers/--num-heads need a single --size");
            b.model = spec.sizes.empty() || spec.sizes[0] == "custom" ? ts::ModelConfig{} : *ts::modelPreset(spec.sizes[0]);
            b.model.name = "custom";
            readDimension(o.d_model, "--d-model", b.model.d_model);
            readDimension(o.d_ff, "--d-ff", b.model.d_ff);
            readDimension(o.num_layers, "--num-layers", b.model.num_layers);
            readDimension(o.num_heads, "--num-heads", b.model.num_heads);
            spec.sizes = {"custom"};
        }
        readDimension(o.vocab_size, "--vocab-size", b.model.vocab_size);
        // Zero and negative values pass here so that validateBench names the field.
        constexpr int64_t kAny = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
        spec.context_lengths = parseIntList("--context-length", o.context, kAny, kMax);
        spec.batch_sizes = parseIntList("--batch-size", o.batch_size, kAny, kMax);
        for (int64_t w : parseIntList("--warmup", o.warmup, 0, ts::kMaxSteps)) spec.warmups.push_back(static_cast<int>(w));
        spec.precisions = parseList<ts::Precision>("--precision", o.precision, ts::parsePrecision, "fp32, bf16, fp16");
        spec.attentions = parseList<ts::AttentionImpl>("--attention", o.attention, ts::parseAttentionImpl,
                                                       ts::namesOf(ts::allAttentionImpls()).c_str());
        spec.modes = parseList<ts::Mode>("--mode", o.mode, ts::parseMode, "forward, forward-backward, train");
        spec.devices = given(o, "--device") ? requireList("--device", o.device)
                                            : std::vector<std::string>{ts::capabilities().cuda_available ? "cuda" : "cpu"};
        b.steps = static_cast<int>(parseIntIn("--steps", o.steps, 1, ts::kMaxSteps));
        b.seed = parseSeed("--seed", o.seed);
        b.learning_rate = parseFinite("--lr", o.lr);
    }
    std::vector<ts::BenchConfig> points;
    try {
        points = ts::expandSweep(spec);
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
    for (const auto& p : points) {
        auto problems = ts::validateBench(p);
        if (problems.empty()) problems = ts::checkBenchRunnable(p);
        if (!problems.empty())
            throw BadInput(fmt::format("{} (size {}, context {}, {} on {})", fmt::join(problems, "; "), p.model.name,
                                       p.model.context_length, ts::toString(p.precision), p.device));
    }
    spec_json = ts::benchSpecJson(spec, points.size());
    return points;
}

int runBench(const BenchOptions& o) {
    std::string spec_json;
    const std::vector<ts::BenchConfig> points = benchPoints(o, spec_json);
    std::unique_ptr<ts::ResultStore> store;
    int64_t run_id = 0;
    if (!o.no_store) {
        store = openStore(o.db);
        run_id = store->createRun(ts::kBenchLab, o.label, spec_json, ts::currentEnvironment(points.front().device).device_name);
        if (!o.quiet) std::fprintf(stderr, "run %lld → %s\n", static_cast<long long>(run_id), store->path().c_str());
    }
    catchInterrupts();
    CliObserver observer(o.jsonl, o.quiet);
    const auto results = ts::runSweep(points, observer, interruptToken(), store.get(), run_id);
    if (!o.jsonl) {
        const auto format = o.csv ? ts::TableFormat::Csv : o.markdown ? ts::TableFormat::Markdown : ts::TableFormat::Text;
        std::cout << ts::formatResults(results, format);
        if (!o.csv && !results.empty())
            std::cout << '\n' << ts::formatEnvironment(results.front().environment, o.markdown ? ts::TableFormat::Markdown : ts::TableFormat::Text);
    }
    if (observer.sawError()) return kRunFailed;
    if (interruptToken().cancelled()) return kInterrupted;
    for (const auto& r : results)
        if (r.status == ts::Status::Failed) return kRunFailed;
    return kOk;
}

void addBenchCommand(CLI::App& app, int& code) {
    auto o = std::make_shared<BenchOptions>();
    auto* bench = app.add_subcommand("bench", "Time forward, backward and optimizer steps of the Transformer LM. "
                                              "A comma list in --size, --context-length, --precision, --attention, "
                                              "--mode, --warmup or --device sweeps it.");
    bench->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // last one wins
    bench->add_option("--size", o->size, "Model size: " + fmt::format("{}", fmt::join(ts::modelPresetNames(), ", ")) + ", custom")->capture_default_str();
    bench->add_option("--d-model", o->d_model, "Custom model width (overrides the size)");
    bench->add_option("--d-ff", o->d_ff, "Custom feed-forward width");
    bench->add_option("--num-layers", o->num_layers, "Custom number of layers");
    bench->add_option("--num-heads", o->num_heads, "Custom number of heads");
    bench->add_option("--vocab-size", o->vocab_size, "Vocabulary size (default 10000)");
    bench->add_option("--context-length", o->context, "Context length(s)")->capture_default_str();
    bench->add_option("--batch-size", o->batch_size, "Batch size(s)")->capture_default_str();
    bench->add_option("--warmup", o->warmup, "Warm-up steps, left out of the statistics")->capture_default_str();
    bench->add_option("--steps", o->steps, "Measured steps")->capture_default_str();
    bench->add_option("--mode", o->mode, "forward | forward-backward | train")->capture_default_str();
    bench->add_option("--precision", o->precision, "fp32 | bf16 | fp16 (autocast; fp16 training uses loss scaling)")->capture_default_str();
    bench->add_option("--attention", o->attention, "naive | sdpa | tiled | flash")->capture_default_str();
    bench->add_option("--device", o->device, "cpu | cuda | cuda:N (default: cuda when present)");
    bench->add_option("--seed", o->seed, "Random seed for weights and batch")->capture_default_str();
    bench->add_option("--lr,--learning-rate", o->lr, "AdamW learning rate")->capture_default_str();
    bench->add_option("--sweep", o->sweep_file, "A JSON sweep file instead of the flags (see docs/)");
    bench->add_option("--db", o->db, "Results store (default: $TRAINSCOPE_DB or ~/.local/share/trainscope/results.db)");
    bench->add_option("--label", o->label, "A label for this run in the store");
    bench->add_flag("--no-store", o->no_store, "Do not store the results");
    auto* fmt_group = bench->add_option_group("output", "Output format (default: aligned table)");
    fmt_group->add_flag("--markdown", o->markdown, "Markdown table shaped like the course writeups");
    fmt_group->add_flag("--csv", o->csv, "CSV with every column");
    fmt_group->add_flag("--jsonl", o->jsonl, "One JSON line per step and per result, streamed");
    fmt_group->require_option(0, 1);
    bench->add_flag("-q,--quiet", o->quiet, "No progress on stderr");
    bench->callback([o, bench, &code] {
        for (const CLI::Option* opt : bench->get_options())
            if (opt->count() > 0) o->given.push_back(opt->get_name());
        code = runBench(*o);
    });
}

const CommandRegistration registration(10, addBenchCommand);

}  // namespace
