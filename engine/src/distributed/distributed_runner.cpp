// The distributed lab's runner: each point is world_size processes of the worker (the CLI's
// `worker`), started by the local launcher; the ranks' JSON lines become the observer's calls
// and the store's rows as they arrive (see Note [distributed rows]).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/store.h"
#include "distributed/distributed.h"
#include "distributed/distributed_json.h"
#include "distributed/rank_traces.h"
#include "distributed/run_rows.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"
#include "trainscope/distributed/launcher.h"
#include "trainscope/distributed/worker_lines.h"

namespace ts {

namespace {

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
    return out;
}

// The worker's command line for a point (after the executable).
std::vector<std::string> workerArguments(const DistributedPoint& p) {
    std::vector<std::string> args{"worker", "--experiment", std::string(toString(p.experiment)),
                                  "--backend", dist::backendName(p.backend)};
    if (p.experiment == DistExperiment::Allreduce) {
        std::vector<std::string> sizes, dtypes;
        for (int64_t s : p.allreduce.sizes) sizes.push_back(std::to_string(s));
        for (auto d : p.allreduce.dtypes) dtypes.push_back(dist::dtypeName(d));
        args.insert(args.end(), {"--sizes", joined(sizes), "--dtypes", joined(dtypes), "--warmup",
                                 std::to_string(p.allreduce.warmup), "--steps",
                                 std::to_string(p.allreduce.iters), "--link-gbps",
                                 fmt::format("{}", p.allreduce.link_gbps)});
    } else {
        args.insert(args.end(), {"--spec", toJson(p.ddp).dump()});
    }
    return args;
}

// What the Python runner's strategies get (fsdp2, torch-ddp, yours-*): the point's DDP spec,
// its backend, the model's shape and the user's code.
nlohmann::json pythonRunnerSpec(const DistributedPoint& p) {
    const ModelConfig m = ddpModel(p.ddp);
    return {{"backend", dist::backendName(p.backend)},
            {"code", p.ddp.code},
            {"ddp", toJson(p.ddp)},
            {"model",
             {{"d_model", m.d_model},
              {"d_ff", m.d_ff},
              {"num_layers", m.num_layers},
              {"num_heads", m.num_heads},
              {"context_length", m.context_length},
              {"vocab_size", m.vocab_size}}}};
}

// The runner's "check" line (see Note [your DDP classes]).
DdpCheck checkFromJson(const nlohmann::json& j) {
    DdpCheck c;
    c.ran = true;
    c.passed = j.value("passed", false);
    const auto diff = j.find("max_diff");
    c.max_diff = diff != j.end() && diff->is_number() ? diff->get<double>() : -1;
    c.steps = j.value("steps", 0);
    c.tolerance = j.value("tolerance", "");
    c.message = j.value("message", "");
    return c;
}

// What rank 0 of a Python strategy found: the user's class, the adapters' edition, its notes.
void logFound(DistributedObserver& observer, int point, const nlohmann::json& j,
              DistributedResult& r) {
    r.what = j.value("what", "");
    if (r.what.empty()) return;
    std::string edition = j.value("edition", "");
    if (edition == "both")
        edition = "both editions'";
    else if (!edition.empty())
        edition = "the " + edition + " edition's";
    observer.log(
        LogLevel::Info,
        fmt::format("point {}: {} from {}{} on {}", point + 1, r.what, j.value("where", "?"),
                    edition.empty() ? "" : " (" + edition + " adapters)", j.value("model", "?")));
    for (const auto& note : j.value("notes", std::vector<std::string>{}))
        observer.log(LogLevel::Info, fmt::format("point {}: {}", point + 1, note));
}

// A traced DDP point (see Note [one trace of every rank]): where its ranks write their traces
// (a folder beside the merged file, made empty) and where the merged one goes.
struct PointTrace {
    std::string merged, ranks;
};

std::optional<PointTrace> pointTrace(const DistributedPoint& p, int index,
                                     const DistributedOutputs& outputs, const ResultStore* store,
                                     int64_t run_id) {
    if (p.experiment != DistExperiment::Ddp || p.ddp.trace_steps <= 0) return std::nullopt;
    namespace fs = std::filesystem;
    PointTrace t;
    std::error_code ec;
    t.merged = fs::absolute(mergedTracePath(outputs.trace_dir, store ? store->path() : "",
                                            store ? run_id : 0, index),
                            ec)
                   .string();
    t.ranks = t.merged + ".ranks";
    removeRankTraceFiles(t.ranks, p.world_size);  // a killed run's
    fs::create_directories(t.ranks, ec);
    return t;
}

// Merges the ranks' traces of a point that finished; the file, or a Warning saying why not.
void mergePointTrace(const PointTrace& t, int index, const DistributedPoint& p,
                     DistributedResult& r, DistributedObserver& observer) {
    if (r.status == Status::Ok) {
        try {
            mergeRankTraceFiles(t.ranks, p.world_size, t.merged);
            r.trace_file = t.merged;
            observer.log(LogLevel::Info,
                         fmt::format("point {}: {} ranks' trace of {} step{} → {} (open it in "
                                     "https://ui.perfetto.dev)",
                                     index + 1, p.world_size, p.ddp.trace_steps,
                                     p.ddp.trace_steps == 1 ? "" : "s", t.merged));
        } catch (const std::exception& e) {
            observer.log(LogLevel::Warning,
                         fmt::format("point {}: the ranks' traces were not merged: {}", index + 1,
                                     e.what()));
        }
    }
    removeRankTraceFiles(t.ranks, p.world_size);
}

}  // namespace

std::string pythonStrategyProblem(const DdpSpec& d) {
    const StrategyTraits t = strategyTraits(d.strategy);
    if (!t.python) return {};
    return t.users ? pythonCodeProblem(d.code, d.python, /*adapters_module=*/true)
                   : pythonInterpreterProblem(d.python);
}

std::vector<DistributedResult> runDistributed(const DistributedSpec& spec,
                                              const std::string& worker,
                                              DistributedObserver& observer,
                                              const CancelToken& cancel, ResultStore* store,
                                              int64_t run_id, const DistributedOutputs& outputs) {
    std::vector<DistributedResult> results;
    const int gpus = dist::gpuCount();
    const int count = static_cast<int>(spec.points.size());
    RunRows rows(store, run_id, spec.points.size(), observer);  // See RunRows (run_rows.h)
    // Steps expected over all points, for the progress.
    double total_work = 0, done_work = 0;
    for (const auto& p : spec.points)
        total_work +=
            p.experiment == DistExperiment::Ddp
                ? static_cast<double>(p.world_size) * (p.ddp.warmup_steps + p.ddp.measured_steps)
                : static_cast<double>(p.allreduce.sizes.size() * p.allreduce.dtypes.size());
    ProgressMeter meter(observer);

    for (int i = 0; i < count; ++i) {
        const DistributedPoint& p = spec.points[i];
        DistributedResult r;
        r.point = p;
        r.environment = currentEnvironment(p.backend == dist::CommBackend::Nccl ? "cuda" : "cpu");
        r.rank_devices.assign(static_cast<size_t>(std::max(p.world_size, 0)), "");
        observer.pointStarted(i, count, p);
        if (cancel.cancelled()) {
            r.status = Status::Cancelled;
            r.error = "stopped before it started";
        } else if (auto problems = validateDistributedPoint(p, gpus, dist::ncclBuilt());
                   !problems.empty() ||
                   (p.experiment == DistExperiment::Ddp && !pythonStrategyProblem(p.ddp).empty())) {
            if (problems.empty()) problems.push_back(pythonStrategyProblem(p.ddp));
            r.status = Status::Failed;
            r.error = joined(problems);
        } else {
            const std::optional<PointTrace> trace = pointTrace(p, i, outputs, store, run_id);
            DistributedPoint launched = p;
            if (trace) launched.ddp.trace_dir = trace->ranks;
            dist::LaunchSpec launch;
            launch.executable = worker;
            launch.arguments = workerArguments(launched);
            if (const StrategyTraits traits = strategyTraits(p.ddp.strategy);
                p.experiment == DistExperiment::Ddp && traits.python) {
                // PyTorch's FSDP2 and DDP, and the user's classes (see Note [your DDP
                // classes]): the Python runner's ranks speak the same lines.
                const std::string python = p.ddp.python.empty() ? defaultPython() : p.ddp.python;
                launch.executable = findExecutable(python);
                if (launch.executable.empty())
                    throw std::runtime_error(
                        fmt::format("{} runs in Python with torch, and none was found ({}): set "
                                    "TRAINSCOPE_PYTHON or --python to one",
                                    p.ddp.strategy, python));
                launch.arguments = {"-m", "trainscope_runner", traits.runner, "--spec",
                                    pythonRunnerSpec(launched).dump()};
                for (auto& e : pythonRunnerEnvironment())
                    launch.environment.push_back(std::move(e));
                launch.runner_server = runnerServer(launch.executable);
            }
            launch.world_size = p.world_size;
            std::map<int, std::string> tracebacks;  // a Python rank's, with its error line
            launch.backend = p.backend;
            launch.hang_timeout = std::chrono::milliseconds(
                static_cast<int64_t>(std::ceil(spec.hang_timeout_s * 1000)));
            try {
                dist::LocalLauncher launcher(launch);
                const dist::LaunchOutcome outcome = launcher.run(
                    [&](int rank, const std::string& text) {
                        nlohmann::json j =
                            nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
                        if (!j.is_object()) return;  // not a worker line (a library's print)
                        const std::string event = j.value("event", "");
                        try {
                            if (event == "error") {  // the launcher takes its message
                                tracebacks[rank] = j.value("traceback", "");
                            } else if (event == "ready") {
                                r.rank_devices[rank] = j.value("device", "");
                                observer.rankReady(i, rank, r.rank_devices[rank]);
                                if (rank == 0) logFound(observer, i, j, r);
                            } else if (event == "check" && rank == 0) {
                                r.check = checkFromJson(j);
                                observer.log(
                                    r.check.passed ? LogLevel::Info : LogLevel::Error,
                                    fmt::format("point {}: the course's check {}: {}", i + 1,
                                                r.check.passed ? "passed" : "FAILED",
                                                r.check.message));
                            } else if (event == "result" && j.value("experiment", "") == "ddp") {
                                r.steps.push_back(ddpStepRowFromJson(j.at("row")));
                                observer.ddpStep(i, r.steps.back());
                                rows.store(i, p, ddpStepPayload(r.steps.back()), Status::Ok);
                                meter.report(++done_work, total_work);
                            } else if (event == "result" && rank == 0) {
                                const auto line = dist::parseWorkerLine(text);
                                if (!line || !line->allreduce) return;
                                r.allreduce.push_back(
                                    dist::allreduceRow(*line->allreduce, p.allreduce.link_gbps));
                                observer.allreduceMeasured(i, r.allreduce.back());
                                rows.store(i, p, allreducePayload(r.allreduce.back()), Status::Ok);
                                meter.report(++done_work, total_work);
                            }
                        } catch (const std::exception& e) {
                            observer.log(
                                LogLevel::Warning,
                                fmt::format(
                                    "distributed: rank {} sent a line that does not read: {}", rank,
                                    e.what()));
                        }
                    },
                    [&] { return cancel.cancelled() || !rows.error().empty(); });
                switch (outcome.state) {
                    case dist::LaunchOutcome::State::Finished:
                        break;
                    case dist::LaunchOutcome::State::Cancelled:
                        r.status = Status::Cancelled;
                        r.error = "stopped; every rank was ended";
                        break;
                    case dist::LaunchOutcome::State::Failed:
                    case dist::LaunchOutcome::State::TimedOut:
                        r.status = Status::Failed;
                        r.failed_rank = outcome.failed_rank;
                        r.error = outcome.message;
                        if (auto tb = tracebacks.find(outcome.failed_rank); tb != tracebacks.end())
                            r.traceback = tb->second;
                        break;
                }
            } catch (const std::exception& e) {  // the launch itself (fork, pipes) or a bad spec
                r.status = Status::Failed;
                r.error = e.what();
            }
            if (trace) mergePointTrace(*trace, i, p, r, observer);
        }
        if (r.check.ran && !r.check.passed && r.status == Status::Ok) {
            // See Note [your DDP classes]: a wrong result is the point's failure, not timed.
            r.status = Status::Failed;
            r.error = "wrong result: " + r.check.message;
        }
        rows.finish(i, std::move(r), results);
        if (!rows.error().empty()) break;
        if (cancel.cancelled()) {
            // The points not run are stopped too (each gets its closing row).
            for (int k = i + 1; k < count; ++k) {
                DistributedResult skipped;
                skipped.point = spec.points[k];
                skipped.status = Status::Cancelled;
                skipped.error = "stopped before it started";
                rows.finish(k, std::move(skipped), results);
            }
            break;
        }
    }
    return results;
}

}  // namespace ts
