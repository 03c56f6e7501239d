// `trainscope-cli profile`: the profiler lab from the command line. One benchmark point (the
// bench flags), warm-up steps unprofiled, then --profile-steps steps under the profiler; prints
// the course's tables (top kernels of the forward pass and of the whole step), stores the
// profile, and writes the Perfetto trace with --trace, Kineto's own with --kineto-trace.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "cli_point.h"
#include "core/json.h"
#include "core/point_json.h"
#include "core/store.h"
#include "profiler/profiler.h"
#include "profiler/profiler_json.h"
#include "profiler/profiler_report.h"
#include "runtime/environment.h"

namespace {

using namespace ts::cli;

struct ProfileOptions {
    BenchOptions point;
    std::string profile_steps = "3", phase, range, top = "10", trace, kineto_trace, compare;
};

class CliObserver : public ts::ProfileObserver {
public:
    CliObserver(bool jsonl, bool quiet, int total)
        : jsonl_(jsonl), quiet_(quiet), tty_(isatty(STDERR_FILENO)), total_(total) {}
    void stepFinished(const ts::StepSample& s) override {
        if (jsonl_) {
            nlohmann::json j = ts::toJson(s);
            j["type"] = "step";
            std::cout << ts::dumpJson(j) << '\n' << std::flush;
        }
        if (!quiet_ && tty_)
            std::fprintf(stderr, "\r\033[K    step %d/%d%s  %.2f ms", s.index + 1, total_,
                         s.warmup ? " (warm-up)" : " (profiled)", s.total_ms);
    }
    void profileCollected() override {
        if (!quiet_)
            std::fprintf(stderr, "%sreading the profiler's events...\n", tty_ ? "\r\033[K" : "");
    }
    void log(ts::LogLevel level, const std::string& message) override {
        if (level == ts::LogLevel::Info) return;
        std::fprintf(stderr, "%s%s: %s\n", tty_ && !quiet_ ? "\r\033[K" : "",
                     level == ts::LogLevel::Error ? "error" : "warning", message.c_str());
        if (level == ts::LogLevel::Error) error_ = true;
    }
    bool sawError() const { return error_; }

private:
    bool jsonl_, quiet_, tty_;
    int total_;
    bool error_ = false;
};

ts::ProfileSpec profileSpec(const ProfileOptions& o) {
    const auto points = benchPoints(o.point);
    if (points.size() != 1)
        throw BadInput(
            fmt::format("profile takes one point, but the options ask for {} (no comma lists here)",
                        points.size()));
    ts::ProfileSpec spec;
    spec.bench = points.front();
    spec.profile_steps =
        static_cast<int>(parseIntIn("--profile-steps", o.profile_steps, 1, ts::kMaxProfileSteps));
    return spec;
}

ts::EventFilter eventFilter(const ProfileOptions& o) {
    ts::EventFilter f;
    if (!o.phase.empty()) {
        f.phase = ts::parsePhase(o.phase);
        if (!f.phase)
            throw BadInput(fmt::format(
                "--phase: '{}' is not one of forward, backward, optimizer, other", o.phase));
    }
    f.range = o.range;
    return f;
}

// Refuses a --trace path that cannot be written before minutes are spent profiling.

nlohmann::json summaryJson(const ts::ProfileResult& r, const ts::EventFilter& f, int top) {
    nlohmann::json phases = nlohmann::json::array(), table = nlohmann::json::array(),
                   cats = nlohmann::json::array();
    for (const auto& p : ts::phaseTimes(r))
        phases.push_back({{"phase", ts::toString(p.phase)},
                          {"measured_ms", p.measured_us / 1000.0},
                          {"profiled_ms", p.profiled_us / 1000.0},
                          {"kernels", p.kernels}});
    if (r.gpu) {
        const auto rows = ts::kernelTable(r.trace.kernels, f);
        for (size_t i = 0; i < rows.size() && (top <= 0 || i < static_cast<size_t>(top)); ++i)
            table.push_back({{"kernel", rows[i].name},
                             {"category", ts::toString(rows[i].category)},
                             {"percent", rows[i].percent},
                             {"total_us", rows[i].total_us},
                             {"instances", rows[i].instances},
                             {"avg_us", rows[i].avg_us},
                             {"median_us", rows[i].median_us},
                             {"min_us", rows[i].min_us},
                             {"max_us", rows[i].max_us},
                             {"std_us", rows[i].std_us}});
    } else {
        const auto rows = ts::opTable(r.trace.ops, f, false);
        for (size_t i = 0; i < rows.size() && (top <= 0 || i < static_cast<size_t>(top)); ++i)
            table.push_back({{"op", rows[i].name},
                             {"calls", rows[i].calls},
                             {"cpu_self_us", rows[i].cpu_self_us},
                             {"cpu_total_us", rows[i].cpu_total_us},
                             {"device_us", rows[i].device_us},
                             {"flops", rows[i].flops},
                             {"tflops", rows[i].tflops},
                             {"shapes", rows[i].shapes}});
    }
    for (const auto& c : ts::categoryRollup(r))
        cats.push_back({{"phase", ts::toString(c.phase)},
                        {"category", ts::toString(c.category)},
                        {"time_us", c.time_us},
                        {"share", c.share}});
    return {{"type", "profile"},
            {"status", ts::toString(r.status)},
            {"error", r.error},
            {"spec", ts::toJson(r.spec)},
            {"gpu", r.gpu},
            {"phases", phases},
            {r.gpu ? "kernels" : "ops", table},
            {"categories", cats},
            {"environment", ts::toJson(r.environment)}};
}

// A stored profile run's profile (its row 0); bad input naming --compare when there is none.
ts::ProfileResult storedProfile(const ts::ResultStore& store, int64_t id) {
    const auto info = store.run(id);
    if (!info) throw BadInput(fmt::format("--compare: there is no run {} in {}", id, store.path()));
    if (info->lab != ts::kProfileLab)
        throw BadInput(
            fmt::format("--compare: run {} is a {} run, not a profile run", id, info->lab));
    const auto rows = store.rows(id, info->lab);
    if (rows.empty())
        throw BadInput(fmt::format(
            "--compare: run {} holds no profile (it was stopped or failed before one was stored)",
            id));
    try {
        return ts::profileResultFromJson(ts::parseJson(rows.front().result_json));
    } catch (const std::exception& e) {
        throw BadInput(fmt::format("--compare: run {} cannot be read: {}", id, e.what()));
    }
}

// `profile --compare A,B`: two stored profiles' kernel tables side by side; nothing is run.
int compareProfileRuns(const ProfileOptions& o) {
    const auto ids = requireList("--compare", o.compare);
    if (ids.size() != 2)
        throw BadInput(fmt::format("--compare: give two runs (A,B), not {}", ids.size()));
    for (const char* flag : {"--trace", "--kineto-trace", "--profile-steps", "--phase", "--range",
                             "--label", "--no-store"})
        if (given(o.point, flag))
            throw BadInput(fmt::format("--compare runs nothing: {} has no use with it", flag));
    if (o.point.jsonl) throw BadInput("--compare runs nothing: --jsonl has no use with it");
    const int top = static_cast<int>(parseIntIn("--top", o.top, 0, 1'000'000));
    auto store = openStoreForReading(o.point.db);
    const ts::ProfileResult a = storedProfile(*store, parseRunId(ids[0]));
    const ts::ProfileResult b = storedProfile(*store, parseRunId(ids[1]));
    std::cout << ts::formatProfileDiff(a, b, tableFormat(o.point.markdown, o.point.csv),
                                       o.point.csv ? 0 : top);
    return kOk;
}

struct ImportOptions {
    std::string file, db, label, rank;
    bool no_store = false, quiet = false;
    FormatChoice format;
};

// `profile import FILE`: a torch.profiler Chrome trace as a stored profile (See Note [importing a
// trace]); a file that is not one is bad input (exit 2) saying why.
int importProfileCommand(ImportOptions& o) {
    const int rank =
        o.rank.empty() ? -1 : static_cast<int>(parseIntIn("--rank", o.rank, 0, 1'000'000));
    const std::string text = readInputFile("import", o.file);
    const std::string name = std::filesystem::path(o.file).filename().string();
    ts::ProfileResult r;
    int imported_rank = -1;
    try {
        r = ts::importChromeTrace(text, name, rank, &imported_rank);
    } catch (const std::invalid_argument& e) {
        throw BadInput(fmt::format("import: {}: {}", o.file, e.what()));
    }
    if (rank < 0 && imported_rank >= 0 && !o.quiet)
        std::fprintf(stderr,
                     "note: %s is a distributed run's trace of every rank: rank %d imported "
                     "(--rank R for another)\n",
                     o.file.c_str(), imported_rank);
    const std::string title = r.spec.imported;
    const std::string format = o.format.get();
    const StoredRun run =
        startStoredRun(ts::kProfileLab, o.db, o.label.empty() ? title : o.label, o.no_store,
                       o.quiet, ts::profileSpecJson(r.spec), r.environment, 1);
    bool stored = true;
    if (run.get()) {
        try {
            ts::storeProfile(*run.store, run.id, r);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: the profile could not be stored: %s\n", e.what());
            stored = false;
        }
    }
    if (!o.quiet)
        std::fprintf(stderr, "imported %s: %zu ops, %zu kernels, %d profiled step(s)\n",
                     o.file.c_str(), r.trace.ops.size(), r.trace.kernels.size(),
                     static_cast<int>(r.steps.size()));
    ts::ProfileReportOptions ro;
    ro.format = format == "markdown" ? ts::TableFormat::Markdown
                : format == "csv"    ? ts::TableFormat::Csv
                                     : ts::TableFormat::Text;
    std::cout << ts::formatProfile(r, ro);
    if (format != "csv")
        std::cout << '\n'
                  << ts::formatEnvironment(r.environment, ro.format == ts::TableFormat::Markdown
                                                              ? ts::TableFormat::Markdown
                                                              : ts::TableFormat::Text);
    return stored ? kOk : kRunFailed;
}

int runProfileCommand(const ProfileOptions& o) {
    if (!o.compare.empty() || given(o.point, "--compare")) return compareProfileRuns(o);
    const ts::ProfileSpec spec = profileSpec(o);
    const ts::EventFilter filter = eventFilter(o);
    const int top = static_cast<int>(parseIntIn("--top", o.top, 0, 1'000'000));
    if (!o.trace.empty() || given(o.point, "--trace"))
        checkOutputFile("--trace", o.trace, o.point.db);
    if (!o.kineto_trace.empty() || given(o.point, "--kineto-trace")) {
        checkOutputFile("--kineto-trace", o.kineto_trace, o.point.db);
        // HTA reads only *.json (or .gz) files, TensorBoard only *.pt.trace.json.
        if (!o.kineto_trace.ends_with(".json"))
            throw BadInput(
                fmt::format("--kineto-trace: '{}' does not end in .json (TensorBoard's "
                            "profiler plugin wants NAME.pt.trace.json)",
                            o.kineto_trace));
    }
    const BenchOptions& p = o.point;
    const StoredRun run =
        startStoredRun(ts::kProfileLab, p.db, p.label, p.no_store, p.quiet,
                       ts::profileSpecJson(spec), ts::currentEnvironment(spec.bench.device));
    if (!p.quiet) std::fprintf(stderr, "profiling %s\n", ts::profileHeadline({spec}).c_str());
    catchInterrupts();
    CliObserver observer(p.jsonl, p.quiet, spec.bench.warmup + spec.profile_steps);
    ts::ProfileOutputs outputs;
    outputs.kineto_trace = o.kineto_trace;
    const ts::ProfileResult r =
        ts::runProfile(spec, observer, interruptToken(), run.get(), run.id, outputs);
    if (p.jsonl) {
        std::cout << ts::dumpJson(summaryJson(r, filter, top)) << '\n';
    } else {
        ts::ProfileReportOptions ro;
        ro.filter = filter;
        ro.top = top;
        ro.format = tableFormat(p.markdown, p.csv);
        std::cout << ts::formatProfile(r, ro);
        if (!p.csv)
            std::cout << '\n'
                      << ts::formatEnvironment(r.environment, p.markdown ? ts::TableFormat::Markdown
                                                                         : ts::TableFormat::Text);
    }
    bool written = true;
    if (!o.trace.empty()) {
        if (!writeOutputFile("--trace", o.trace, ts::chromeTraceJson(r), p.db))
            written = false;
        else if (!p.quiet)
            std::fprintf(stderr,
                         "trace → %s (open it in https://ui.perfetto.dev or chrome://tracing)\n",
                         o.trace.c_str());
    }
    if (!o.kineto_trace.empty() && r.status == ts::Status::Ok) {
        if (!std::filesystem::exists(o.kineto_trace)) {
            std::fprintf(stderr, "error: --kineto-trace: %s was not written\n",
                         o.kineto_trace.c_str());
            written = false;
        } else if (!p.quiet) {
            std::fprintf(stderr,
                         "Kineto's trace → %s (TensorBoard's profiler plugin, Holistic Trace "
                         "Analysis, Perfetto)\n",
                         o.kineto_trace.c_str());
        }
    }
    return runExitCode(observer.sawError() || !written, interruptToken().cancelled(),
                       r.status != ts::Status::Ok);
}

void addProfileCommand(CLI::App& app, int& code) {
    auto o = std::make_shared<ProfileOptions>();
    auto* cmd = app.add_subcommand(
        "profile",
        "Profile one benchmark point: warm-up steps, then steps under LibTorch's "
        "profiler; kernels and ops by phase (forward, backward, optimizer) and "
        "by range of the model.");
    cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    addPointOptions(*cmd, o->point, /*measured_steps=*/false, /*exec=*/true);
    addCodeOptions(*cmd, o->point);  // the user's code, profiled with torch.profiler
    cmd->get_option("--warmup")->description("Warm-up steps, run before the profiler starts");
    cmd->add_option("--profile-steps", o->profile_steps,
                    "Steps run under the profiler, after the warm-up")
        ->capture_default_str();
    cmd->add_option("--phase", o->phase, "Only this phase: forward | backward | optimizer | other");
    cmd->add_option("--range", o->range,
                    "Only this range of the model: layer.0, attention, softmax, mlp, lm_head, ...");
    cmd->add_option("--top", o->top, "Rows per table (0: all)")->capture_default_str();
    cmd->add_option("--compare", o->compare,
                    "Compare two stored profile runs' kernel tables (A,B: run ids), per profiled "
                    "step, largest difference first; runs nothing");
    cmd->add_option("--trace", o->trace, "Write the trace as Chrome/Perfetto JSON to this file");
    cmd->add_option("--kineto-trace", o->kineto_trace,
                    "Write Kineto's own trace of the profiled steps (as torch.profiler's "
                    "export_chrome_trace: flow events from launches to kernels, for TensorBoard's "
                    "profiler plugin and Holistic Trace Analysis) to this .json file");
    addStoreOptions(*cmd, o->point.db, o->point.label, o->point.no_store, "the profile");
    addFormatOptions(*cmd, o->point, "Markdown tables",
                     "CSV: every kernel (on the CPU: op) of the phase/range",
                     "One JSON line per step, then the profile's summary");
    cmd->add_flag("-q,--quiet", o->point.quiet, "No progress on stderr");

    auto imp = std::make_shared<ImportOptions>();
    auto* import = cmd->add_subcommand(
        "import",
        "Import a torch.profiler Chrome trace (export_chrome_trace, Kineto's JSON) as a stored "
        "profile run, and show its tables; nothing is run");
    import->add_option("file", imp->file, "The trace (.json)")->required();
    import->add_option("--rank", imp->rank,
                       "Of a distributed run's merged trace (distributed ddp --trace-steps): the "
                       "rank to import (default 0)");
    addStoreOptions(*import, imp->db, imp->label, imp->no_store, "the profile");
    import->get_option("--label")->description(
        "Label of the stored run (default: the file's name)");
    imp->format.add(*import, {"table", "markdown", "csv"},
                    {{"markdown", "Markdown tables"}, {"csv", "CSV: every kernel (CPU: op)"}});
    import->add_flag("-q,--quiet", imp->quiet, "Nothing on stderr but errors");
    import->callback([imp, &code] { code = importProfileCommand(*imp);
});

cmd->callback([o, cmd, import, &code] {
    if (import->parsed()) return;  // `profile import` ran instead
    recordGivenOptions(*cmd, o->point);
    readFormat(o->point);
    code = runProfileCommand(*o);
});
}  // namespace

const CommandRegistration registration(ts::kProfileLab, addProfileCommand);

}  // namespace
