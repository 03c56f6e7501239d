// `trainscope-cli memory`: the memory lab from the command line. One benchmark point or a
// sweep of them (the bench flags; comma lists give the peak table over context × precision ×
// attention × mode): warm-up steps, then --record-steps with the allocator's history on;
// prints the peak by category against the analytic model, the largest allocations and what
// was live at the peak, stores every point, and writes the snapshot pickle with --snapshot.
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
#include "memory/memory.h"
#include "memory/memory_json.h"
#include "memory/memory_pickle.h"
#include "memory/memory_report.h"
#include "runtime/environment.h"

namespace {

using namespace ts::cli;

struct MemoryOptions {
    BenchOptions point;
    std::string record_steps = "2", frontier, frontier_max = "0", top = "10", snapshot,
                oom_snapshot, compare;
    bool stacks = false;
};

class CliObserver : public ts::MemoryObserver {
public:
    CliObserver(bool jsonl, bool quiet, int per_point)
        : jsonl_(jsonl), quiet_(quiet), tty_(isatty(STDERR_FILENO)), per_point_(per_point) {}
    void pointStarted(int index, int count, const ts::PointConfig&) override {
        index_ = index;
        count_ = count;
    }
    void stepFinished(const ts::StepSample& s) override {
        if (jsonl_) {
            nlohmann::json j = ts::toJson(s);
            j["type"] = "step";
            j["point"] = index_;
            std::cout << ts::dumpJson(j) << '\n' << std::flush;
        }
        if (!quiet_ && tty_)
            std::fprintf(stderr, "\r\033[K    point %d/%d step %d/%d%s  %.2f ms", index_ + 1,
                         count_, s.index + 1, per_point_, s.warmup ? " (warm-up)" : " (recorded)",
                         s.total_ms);
    }
    void traceCollected() override {
        if (!quiet_)
            std::fprintf(stderr, "%sreading the allocator's trace...\n", tty_ ? "\r\033[K" : "");
    }
    void frontierProbed(const ts::FrontierProbe& p) override {
        if (jsonl_) {
            std::cout << ts::dumpJson({{"type", "probe"},
                                       {"point", index_},
                                       {"value", p.value},
                                       {"fits", p.fits},
                                       {"status", ts::toString(p.status)},
                                       {"peak_bytes", p.peak_bytes}})
                      << '\n'
                      << std::flush;
        }
        if (!quiet_)
            std::fprintf(stderr, "    frontier: %lld %s\n", static_cast<long long>(p.value),
                         p.fits ? "fits" : std::string(ts::toString(p.status)).c_str());
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
    int per_point_;
    int index_ = 0, count_ = 1;
    bool error_ = false;
};

std::vector<ts::MemorySpec> memorySpecs(const MemoryOptions& o) {
    const auto points = benchPoints(o.point);
    ts::MemorySpec base;
    base.record_steps =
        static_cast<int>(parseIntIn("--record-steps", o.record_steps, 1, ts::kMaxRecordSteps));
    base.record_stacks = o.stacks;
    if (!o.frontier.empty() || given(o.point, "--frontier")) {
        auto axis = ts::parseFrontierAxis(o.frontier);
        if (!axis || *axis == ts::FrontierAxis::None)
            throw BadInput(
                fmt::format("--frontier: '{}' is not one of context, batch", o.frontier));
        base.frontier = *axis;
    }
    base.frontier_max = parseIntIn("--frontier-max", o.frontier_max, 0, int64_t{1} << 30);
    if (base.frontier == ts::FrontierAxis::Context && base.frontier_max > 0 &&
        base.frontier_max < 16)
        throw BadInput(fmt::format("--frontier-max: {} is below the smallest context probed (16)",
                                   base.frontier_max));
    if (base.frontier_max > 0 && base.frontier == ts::FrontierAxis::None)
        throw BadInput("--frontier-max: needs --frontier context|batch");
    std::vector<ts::MemorySpec> specs;
    for (const auto& p : points) {
        ts::MemorySpec s = base;
        s.bench = p;
        // What the memory lab adds to the point's checks (eager steps only; --stacks is for
        // TrainScope's C++ model): refused before anything runs.
        if (const auto problems = ts::validateMemory(s); !problems.empty())
            throw BadInput(fmt::format("{} (size {}, context {}{})", fmt::join(problems, "; "),
                                       p.model.name, p.model.context_length,
                                       p.source == ts::Source::Python ? ", your code" : ""));
        specs.push_back(s);
    }
    if (!o.snapshot.empty() && specs.size() != 1)
        throw BadInput(
            fmt::format("--snapshot takes one point, but the options ask for {}", specs.size()));
    if (!o.oom_snapshot.empty() && specs.size() != 1)
        throw BadInput(fmt::format("--oom-snapshot takes one point, but the options ask for {}",
                                   specs.size()));
    if (given(o.point, "--oom-snapshot") && base.frontier == ts::FrontierAxis::None)
        throw BadInput(
            "--oom-snapshot: needs --frontier context|batch (it is the snapshot of the probe that "
            "ran out of memory)");
    return specs;
}

// Writes a trace as the pickle memory_viz reads; false (said on stderr) when it cannot.
bool writeSnapshot(const std::string& flag, const std::string& path,
                   const ts::RawMemoryTrace& trace, bool quiet, const std::string& db) {
    if (!writeOutputFile(flag, path, ts::memorySnapshotPickle(trace), db)) return false;
    if (!quiet)
        std::fprintf(stderr,
                     "snapshot → %s (drag it onto https://pytorch.org/memory_viz, or "
                     "python -m torch.cuda._memory_viz trace_plot %s -o memory.html)\n",
                     path.c_str(), path.c_str());
    return true;
}

nlohmann::json summaryJson(const ts::MemoryResult& r, int top) {
    const ts::MemoryAnalysis a = ts::analyzeMemory(r.trace);
    const ts::MemoryPrediction p = ts::predictMemory(r.spec.bench);
    nlohmann::json cats = nlohmann::json::array(), largest = nlohmann::json::array();
    for (const auto& c : ts::compareWithPrediction(r, a))
        cats.push_back({{"category", ts::toString(c.category)},
                        {"peak_bytes", c.measured},
                        {"predicted_bytes", c.predicted}});
    for (size_t k : ts::largestAllocations(a, top <= 0 ? SIZE_MAX : static_cast<size_t>(top))) {
        const ts::Allocation& x = a.allocations[k];
        auto name = [&](int32_t i) { return i >= 0 ? r.trace.names.at(i) : std::string(); };
        largest.push_back(
            {{"size", x.size},
             {"event", x.alloc_index},
             {"phase", ts::toString(x.phase)},
             {"step", x.step},
             {"category", ts::toString(x.category)},
             {"range", name(x.range)},
             {"op", name(x.op)},
             {"where", ts::allocationSite(r.trace, x.stack)},
             {"freed_at", x.free_index ? nlohmann::json(*x.free_index) : nlohmann::json(nullptr)}});
    }
    nlohmann::json j{{"type", "memory"},
                     {"status", ts::toString(r.status)},
                     {"error", r.error},
                     {"spec", ts::toJson(r.spec)},
                     {"gpu", r.gpu},
                     {"events", r.trace.events.size()},
                     {"peak",
                      {{"allocated", a.peak.allocated},
                       {"reserved", a.peak.reserved},
                       {"event", a.peak.index},
                       {"phase", ts::toString(a.peak.phase)},
                       {"step", a.peak.step}}},
                     {"predicted_peak", p.peak},
                     {"categories", cats},
                     {"largest", largest},
                     {"parameter_count", r.parameter_count},
                     {"parameter_bytes", r.parameter_bytes},
                     {"gradient_bytes", r.gradient_bytes},
                     {"optimizer_bytes", r.optimizer_bytes},
                     {"environment", ts::toJson(r.environment)}};
    if (r.frontier) j["frontier"] = ts::toJson(*r.frontier);
    return j;
}

// "7" or "7:2" (run 7, point 2) → (run, point).
std::pair<int64_t, int> runAndPoint(const std::string& text) {
    const auto colon = text.find(':');
    const int64_t run = parseRunId(text.substr(0, colon));
    const int point =
        colon == std::string::npos
            ? 0
            : static_cast<int>(parseIntIn("--compare", text.substr(colon + 1), 0, 1'000'000));
    return {run, point};
}

// `memory --compare A,B`: two stored memory runs category by category; nothing is run.
int compareMemoryRuns(const MemoryOptions& o) {
    const auto ids = requireList("--compare", o.compare);
    if (ids.size() != 2)
        throw BadInput(fmt::format("--compare: give two runs (A,B), not {}", ids.size()));
    for (const char* flag : {"--snapshot", "--oom-snapshot", "--frontier", "--record-steps",
                             "--label", "--no-store", "--jsonl"})
        if (given(o.point, flag) || (std::string_view(flag) == "--jsonl" && o.point.jsonl))
            throw BadInput(fmt::format("--compare runs nothing: {} has no use with it", flag));
    auto store = openStoreForReading(o.point.db);
    std::vector<ts::MemoryResult> results;
    for (const auto& id : ids) {
        const auto [run, point] = runAndPoint(id);
        const auto info = store->run(run);
        if (!info)
            throw BadInput(fmt::format("--compare: there is no run {} in {}", run, store->path()));
        if (info->lab != ts::kMemoryLab)
            throw BadInput(
                fmt::format("--compare: run {} is a {} run, not a memory run", run, info->lab));
        results.push_back(ts::storedMemoryPoint(*info, store->rows(run, info->lab), point));
    }
    const ts::TableFormat format = o.point.csv        ? ts::TableFormat::Csv
                                   : o.point.markdown ? ts::TableFormat::Markdown
                                                      : ts::TableFormat::Text;
    std::cout << ts::formatMemoryComparison(results[0], results[1], format);
    return kOk;
}

struct ImportOptions {
    std::string file, db, label, top = "10";
    bool no_store = false, quiet = false;
    FormatChoice format;
};

// `memory import FILE`: a memory_viz snapshot (the pickle torch.cuda.memory._dump_snapshot
// writes) as a stored memory run (See Note [importing a snapshot]); a file that is not one is bad
// input (exit 2) saying why.
int importMemoryCommand(ImportOptions& o) {
    const int top = static_cast<int>(parseIntIn("--top", o.top, 0, 1'000'000));
    const std::string bytes = readInputFile("import", o.file);
    const std::string name = std::filesystem::path(o.file).filename().string();
    ts::MemoryResult r;
    try {
        r = ts::importMemorySnapshot(bytes, name);
    } catch (const std::invalid_argument& e) {
        throw BadInput(fmt::format("import: {}: {}", o.file, e.what()));
    }
    const std::string format = o.format.get();
    const StoredRun run =
        startStoredRun(ts::kMemoryLab, o.db, o.label.empty() ? name : o.label, o.no_store, o.quiet,
                       ts::memorySpecJson({r.spec}), r.environment, 1);
    bool stored = true;
    if (run.get()) {
        try {
            ts::storeMemory(*run.store, run.id, 0, r);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "error: the run could not be stored: %s\n", e.what());
            stored = false;
        }
    }
    if (!o.quiet)
        std::fprintf(stderr, "imported %s: %zu trace entries, %zu segments\n", o.file.c_str(),
                     r.trace.events.size(), r.trace.segments.size());
    ts::MemoryReportOptions ro;
    ro.top = top;
    ro.format = format == "markdown" ? ts::TableFormat::Markdown
                : format == "csv"    ? ts::TableFormat::Csv
                                     : ts::TableFormat::Text;
    std::cout << ts::formatMemory(r, ro);
    return stored ? kOk : kRunFailed;
}

int runMemoryCommand(const MemoryOptions& o) {
    if (!o.compare.empty() || given(o.point, "--compare")) return compareMemoryRuns(o);
    const std::vector<ts::MemorySpec> specs = memorySpecs(o);
    const int top = static_cast<int>(parseIntIn("--top", o.top, 0, 1'000'000));
    if (!o.snapshot.empty() || given(o.point, "--snapshot"))
        checkOutputFile("--snapshot", o.snapshot, o.point.db);
    if (!o.oom_snapshot.empty() || given(o.point, "--oom-snapshot"))
        checkOutputFile("--oom-snapshot", o.oom_snapshot, o.point.db);
    const BenchOptions& p = o.point;
    const StoredRun run = startStoredRun(ts::kMemoryLab, p.db, p.label, p.no_store, p.quiet,
                                         ts::memorySpecJson(specs),
                                         ts::currentEnvironment(specs.front().bench.device));
    catchInterrupts();
    const ts::TableFormat format = tableFormat(p.markdown, p.csv);
    std::vector<ts::MemoryResult> results;
    bool failed = false, store_failed = false;
    for (size_t i = 0; i < specs.size(); ++i) {
        if (interruptToken().cancelled()) break;
        const ts::MemorySpec& spec = specs[i];
        if (!p.quiet) std::fprintf(stderr, "recording %s\n", ts::memoryHeadline({spec}).c_str());
        CliObserver observer(p.jsonl, p.quiet, spec.bench.warmup + spec.record_steps);
        ts::MemoryResult r = ts::runMemory(spec, observer, interruptToken(), run.get(), run.id,
                                           static_cast<int>(i), static_cast<int>(specs.size()));
        store_failed = store_failed || observer.sawError();
        failed = failed || r.status != ts::Status::Ok;
        if (p.jsonl) {
            std::cout << ts::dumpJson(summaryJson(r, top)) << '\n' << std::flush;
        } else if (!p.csv) {
            ts::MemoryReportOptions ro;
            ro.top = top;
            ro.format = format;
            std::cout << ts::formatMemory(r, ro) << '\n';
        } else if (specs.size() == 1) {
            std::cout << ts::memoryTimelineCsv(r);
        }
        results.push_back(std::move(r));
    }
    if (!p.jsonl && !results.empty()) {
        if (p.csv && specs.size() > 1) {
            std::cout << ts::memoryPeakTable(results, format);
        } else if (!p.csv) {
            if (results.size() > 1)
                std::cout << (p.markdown ? "### Peak memory by point\n\n"
                                         : "Peak memory by point\n")
                          << ts::memoryPeakTable(results, format) << '\n';
            std::cout << ts::formatEnvironment(results.front().environment, format);
        }
    }
    int code = kOk;
    if (!o.snapshot.empty() && !results.empty()) {
        const ts::MemoryResult& r = results.front();
        if (r.trace.events.empty() && r.trace.segments.empty()) {
            std::fprintf(stderr, "error: no allocator trace to write to '%s' (%s)\n",
                         o.snapshot.c_str(),
                         r.error.empty() ? "nothing was recorded" : r.error.c_str());
            code = kRunFailed;
        } else if (!writeSnapshot("--snapshot", o.snapshot, r.trace, p.quiet, p.db)) {
            code = kRunFailed;
        }
    }
    if (!o.oom_snapshot.empty() && !results.empty()) {
        const ts::MemoryResult& r = results.front();
        if (!r.frontier || !r.frontier->oom_trace) {
            std::fprintf(stderr, "error: no out-of-memory snapshot to write to '%s' (%s)\n",
                         o.oom_snapshot.c_str(),
                         !r.frontier ? "the frontier did not run"
                         : r.frontier->smallest_oom == 0
                             ? "no probe ran out of memory"
                             : "the allocator did not report the failure");
            code = kRunFailed;
        } else if (!writeSnapshot("--oom-snapshot", o.oom_snapshot, *r.frontier->oom_trace, p.quiet,
                                  p.db)) {
            code = kRunFailed;
        }
    }
    return runExitCode(store_failed || code != kOk, interruptToken().cancelled(), failed);
}

void addMemoryCommand(CLI::App& app, int& code) {
    auto o = std::make_shared<MemoryOptions>();
    auto* cmd =
        app.add_subcommand("memory",
                           "The memory of a training step: warm-up steps, then steps with the CUDA "
                           "caching allocator's history on; the active-memory timeline, every byte "
                           "by category, the peak against the analytic model, the largest "
                           "allocations, and the OOM frontier.");
    cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    addPointOptions(*cmd, o->point, /*measured_steps=*/false, /*exec=*/false);
    addCodeOptions(*cmd, o->point);  // the user's code, its allocator history recorded
    cmd->get_option("--warmup")
        ->description("Warm-up steps, run before the allocator's history is turned on");
    cmd->add_option("--record-steps", o->record_steps, "Steps recorded, after the warm-up")
        ->capture_default_str();
    cmd->add_flag("--stacks", o->stacks,
                  "Record the C++ stack of every allocation (slow to symbolize)");
    cmd->add_option("--frontier", o->frontier,
                    "Find the largest context | batch that fits on this GPU (bisection)");
    cmd->add_option("--frontier-max", o->frontier_max,
                    "The frontier's upper end (0: 131072 contexts, 4096 batches)")
        ->capture_default_str();
    cmd->add_option("--top", o->top, "Rows of the allocation tables (0: all)")
        ->capture_default_str();
    cmd->add_option(
        "--compare", o->compare,
        "Compare two stored memory runs category by category (A,B; ID or ID:POINT); runs nothing");
    cmd->add_option("--snapshot", o->snapshot,
                    "Write the allocator snapshot as the pickle memory_viz reads");
    cmd->add_option("--oom-snapshot", o->oom_snapshot,
                    "With --frontier: write the snapshot taken when the smallest failing probe ran "
                    "out of memory");
    addStoreOptions(*cmd, o->point.db, o->point.label, o->point.no_store, "the run");
    addFormatOptions(*cmd, o->point, "Markdown tables",
                     "CSV: the timeline (one point) or the peak table (several)",
                     "One JSON line per step and frontier probe, then each point's summary");
    cmd->add_flag("-q,--quiet", o->point.quiet, "No progress on stderr");

    auto imp = std::make_shared<ImportOptions>();
    auto* import = cmd->add_subcommand(
        "import",
        "Import a memory_viz snapshot (the pickle torch.cuda.memory._dump_snapshot writes) as a "
        "stored memory run, and show its tables; nothing is run");
    import->add_option("file", imp->file, "The snapshot (.pickle)")->required();
    addStoreOptions(*import, imp->db, imp->label, imp->no_store, "the run");
    import->get_option("--label")->description(
        "Label of the stored run (default: the file's name)");
    import->add_option("--top", imp->top, "Rows of the allocation tables (0: all)")
        ->capture_default_str();
    imp->format.add(*import, {"table", "markdown", "csv"},
                    {{"markdown", "Markdown tables"}, {"csv", "CSV: the timeline"}});
    import->add_flag("-q,--quiet", imp->quiet, "Nothing on stderr but errors");
    import->callback([imp, &code] { code = importMemoryCommand(*imp);
});

cmd->callback([o, cmd, import, &code] {
    if (import->parsed()) return;  // `memory import` ran instead
    recordGivenOptions(*cmd, o->point);
    readFormat(o->point);
    code = runMemoryCommand(*o);
});
}  // namespace

const CommandRegistration registration(ts::kMemoryLab, addMemoryCommand);

}  // namespace
