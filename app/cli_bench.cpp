// `trainscope-cli bench`: the benchmark lab from the command line. A comma list in a flag
// sweeps it; every finished point is stored.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_report.h"
#include "cli_common.h"
#include "cli_point.h"
#include "core/json.h"
#include "core/store.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"

namespace {

using namespace ts::cli;

// Prints progress on stderr and, with --jsonl, every step and result on stdout.
class CliObserver : public ts::BenchObserver {
public:
    CliObserver(bool jsonl, bool quiet)
        : jsonl_(jsonl), quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}
    void pointStarted(int index, int count, const ts::PointConfig& c) override {
        count_ = count;
        current_ = c;
        if (!quiet_) {
            // The user's model has its own attention: their code is named instead.
            const std::string whose = c.source == ts::Source::Python
                                          ? "your code " + c.python.code
                                          : std::string(ts::toString(c.attention));
            const std::string exec =
                c.exec == ts::ExecMode::Eager ? "" : " " + std::string(ts::toString(c.exec));
            std::fprintf(stderr, "%s[%d/%d] %s ctx=%lld batch=%lld %s %s %s%s on %s\n",
                         tty_ ? "\r\033[K" : "", index + 1, count, c.model.name.c_str(),
                         static_cast<long long>(c.model.context_length),
                         static_cast<long long>(c.batch_size),
                         std::string(ts::toString(c.precision)).c_str(), whose.c_str(),
                         std::string(ts::toString(c.mode)).c_str(), exec.c_str(), c.device.c_str());
        }
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
                         current_.warmup + current_.steps, s.warmup ? " (warm-up)" : "", s.total_ms,
                         s.loss);
    }
    void pointFinished(int point, const ts::BenchResult& r) override {
        if (jsonl_) {
            nlohmann::json j = ts::toJson(r);
            j["type"] = "result";
            j["point"] = point;
            // Derived, for readers of the stream (the stored row keeps the measurements only).
            if (const auto t = ts::achievedTflops(r)) j["tflops"] = *t;
            if (const auto p = ts::peakShare(r)) j["peak_share"] = *p;
            if (const std::string noise = ts::noiseText(r); !noise.empty()) j["noise"] = noise;
            std::cout << ts::dumpJson(j) << '\n' << std::flush;
        }
        const std::string status(ts::toString(r.status));
        if (!quiet_) {
            if (tty_) std::fputs("\r\033[K", stderr);
            if (r.status == ts::Status::Ok)
                std::fprintf(stderr, "    total %.2f ± %.2f ms per step\n", r.total.mean,
                             r.total.std);
            else
                std::fprintf(stderr, "    %s: %s\n", status.c_str(), r.error.c_str());
        } else if (r.status != ts::Status::Ok && r.status != ts::Status::Cancelled) {
            // Quiet hides progress, not the reason for a failure.
            std::fprintf(stderr, "point %d: %s: %s\n", point + 1, status.c_str(), r.error.c_str());
        }
    }
    void log(ts::LogLevel level, const std::string& message) override {
        if (level == ts::LogLevel::Info && !quiet_) {  // what the user's code was found to be
            std::fprintf(stderr, "%s    %s\n", tty_ ? "\r\033[K" : "", message.c_str());
            return;
        }
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
    ts::PointConfig current_;
};

// `bench --code X --check`: what the runner finds, and nothing run.
int checkCode(const BenchOptions& o) {
    if (o.code.empty()) throw BadInput("--check: says what --code names; give --code too");
    catchInterrupts();
    const ts::CodeCheck c = ts::checkPythonCode(o.code, o.optimizer, o.python, interruptToken());
    const std::string text = c.text();
    std::cout << text << (text.empty() || text.back() == '\n' ? "" : "\n");
    return c.outcome.ok() ? kOk : kRunFailed;
}

int runBench(const BenchOptions& o) {
    if (o.check) return checkCode(o);
    ts::SweepSpec sweep;
    const std::vector<ts::PointConfig> points = benchPoints(o, &sweep);
    const std::string spec_json = ts::benchSpecJson(sweep, points.size());
    const StoredRun run = startStoredRun(ts::kBenchLab, o.db, o.label, o.no_store, o.quiet,
                                         spec_json, ts::currentEnvironment(points.front().device),
                                         static_cast<int>(points.size()));
    catchInterrupts();
    CliObserver observer(o.jsonl, o.quiet);
    const auto results = ts::runSweep(points, observer, interruptToken(), run.get(), run.id);
    if (!o.jsonl) {
        const auto format = tableFormat(o.markdown, o.csv);
        std::cout << ts::formatResults(results, format);
        if (!o.csv && !results.empty())
            std::cout << '\n'
                      << ts::formatEnvironment(
                             results.front().environment,
                             o.markdown ? ts::TableFormat::Markdown : ts::TableFormat::Text);
    }
    const bool point_failed = std::any_of(results.begin(), results.end(), [](const auto& r) {
        return r.status == ts::Status::Failed;
    });
    return runExitCode(observer.sawError(), interruptToken().cancelled(), point_failed);
}

void addBenchCommand(CLI::App& app, int& code) {
    auto o = std::make_shared<BenchOptions>();
    // The swept dimensions named from the point's table (see Note [point dimensions]).
    std::vector<std::string> swept;
    for (const auto& d : ts::pointDimensions())
        if (!d.list_key.empty()) swept.emplace_back(d.flag);
    auto* bench = app.add_subcommand(
        "bench", fmt::format("Time forward, backward and optimizer steps of the Transformer LM. "
                             "A comma list in {} sweeps it.",
                             fmt::join(swept, ", ")));
    bench->option_defaults()->multi_option_policy(
        CLI::MultiOptionPolicy::TakeLast);  // last one wins
    addPointOptions(*bench, *o, /*measured_steps=*/true, /*exec=*/true);
    addCodeOptions(*bench, *o);
    bench->add_flag("--check", o->check,
                    "With --code: say what it names (the interpreter, torch, the model, the "
                    "optimizer, the course's adapters) and run nothing");
    bench->add_option("--sweep", o->sweep_file,
                      "A JSON sweep file instead of the flags (see docs/)");
    addStoreOptions(*bench, o->db, o->label, o->no_store);
    addFormatOptions(*bench, *o, "Markdown table shaped like the course writeups",
                     "CSV with every column", "One JSON line per step and per result, streamed");
    bench->add_flag("-q,--quiet", o->quiet, "No progress on stderr");
    bench->callback([o, bench, &code] {
        recordGivenOptions(*bench, *o);
        readFormat(*o);
        code = runBench(*o);
    });
}

const CommandRegistration registration(ts::kBenchLab, addBenchCommand);

}  // namespace
