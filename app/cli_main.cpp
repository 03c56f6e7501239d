// trainscope-cli: the headless front end of the engine.
//   trainscope-cli bench ...      time training steps (a comma list in a flag sweeps it)
//   trainscope-cli attention ...  naive vs fused vs our FlashAttention-2 kernels
//   trainscope-cli runs ...       list, show, export and delete stored runs
//   trainscope-cli info           what this machine can run
// Exit codes: 0 success, 2 bad input (message on stderr), 3 a run that failed, 130 stopped.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_attention.h"
#include "trainscope/engine/attention_bench.h"
#include "trainscope/engine/benchmark.h"
#include "trainscope/engine/environment.h"
#include "trainscope/engine/json.h"
#include "trainscope/engine/report.h"
#include "trainscope/engine/store.h"

namespace {

constexpr int kOk = 0, kBadInput = 2, kRunFailed = 3, kInterrupted = 130;

struct BadInput : std::runtime_error {
    using std::runtime_error::runtime_error;
};

ts::CancelToken g_cancel;
extern "C" void onSignal(int) { g_cancel.cancel(); }

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

template <typename T, typename Parse>
std::vector<T> parseList(const std::string& flag, const std::string& value, Parse parse,
                         const char* allowed) {
    std::vector<T> out;
    for (const auto& item : splitList(value)) {
        auto v = parse(item);
        if (!v) throw BadInput(fmt::format("{}: '{}' is not one of {}", flag, item, allowed));
        out.push_back(*v);
    }
    if (out.empty()) throw BadInput(fmt::format("{}: no value given", flag));
    return out;
}

std::optional<int64_t> parseInt(const std::string& s) {
    try {
        size_t used = 0;
        const long long v = std::stoll(s, &used);
        if (used != s.size()) return std::nullopt;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Prints progress on stderr and, with --jsonl, every step and result on stdout.
class CliObserver : public ts::Observer {
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
            std::cout << j.dump() << '\n' << std::flush;
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
            std::cout << j.dump() << '\n' << std::flush;
        }
        if (!quiet_) {
            if (tty_) std::fputs("\r\033[K", stderr);
            if (r.status == ts::RunStatus::Ok)
                std::fprintf(stderr, "    total %.2f ± %.2f ms per step\n", r.total.mean, r.total.std);
            else
                std::fprintf(stderr, "    %s: %s\n", std::string(ts::toString(r.status)).c_str(), r.error.c_str());
        }
    }
    void log(ts::LogLevel level, const std::string& message) override {
        if (level != ts::LogLevel::Info || !quiet_) {
            if (level == ts::LogLevel::Error) std::fprintf(stderr, "error: %s\n", message.c_str());
        }
    }

private:
    bool jsonl_, quiet_, tty_;
    int count_ = 0;
    ts::BenchConfig current_;
};

struct BenchOptions {
    std::string size = "small", context = "256", precision = "fp32", attention = "naive";
    std::string mode = "train", warmup = "5", batch_size = "4", device, sweep_file, db, label;
    std::optional<int64_t> d_model, d_ff, num_layers, num_heads, vocab_size;
    int steps = 10;
    uint64_t seed = 0;
    double lr = 1e-4;
    bool markdown = false, csv = false, jsonl = false, no_store = false, quiet = false;
};

std::vector<ts::BenchConfig> benchPoints(const BenchOptions& o, std::string& spec_json) {
    ts::SweepSpec spec;
    if (!o.sweep_file.empty()) {
        std::ifstream in(o.sweep_file);
        if (!in) throw BadInput(fmt::format("--sweep: cannot read '{}'", o.sweep_file));
        try {
            spec = ts::sweepFromJson(nlohmann::json::parse(in));
        } catch (const nlohmann::json::exception& e) {
            throw BadInput(fmt::format("--sweep {}: not valid JSON: {}", o.sweep_file, e.what()));
        } catch (const std::invalid_argument& e) {
            throw BadInput(fmt::format("--sweep {}: {}", o.sweep_file, e.what()));
        }
    } else {
        ts::BenchConfig& b = spec.base;
        const bool custom = o.d_model || o.d_ff || o.num_layers || o.num_heads;
        for (const auto& s : splitList(o.size)) {
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
            if (o.d_model) b.model.d_model = *o.d_model;
            if (o.d_ff) b.model.d_ff = *o.d_ff;
            if (o.num_layers) b.model.num_layers = *o.num_layers;
            if (o.num_heads) b.model.num_heads = *o.num_heads;
            spec.sizes = {"custom"};
        }
        if (o.vocab_size) b.model.vocab_size = *o.vocab_size;
        for (const auto& c : splitList(o.context)) {
            auto v = parseInt(c);
            if (!v) throw BadInput(fmt::format("--context-length: '{}' is not a whole number", c));
            spec.context_lengths.push_back(*v);
        }
        for (const auto& bs : splitList(o.batch_size)) {
            auto v = parseInt(bs);
            if (!v) throw BadInput(fmt::format("--batch-size: '{}' is not a whole number", bs));
            spec.batch_sizes.push_back(*v);
        }
        for (const auto& w : splitList(o.warmup)) {
            auto v = parseInt(w);
            if (!v) throw BadInput(fmt::format("--warmup: '{}' is not a whole number", w));
            spec.warmups.push_back(static_cast<int>(*v));
        }
        spec.precisions = parseList<ts::Precision>("--precision", o.precision, ts::parsePrecision, "fp32, bf16, fp16");
        spec.attentions = parseList<ts::Attention>("--attention", o.attention, ts::parseAttention,
                                                   "naive, sdpa, tiled, flash");
        spec.modes = parseList<ts::Mode>("--mode", o.mode, ts::parseMode, "forward, forward-backward, train");
        const std::string device = o.device.empty() ? (ts::capabilities().cuda_available ? "cuda" : "cpu") : o.device;
        spec.devices = splitList(device);
        b.steps = o.steps;
        b.seed = o.seed;
        b.learning_rate = o.lr;
    }
    std::vector<ts::BenchConfig> points;
    try {
        points = ts::expandSweep(spec);
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
    for (const auto& p : points) {
        auto problems = ts::validateBench(p);
        if (problems.empty()) problems = ts::checkRunnable(p);
        if (!problems.empty())
            throw BadInput(fmt::format("{} (size {}, context {}, {} on {})", fmt::join(problems, "; "), p.model.name,
                                       p.model.context_length, ts::toString(p.precision), p.device));
    }
    nlohmann::json j;
    j["base"] = ts::toJson(spec.base);
    j["points"] = points.size();
    j["command"] = "bench";
    spec_json = j.dump();
    return points;
}

int runBench(const BenchOptions& o) {
    std::string spec_json;
    const std::vector<ts::BenchConfig> points = benchPoints(o, spec_json);
    std::unique_ptr<ts::ResultStore> store;
    int64_t run_id = 0;
    if (!o.no_store) {
        const std::string path = o.db.empty() ? ts::ResultStore::defaultPath() : o.db;
        try {
            store = std::make_unique<ts::ResultStore>(path);
        } catch (const std::exception& e) {
            throw BadInput(fmt::format("--db: {}", e.what()));
        }
        run_id = store->createRun("bench", o.label, spec_json, ts::currentEnvironment(points.front().device).device_name);
        if (!o.quiet) std::fprintf(stderr, "run %lld → %s\n", static_cast<long long>(run_id), path.c_str());
    }
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    CliObserver observer(o.jsonl, o.quiet);
    const auto results = ts::runSweep(points, observer, g_cancel, store.get(), run_id);
    if (!o.jsonl) {
        const auto format = o.csv ? ts::TableFormat::Csv : o.markdown ? ts::TableFormat::Markdown : ts::TableFormat::Text;
        std::cout << ts::formatResults(results, format);
        if (!o.csv && !results.empty())
            std::cout << '\n' << ts::formatEnvironment(results.front().environment, o.markdown ? ts::TableFormat::Markdown : ts::TableFormat::Text);
    }
    if (g_cancel.cancelled()) return kInterrupted;
    for (const auto& r : results)
        if (r.status == ts::RunStatus::Failed) return kRunFailed;
    return kOk;
}

std::unique_ptr<ts::ResultStore> openStore(const std::string& db) {
    try {
        return std::make_unique<ts::ResultStore>(db.empty() ? ts::ResultStore::defaultPath() : db);
    } catch (const std::exception& e) {
        throw BadInput(fmt::format("--db: {}", e.what()));
    }
}

ts::RunInfo requireRun(const ts::ResultStore& store, int64_t id) {
    auto info = store.run(id);
    if (!info) throw BadInput(fmt::format("run {} does not exist in {}", id, store.path()));
    return *info;
}

int runsList(const std::string& db, bool as_json) {
    auto store = openStore(db);
    const auto runs = store->listRuns();
    if (as_json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : runs)
            arr.push_back({{"id", r.id}, {"kind", r.kind}, {"label", r.label}, {"created", r.created},
                           {"device", r.device_name}, {"points", r.point_count}, {"ok", r.ok_count}});
        std::cout << arr.dump(2) << '\n';
        return kOk;
    }
    if (runs.empty()) {
        std::cout << "no runs in " << store->path() << '\n';
        return kOk;
    }
    std::cout << fmt::format("{:>5}  {:<20}  {:<9}  {:>6}  {:>4}  {:<28}  {}\n", "id", "created", "kind", "points", "ok", "device", "label");
    for (const auto& r : runs)
        std::cout << fmt::format("{:>5}  {:<20}  {:<9}  {:>6}  {:>4}  {:<28}  {}\n", r.id, r.created, r.kind,
                                 r.point_count, r.ok_count, r.device_name.substr(0, 28), r.label);
    return kOk;
}

// The passes an attention run measured, read off its cells.
std::vector<ts::AttentionPass> measuredPasses(const std::vector<ts::AttentionCell>& cells) {
    bool f = false, b = false, fb = false;
    for (const auto& c : cells) {
        f |= c.forward_ms > 0;
        b |= c.backward_ms > 0;
        fb |= c.forward_backward_ms > 0;
    }
    std::vector<ts::AttentionPass> passes;
    if (f) passes.push_back(ts::AttentionPass::Forward);
    if (b) passes.push_back(ts::AttentionPass::Backward);
    if (fb) passes.push_back(ts::AttentionPass::ForwardBackward);
    if (passes.empty()) passes.push_back(ts::AttentionPass::Forward);
    return passes;
}

int showAttentionRun(const ts::ResultStore& store, const ts::RunInfo& info, const std::string& format) {
    const auto cells = store.attentionCells(info.id);
    if (format == "json") {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& c : cells) arr.push_back(ts::toJson(c));
        std::cout << nlohmann::json{{"id", info.id}, {"kind", info.kind}, {"label", info.label},
                                    {"created", info.created}, {"device", info.device_name}, {"cells", arr}}.dump(2) << '\n';
    } else if (format == "csv") {
        std::cout << ts::attentionCsvHeader() << '\n';
        for (const auto& c : cells) std::cout << ts::attentionCsvRow(c) << '\n';
    } else {
        if (format == "markdown") std::cout << fmt::format("# TrainScope attention run {}\n\n", info.id);
        std::cout << fmt::format("run {} (attention), {} on {} — {} cell(s){}\n\n", info.id, info.created,
                                 info.device_name, cells.size(), info.label.empty() ? "" : ", " + info.label);
        std::cout << ts::attentionMarkdown(cells, measuredPasses(cells));
    }
    return kOk;
}

int runsShow(const std::string& db, int64_t id, const std::string& format) {
    auto store = openStore(db);
    const auto info = requireRun(*store, id);
    if (info.kind == "attention") return showAttentionRun(*store, info, format);
    const auto results = store->points(id);
    if (format == "json") {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : results) arr.push_back(ts::toJson(r));
        std::cout << nlohmann::json{{"id", info.id}, {"kind", info.kind}, {"label", info.label},
                                    {"created", info.created}, {"results", arr}}.dump(2) << '\n';
        return kOk;
    }
    if (format == "markdown") {
        std::cout << ts::markdownReport(fmt::format("TrainScope run {}{}", id, info.label.empty() ? "" : " — " + info.label), results);
        return kOk;
    }
    if (format == "csv") {
        std::cout << ts::formatResults(results, ts::TableFormat::Csv);
        return kOk;
    }
    std::cout << fmt::format("run {} ({}), {} — {} point(s){}\n\n", id, info.kind, info.created, results.size(),
                             info.label.empty() ? "" : ", " + info.label);
    std::cout << ts::formatResults(results, ts::TableFormat::Text);
    if (!results.empty()) std::cout << '\n' << ts::formatEnvironment(results.front().environment, ts::TableFormat::Text);
    return kOk;
}

int infoCommand() {
    const auto& caps = ts::capabilities();
    std::cout << fmt::format("LibTorch {} ({} build)\n", caps.torch_version, caps.torch_cuda_build ? "CUDA" : "CPU-only");
    std::cout << fmt::format("FlashAttention kernels: {}\n",
                             !caps.flash_kernels ? "not built"
                             : caps.cuda_available ? "built" : "built (they need a CUDA GPU; none here)");
    for (const auto& d : caps.devices) {
        std::cout << fmt::format("{:<7} {}", d.id, d.name);
        if (d.total_memory) std::cout << fmt::format(", {:.1f} GiB, sm_{}{}", d.total_memory / 1073741824.0, d.compute_major, d.compute_minor);
        std::cout << fmt::format(", bf16 {}\n", d.bf16 ? "yes" : "no");
        if (!d.flash_kernels.empty()) std::cout << fmt::format("        attention kernels: {}\n", d.flash_kernels);
    }
    return kOk;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"TrainScope: where the time and memory of a transformer training step go.", "trainscope-cli"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("trainscope-cli ") + TRAINSCOPE_VERSION_STRING);
    int code = kOk;

    BenchOptions bo;
    auto* bench = app.add_subcommand("bench", "Time forward, backward and optimizer steps of the Transformer LM. "
                                              "A comma list in --size, --context-length, --precision, --attention, "
                                              "--mode, --warmup or --device sweeps it.");
    bench->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // last one wins
    bench->add_option("--size", bo.size, "Model size: " + fmt::format("{}", fmt::join(ts::modelPresetNames(), ", ")) + ", custom")->capture_default_str();
    bench->add_option("--d-model", bo.d_model, "Custom model width (overrides the size)");
    bench->add_option("--d-ff", bo.d_ff, "Custom feed-forward width");
    bench->add_option("--num-layers", bo.num_layers, "Custom number of layers");
    bench->add_option("--num-heads", bo.num_heads, "Custom number of heads");
    bench->add_option("--vocab-size", bo.vocab_size, "Vocabulary size (default 10000)");
    bench->add_option("--context-length", bo.context, "Context length(s)")->capture_default_str();
    bench->add_option("--batch-size", bo.batch_size, "Batch size(s)")->capture_default_str();
    bench->add_option("--warmup", bo.warmup, "Warm-up steps, left out of the statistics")->capture_default_str();
    bench->add_option("--steps", bo.steps, "Measured steps")->capture_default_str();
    bench->add_option("--mode", bo.mode, "forward | forward-backward | train")->capture_default_str();
    bench->add_option("--precision", bo.precision, "fp32 | bf16 | fp16 (autocast; fp16 training uses loss scaling)")->capture_default_str();
    bench->add_option("--attention", bo.attention, "naive | sdpa | tiled | flash")->capture_default_str();
    bench->add_option("--device", bo.device, "cpu | cuda | cuda:N (default: cuda when present)");
    bench->add_option("--seed", bo.seed, "Random seed for weights and batch")->capture_default_str();
    bench->add_option("--lr", bo.lr, "AdamW learning rate")->capture_default_str();
    bench->add_option("--sweep", bo.sweep_file, "A JSON sweep file instead of the flags (see docs/)");
    bench->add_option("--db", bo.db, "Results store (default: $TRAINSCOPE_DB or ~/.local/share/trainscope/results.db)");
    bench->add_option("--label", bo.label, "A label for this run in the store");
    bench->add_flag("--no-store", bo.no_store, "Do not store the results");
    auto* fmt_group = bench->add_option_group("output", "Output format (default: aligned table)");
    fmt_group->add_flag("--markdown", bo.markdown, "Markdown table shaped like the course writeups");
    fmt_group->add_flag("--csv", bo.csv, "CSV with every column");
    fmt_group->add_flag("--jsonl", bo.jsonl, "One JSON line per step and per result, streamed");
    fmt_group->require_option(0, 1);
    bench->add_flag("-q,--quiet", bo.quiet, "No progress on stderr");
    bench->callback([&] { code = runBench(bo); });

    auto* runs = app.add_subcommand("runs", "List, show, export and delete stored runs");
    runs->require_subcommand(1);
    std::string db;
    runs->add_option("--db", db, "Results store (default: $TRAINSCOPE_DB or ~/.local/share/trainscope/results.db)");
    bool list_json = false;
    auto* list = runs->add_subcommand("list", "List the stored runs, newest first");
    list->add_flag("--json", list_json, "As JSON");
    list->callback([&] { code = runsList(db, list_json); });
    int64_t show_id = 0;
    std::string show_format = "table";
    auto* show = runs->add_subcommand("show", "Show one run's results");
    show->add_option("id", show_id, "Run id (see `runs list`)")->required();
    show->add_option("--format", show_format, "table | markdown | csv | json")
        ->check(CLI::IsMember({"table", "markdown", "csv", "json"}))->capture_default_str();
    show->callback([&] { code = runsShow(db, show_id, show_format); });
    int64_t export_id = 0;
    std::string export_format = "markdown", export_out;
    auto* exp = runs->add_subcommand("export", "Export one run to a file (or stdout)");
    exp->add_option("id", export_id, "Run id")->required();
    exp->add_option("--format", export_format, "markdown | csv | json")->check(CLI::IsMember({"markdown", "csv", "json"}))->capture_default_str();
    exp->add_option("-o,--output", export_out, "Output file (default: stdout)");
    exp->callback([&] {
        std::streambuf* old = nullptr;
        std::ofstream file;
        if (!export_out.empty()) {
            file.open(export_out);
            if (!file) throw BadInput(fmt::format("--output: cannot write '{}'", export_out));
            old = std::cout.rdbuf(file.rdbuf());
        }
        code = runsShow(db, export_id, export_format);
        if (old) std::cout.rdbuf(old);
        if (!export_out.empty()) std::fprintf(stderr, "wrote %s\n", export_out.c_str());
    });
    int64_t delete_id = 0;
    auto* del = runs->add_subcommand("delete", "Delete one run and its results");
    del->add_option("id", delete_id, "Run id")->required();
    del->callback([&] {
        auto store = openStore(db);
        requireRun(*store, delete_id);
        store->removeRun(delete_id);
        code = kOk;
    });

    addAttentionCommand(app, code);

    // `runs list --db X` and `runs --db X list` both work.
    for (auto* sub : {list, show, exp, del}) sub->fallthrough();

    app.add_subcommand("info", "What this machine can run: LibTorch, devices, bf16, kernels")->callback([&] { code = infoCommand(); });

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "trainscope-cli: %s\nRun with --help for usage.\n", e.what());
        return kBadInput;
    } catch (const BadInput& e) {
        std::fprintf(stderr, "trainscope-cli: %s\n", e.what());
        return kBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainscope-cli: %s\n", e.what());
        return kRunFailed;
    }
    return code;
}
