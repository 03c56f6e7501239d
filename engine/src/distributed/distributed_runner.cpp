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
#include <set>

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

    // A point that cannot start: why, or "" (see below for the ones that can).
    auto problemOf = [&](const DistributedPoint& p) {
        auto problems = validateDistributedPoint(p, gpus, dist::ncclBuilt());
        if (problems.empty() && p.experiment == DistExperiment::Ddp)
            if (auto python = pythonStrategyProblem(p.ddp); !python.empty())
                problems.push_back(python);
        return joined(problems);
    };
    // Points that share one launch: See Note [a world kept across points].
    auto keptWorld = [](const DistributedPoint& p) {
        return p.experiment == DistExperiment::Ddp && !strategyTraits(p.ddp.strategy).python;
    };

    int i = 0;
    while (i < count) {
        const DistributedPoint& p = spec.points[i];
        const std::string problem = cancel.cancelled() ? std::string() : problemOf(p);
        if (cancel.cancelled() || !problem.empty()) {
            DistributedResult r;
            r.point = p;
            r.environment =
                currentEnvironment(p.backend == dist::CommBackend::Nccl ? "cuda" : "cpu");
            r.rank_devices.assign(static_cast<size_t>(std::max(p.world_size, 0)), "");
            observer.pointStarted(i, count, p);
            r.status = cancel.cancelled() ? Status::Cancelled : Status::Failed;
            r.error = cancel.cancelled() ? "stopped before it started" : problem;
            rows.finish(i, std::move(r), results);
            ++i;
        } else {
            // The points of this launch: i, and after it those that can share its world.
            int last = i + 1;
            if (keptWorld(p))
                while (last < count && keptWorld(spec.points[last]) &&
                       spec.points[last].world_size == p.world_size &&
                       spec.points[last].backend == p.backend &&
                       problemOf(spec.points[last]).empty())
                    ++last;
            struct Running {
                DistributedResult r;
                std::optional<PointTrace> trace;
                std::map<int, std::string> tracebacks;  // a Python rank's, with its error line
                std::set<int> done;                     // the ranks that said it ended
            };
            std::vector<Running> run(static_cast<size_t>(last - i));
            nlohmann::json specs = nlohmann::json::array();
            for (size_t k = 0; k < run.size(); ++k) {
                const DistributedPoint& q = spec.points[i + k];
                run[k].r.point = q;
                run[k].r.environment =
                    currentEnvironment(q.backend == dist::CommBackend::Nccl ? "cuda" : "cpu");
                run[k].r.rank_devices.assign(static_cast<size_t>(std::max(q.world_size, 0)), "");
                run[k].trace = pointTrace(q, i + static_cast<int>(k), outputs, store, run_id);
                DdpSpec launched = q.ddp;
                if (run[k].trace) launched.trace_dir = run[k].trace->ranks;
                specs.push_back(toJson(launched));
            }
            size_t current = 0;  // the first point of the launch not yet ended
            // The point's end: its trace merged, a wrong result named, its closing row.
            auto finishPoint = [&](size_t k) {
                Running& x = run[k];
                const DistributedPoint& q = spec.points[i + k];
                if (x.trace) mergePointTrace(*x.trace, i + static_cast<int>(k), q, x.r, observer);
                if (x.r.check.ran && !x.r.check.passed && x.r.status == Status::Ok) {
                    // See Note [your DDP classes]: a wrong result is the point's failure, not
                    // timed.
                    x.r.status = Status::Failed;
                    x.r.error = "wrong result: " + x.r.check.message;
                }
                rows.finish(i + static_cast<int>(k), std::move(x.r), results);
            };
            observer.pointStarted(i, count, p);
            DistributedPoint launched = p;
            if (run[0].trace) launched.ddp.trace_dir = run[0].trace->ranks;
            dist::LaunchSpec launch;
            launch.executable = worker;
            launch.arguments = workerArguments(launched);
            if (keptWorld(p)) launch.arguments.back() = specs.dump();  // every point's spec
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
            launch.backend = p.backend;
            launch.hang_timeout = std::chrono::milliseconds(
                static_cast<int64_t>(std::ceil(spec.hang_timeout_s * 1000)));
            std::vector<std::pair<int, std::string>> held;  // lines of a later point, kept
            // A stop (a cancel, a row not stored) between two points: the next one has not
            // started, and does not (its ranks are ended with the launch).
            bool halted = false;
            std::function<void(int, const std::string&)> onLine = [&](int rank,
                                                                      const std::string& text) {
                if (halted) return;
                nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
                if (!j.is_object()) return;  // not a worker line (a library's print)
                const auto at = j.find("point");
                const size_t k = at != j.end() && at->is_number_unsigned()
                                     ? at->get<size_t>()
                                     : current;  // an error line: the point in progress
                if (k >= run.size() || k < current) return;
                if (k > current) {  // a rank already on the next point: after this one ends
                    held.emplace_back(rank, text);
                    return;
                }
                const int index = i + static_cast<int>(k);
                const DistributedPoint& q = spec.points[index];
                DistributedResult& r = run[k].r;
                const std::string event = j.value("event", "");
                try {
                    if (event == "error") {  // the launcher takes its message
                        run[k].tracebacks[rank] = j.value("traceback", "");
                    } else if (event == "ready") {
                        r.rank_devices[rank] = j.value("device", "");
                        observer.rankReady(index, rank, r.rank_devices[rank]);
                        if (rank == 0) logFound(observer, index, j, r);
                    } else if (event == "check" && rank == 0) {
                        r.check = checkFromJson(j);
                        observer.log(
                            r.check.passed ? LogLevel::Info : LogLevel::Error,
                            fmt::format("point {}: the course's check {}: {}", index + 1,
                                        r.check.passed ? "passed" : "FAILED", r.check.message));
                    } else if (event == "result" && j.value("experiment", "") == "ddp") {
                        r.steps.push_back(ddpStepRowFromJson(j.at("row")));
                        observer.ddpStep(index, r.steps.back());
                        rows.store(index, q, ddpStepPayload(r.steps.back()), Status::Ok);
                        meter.report(++done_work, total_work);
                    } else if (event == "result" && rank == 0) {
                        const auto line = dist::parseWorkerLine(text);
                        if (!line || !line->allreduce) return;
                        r.allreduce.push_back(
                            dist::allreduceRow(*line->allreduce, q.allreduce.link_gbps));
                        observer.allreduceMeasured(index, r.allreduce.back());
                        rows.store(index, q, allreducePayload(r.allreduce.back()), Status::Ok);
                        meter.report(++done_work, total_work);
                    } else if (event == "point_done") {
                        run[k].done.insert(rank);
                        if (static_cast<int>(run[k].done.size()) < q.world_size) return;
                        finishPoint(k);
                        ++current;
                        if (current == run.size()) return;
                        if (cancel.cancelled() || !rows.error().empty()) {
                            halted = true;
                            return;
                        }
                        observer.pointStarted(i + static_cast<int>(current), count,
                                              spec.points[i + current]);
                        auto later = std::move(held);
                        held.clear();
                        for (const auto& [from, line] : later) onLine(from, line);
                    }
                } catch (const std::exception& e) {
                    observer.log(
                        LogLevel::Warning,
                        fmt::format("distributed: rank {} sent a line that does not read: {}", rank,
                                    e.what()));
                }
            };
            {
                try {
                    dist::LocalLauncher launcher(launch);
                    const dist::LaunchOutcome outcome = launcher.run(
                        onLine, [&] { return cancel.cancelled() || !rows.error().empty(); });
                    // The point in progress when the launch ended (none when all ended).
                    if (current < run.size() && !halted) {
                        DistributedResult& now = run[current].r;
                        switch (outcome.state) {
                            case dist::LaunchOutcome::State::Finished:
                                if (keptWorld(p)) {  // the ranks left before saying it ended
                                    now.status = Status::Failed;
                                    now.error = "the ranks exited before the point ended";
                                }
                                break;
                            case dist::LaunchOutcome::State::Cancelled:
                                now.status = Status::Cancelled;
                                now.error = "stopped; every rank was ended";
                                break;
                            case dist::LaunchOutcome::State::Failed:
                            case dist::LaunchOutcome::State::TimedOut:
                                now.status = Status::Failed;
                                now.failed_rank = outcome.failed_rank;
                                now.error = outcome.message;
                                if (auto tb = run[current].tracebacks.find(outcome.failed_rank);
                                    tb != run[current].tracebacks.end())
                                    now.traceback = tb->second;
                                break;
                        }
                    }
                } catch (const std::exception& e) {  // the launch itself (fork, pipes), a bad spec
                    if (current < run.size()) {
                        run[current].r.status = Status::Failed;
                        run[current].r.error = e.what();
                    }
                }
            }
            if (current < run.size() && !halted) {
                finishPoint(current);
                ++current;
            }
            // Points of this launch not reached (a rank failed before them): their own launch.
            for (size_t k = current; k < run.size(); ++k)
                if (run[k].trace) removeRankTraceFiles(run[k].trace->ranks, p.world_size);
            i += static_cast<int>(current);
        }
        if (!rows.error().empty()) break;
        if (cancel.cancelled()) {
            // The points not run are stopped too (each gets its closing row).
            for (int k = i; k < count; ++k) {
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
