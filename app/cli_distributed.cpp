// `trainscope-cli distributed allreduce|ddp`: the all-reduce benchmark and data-parallel
// training over N local ranks. runDistributed (the engine's, as the window's) starts N copies of
// this executable as `trainscope-cli worker` through the local launcher, each rank prints JSON
// lines (distributed/worker_lines.h, ddpStepLine), and the rows are merged, stored (a run of
// kind `distributed`) and reported.
// `trainscope-cli worker --experiment allreduce|ddp`: one rank's part, reading its place in the
// group from the environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), so that
// torchrun or srun can start it too.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_common.h"
#include "core/json.h"
#include "core/store.h"
#include "core/table.h"
#include "distributed/distributed.h"
#include "distributed/distributed_json.h"
#include "distributed/distributed_report.h"
#include "runtime/environment.h"
#include "runtime/host_memory.h"
#include "trainscope/distributed/allreduce_bench.h"
#include "trainscope/distributed/launcher.h"
#include "trainscope/distributed/worker_lines.h"

namespace {

using namespace ts::cli;
namespace dist = ts::dist;

// The benchmark's flags, as the launching command takes them and passes them on to each worker.
struct BenchFlags {
    std::string backend = "gloo", sizes, dtypes = "fp32,bf16", warmup = "5", iters = "20",
                link_gbps = "0";
};

struct LaunchFlags {
    BenchFlags bench;
    FormatChoice choice;  // --format, or --markdown / --csv / --json (see Note [one spelling])
    std::string table;    // --table: which CSV table
    std::string world = "2", format = "table", timeout = "120", db, label;
    bool quiet = false, no_store = false;
    bool world_given = false;  // under torchrun or srun the world is theirs
};

// `distributed ddp`'s own flags (beside --backend, --world and the output flags).
struct DdpFlags {
    std::string size = "tiny", context = "128", batch = "4", precision = "fp32",
                attention = "naive", strategy = "bucketed", bucket_mb = "25", shard = "off",
                warmup = "2", steps = "5", seed = "0", lr = "1e-4", param_dtype = "fp32",
                prefetch = "2", checkpoint = "none", vocab = "10000", code, python, exec = "eager";
    bool strategy_given = false;
    bool fused_loss = false, fused_kernels = false, keep_attention = false, compile = false;
    bool cuda_profiler_range = false;
    std::string trace_steps = "0", trace_dir;  // see Note [one trace of every rank]
};

struct WorkerFlags {
    BenchFlags bench;
    std::string experiment, spec;
};

dist::CommBackend backendOf(const std::string& name) {
    const auto backend = dist::parseBackend(name);
    if (!backend) throw BadInput(fmt::format("--backend: '{}' is not one of gloo, nccl", name));
    return *backend;
}

dist::AllreduceSpec allreduceSpecOf(const BenchFlags& f, dist::CommBackend backend) {
    dist::AllreduceSpec spec;
    if (f.sizes.empty()) {
        spec.sizes = dist::defaultAllreduceSizes(backend);
    } else {
        for (const auto& item : requireList("--sizes", f.sizes)) {
            const auto bytes = dist::parseByteSize(item);
            if (!bytes)
                throw BadInput(
                    fmt::format("--sizes: '{}' is not a size (1MB, 16MiB, 1GB, or bytes)", item));
            if (*bytes <= 0)
                throw BadInput(fmt::format("--sizes: '{}' is not more than 0 bytes", item));
            if (*bytes > dist::kMaxAllreduceBytes)
                throw BadInput(fmt::format("--sizes: {} is more than {}", item,
                                           dist::formatByteSize(dist::kMaxAllreduceBytes)));
            spec.sizes.push_back(*bytes);
        }
    }
    spec.dtypes.clear();
    for (const auto& item : requireList("--dtypes", f.dtypes)) {
        const auto dtype = dist::parseDtype(item);
        if (!dtype) throw BadInput(fmt::format("--dtypes: '{}' is not one of fp32, bf16", item));
        spec.dtypes.push_back(*dtype);
    }
    spec.warmup = static_cast<int>(parseIntIn("--warmup", f.warmup, 0, 100000));
    spec.iters = static_cast<int>(parseIntIn("--steps", f.iters, 1, 100000));
    spec.link_gbps = parseFinite("--link-gbps", f.link_gbps);
    if (spec.link_gbps < 0)
        throw BadInput(fmt::format("--link-gbps: {} is below 0 (0: unknown)", f.link_gbps));
    if (const std::string problem = dist::allreduceSpecProblem(spec); !problem.empty())
        throw BadInput(problem);
    return spec;
}

void addBenchFlags(CLI::App& cmd, BenchFlags& f) {
    cmd.add_option("--backend", f.backend, "gloo (CPU) | nccl (one GPU per rank)")
        ->capture_default_str();
    cmd.add_option("--sizes", f.sizes,
                   "Bytes per rank's tensor, a comma list: 1MB (10^6), 16MiB (2^20), 1GB, 1048576 "
                   "(default: 1 MiB to 1 GiB on NCCL, to 64 MiB on Gloo)");
    cmd.add_option("--dtypes", f.dtypes, "fp32, bf16 (a comma list)")->capture_default_str();
    cmd.add_option("--warmup", f.warmup, "Untimed all-reduces per size and dtype")
        ->capture_default_str();
    cmd.add_option("--steps,--iters", f.iters, "Timed all-reduces per size and dtype")
        ->capture_default_str();
    cmd.add_option("--link-gbps", f.link_gbps,
                   "A link's bandwidth in GB/s for the ideal time (0: unknown)")
        ->capture_default_str();
}

// ---- the worker: one rank ----

void emit(const std::string& line) { std::cout << line << '\n' << std::flush; }

// "rank 1: x" → "x": the error line carries the rank already.
std::string withoutRank(std::string message, int rank) {
    const std::string prefix = fmt::format("rank {}: ", rank);
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    return message;
}

class LineObserver : public dist::AllreduceObserver {
public:
    explicit LineObserver(dist::CommBackend backend) : backend_(backend) {
        // Test-only (tests/distributed/test_cli_distributed.py): TRAINSCOPE_TEST_KILL_RANK=R makes
        // rank R SIGKILL itself after its first measurement, as the OOM killer would.
        if (const char* k = std::getenv("TRAINSCOPE_TEST_KILL_RANK"); k && *k)
            kill_rank_ = std::atoi(k);
    }
    void ready(int rank, int world_size, const std::string& device) override {
        emit(dist::readyLine(rank, world_size, backend_, device));
    }
    void measured(const dist::AllreduceTiming& t, int done, int total) override {
        emit(dist::allreduceResultLine(t));
        emit(dist::progressLine(
            t.rank, done, total,
            fmt::format("{} {}", dist::formatByteSize(t.bytes), dist::dtypeName(t.dtype))));
        if (t.rank == kill_rank_) ::raise(SIGKILL);
    }

private:
    dist::CommBackend backend_;
    int kill_rank_ = -1;
};

int allreduceWorker(const BenchFlags& f, const dist::GroupSpec& group) {
    const dist::AllreduceSpec spec = allreduceSpecOf(f, group.backend);
    LineObserver observer(group.backend);
    dist::runAllreduceRank(group, spec, observer);
    return kOk;
}

// "{...}" → "{"point":k,...}": a line of the k-th point of a world kept across points.
std::string withPoint(const std::string& line, size_t point) {
    if (line.empty() || line.front() != '{') return line;
    return fmt::format("{{\"point\":{},{}", point, line.substr(1));
}

// The DDP experiment's rank: the spec as JSON (--spec, as runDistributed writes it: one point,
// or an array of points run in order on one group, See Note [a world kept across points]), this
// rank's device from the backend and LOCAL_RANK; one line per step, each with its point's index
// in an array's run, and {"event":"point_done"} after each of its points.
int ddpWorker(const WorkerFlags& f, const dist::GroupSpec& group) {
    std::vector<ts::DdpSpec> specs;
    bool batch = false;
    try {
        const nlohmann::json j = ts::parseJson(f.spec);
        batch = j.is_array();
        if (batch) {
            for (const auto& one : j) specs.push_back(ts::ddpSpecFromJson(one));
        } else {
            specs.push_back(ts::ddpSpecFromJson(j));
        }
    } catch (const std::exception& e) {
        throw BadInput(fmt::format("--spec: {}", e.what()));
    }
    if (specs.empty()) throw BadInput("--spec: an empty array of points");
    for (auto& spec : specs) {
        spec.device = group.backend == dist::CommBackend::Nccl
                          ? fmt::format("cuda:{}", group.local_rank)
                          : "cpu";
        if (const auto errors = ts::validateDdpSpec(spec); !errors.empty())
            throw BadInput(errors.front());
    }
    int kill_rank = -1;  // test-only, as LineObserver's
    if (const char* k = std::getenv("TRAINSCOPE_TEST_KILL_RANK"); k && *k) kill_rank = std::atoi(k);
    auto tagged = [&](const std::string& line, size_t point) {
        return batch ? withPoint(line, point) : line;
    };
    std::vector<bool> announced(specs.size(), false);
    ts::runDdpWorkerPoints(
        specs, group,
        [&](size_t point, const ts::DdpStepRow& row) {
            if (!announced[point]) {
                emit(tagged(dist::readyLine(group.rank, group.world_size, group.backend,
                                            specs[point].device),
                            point));
                announced[point] = true;
            }
            emit(tagged(ts::ddpStepLine(row), point));
            if (row.rank == kill_rank) ::raise(SIGKILL);
        },
        [&](size_t point) {
            if (batch)
                emit(nlohmann::json{{"event", "point_done"}, {"point", point}, {"rank", group.rank}}
                         .dump());
        },
        interruptToken());
    return kOk;
}

int runWorker(const WorkerFlags& f) {
    int rank = -1;
    if (const char* r = std::getenv("RANK"); r && *r) rank = std::atoi(r);
    try {
        // One entry an experiment; each reads its own flags. nullptr: named, not there yet.
        using Experiment = int (*)(const BenchFlags&, const dist::GroupSpec&);
        static const std::map<std::string, Experiment> experiments = {
            {"allreduce", allreduceWorker}};
        const auto it = experiments.find(f.experiment);
        if (it == experiments.end() && f.experiment != "ddp")
            throw BadInput(
                fmt::format("--experiment: '{}' is not one of allreduce, ddp", f.experiment));
        if (f.experiment == "ddp" && f.spec.empty())
            throw BadInput("--experiment ddp: needs --spec (the DDP spec as JSON)");
        const dist::CommBackend backend = backendOf(f.bench.backend);
        dist::GroupSpec group;
        try {
            group = dist::groupSpecFromEnvironment(backend);
        } catch (const std::invalid_argument& e) {
            throw BadInput(e.what());
        }
        rank = group.rank;
        if (backend == dist::CommBackend::Nccl) {
            // NCCL's own error without a GPU is a CUDA driver message; say what is wrong.
            const int gpus = dist::gpuCount();
            if (group.local_rank >= gpus)
                throw BadInput(fmt::format(
                    "NCCL runs one rank per GPU: this rank's GPU (LOCAL_RANK {}) is not here "
                    "({} visible); use --backend gloo for CPU ranks",
                    group.local_rank, gpus));
        }
        catchInterrupts();  // a SIGINT/SIGTERM stops the steps at the next one
        return f.experiment == "ddp" ? ddpWorker(f, group) : it->second(f.bench, group);
    } catch (const BadInput& e) {
        emit(dist::errorLine(rank, e.what()));
        std::fprintf(stderr, "trainscope-cli worker: %s\n", e.what());
        return kBadInput;
    } catch (const std::exception& e) {
        // One line to the launcher, the run's error and the store; the whole text (LibTorch's
        // backtrace included) to this worker's stderr, the run's log.
        const std::string message = withoutRank(e.what(), rank);
        emit(dist::errorLine(rank, ts::oneLineError(message)));
        std::fprintf(stderr, "trainscope-cli worker: rank %d: %s\n", rank, message.c_str());
        return kRunFailed;
    }
}

// ---- the launching command ----

std::string selfExecutable() {
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw std::runtime_error("cannot find this executable (/proc/self/exe): " + ec.message());
    return path.string();
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
    return out;
}

// Prints each rank's steps and all-reduce rows to stderr as they arrive.
class ProgressLines : public ts::DistributedObserver {
public:
    explicit ProgressLines(bool quiet) : quiet_(quiet) {}
    void pointStarted(int index, int count, const ts::DistributedPoint& p) override {
        say(fmt::format("point {} of {}: {}", index + 1, count, ts::pointHeadline(p)));
        ready_ = 0;
        world_ = p.world_size;
        measured_ = 0;
        total_ = static_cast<int>(p.allreduce.sizes.size() * p.allreduce.dtypes.size());
    }
    void rankReady(int, int, const std::string&) override {
        if (++ready_ == world_) say(fmt::format("{} rank{} ready", world_, world_ == 1 ? "" : "s"));
    }
    void ddpStep(int, const ts::DdpStepRow& r) override {
        // A compiled overlapped step's comm wait is inside backward (-1): "—".
        if (r.rank == 0)
            say(fmt::format(
                "  step {}{}: {:.2f} ms (forward {:.2f}, backward {:.2f}, comm wait {}, optimizer "
                "{:.2f}), loss {:.4f}",
                r.step, r.warmup ? " (warm-up)" : "", r.total_ms, r.forward_ms, r.backward_ms,
                r.comm_wait_ms < 0 ? std::string("—") : fmt::format("{:.2f}", r.comm_wait_ms),
                r.optimizer_ms, r.global_loss));
    }
    void allreduceMeasured(int, const dist::AllreduceRow& r) override {
        say(fmt::format("  [{}/{}] {} {}: {:.3f} ms, busbw {:.2f} GB/s", ++measured_, total_,
                        dist::formatByteSize(r.bytes), dist::dtypeName(r.dtype), r.time_ms,
                        r.busbw_gbps));
    }
    void pointFinished(int, const ts::DistributedResult& r) override {
        if (r.status != ts::Status::Ok)
            say(fmt::format("  {}: {}", ts::toString(r.status), r.error));
    }
    void log(ts::LogLevel level, const std::string& message) override {
        if (level != ts::LogLevel::Info)
            std::fprintf(stderr, "%s\n", message.c_str());
        else
            say(message);  // what a Python strategy found, the course's check that passed
    }

private:
    void say(const std::string& line) const {
        if (!quiet_) std::fprintf(stderr, "%s\n", line.c_str());
    }
    bool quiet_;
    int ready_ = 0, world_ = 0, measured_ = 0, total_ = 0;
};

// See Note [tables other programs read]: --table names one of the experiment's tables.
void checkTableChoice(const ts::DistributedSpec& spec, const LaunchFlags& f) {
    if (!f.table.empty()) {
        const bool ddp = spec.points.front().experiment == ts::DistExperiment::Ddp;
        const std::vector<std::string> names =
            ddp ? std::vector<std::string>{"strategies", "memory",  "fsdp",
                                           "checks",     "buckets", "bucket-model"}
                : std::vector<std::string>{"allreduce", "allreduce-fit"};
        if (f.format != "csv")
            throw BadInput("--table: chooses the CSV table; give --format csv too");
        if (std::find(names.begin(), names.end(), f.table) == names.end())
            throw BadInput(
                fmt::format("--table: '{}' is not one of {}", f.table, fmt::join(names, ", ")));
    }
}

// Prints the run's report (the points run, stored as they ran); the exit code of the worst point.
int reportDistributed(const std::vector<ts::DistributedResult>& results, const LaunchFlags& f,
                      ts::ResultStore* store, int64_t run_id) {
    const bool store_failed =
        std::any_of(results.begin(), results.end(),
                    [](const ts::DistributedResult& r) { return !r.store_error.empty(); });
    if (store && store_failed)
        std::fprintf(
            stderr, "run %lld in %s is incomplete: a row could not be stored, so the run stopped\n",
            static_cast<long long>(run_id), store->path().c_str());
    else if (store && !f.quiet)
        std::fprintf(stderr, "stored as run %lld in %s\n", static_cast<long long>(run_id),
                     store->path().c_str());
    if (f.format == "json") {
        for (const auto& r : results) {
            if (r.point.experiment == ts::DistExperiment::Ddp) {
                std::cout << ts::ddpSummaryJson(r).dump() << '\n';
            } else {
                nlohmann::json rows = nlohmann::json::array();
                for (const auto& row : r.allreduce) rows.push_back(ts::toJson(row));
                std::cout << ts::dumpJson({{"experiment", "allreduce"},
                                           {"status", ts::toString(r.status)},
                                           {"error", r.error},
                                           {"rows", rows}},
                                          2)
                          << '\n';
            }
        }
    } else {
        const ts::TableFormat tf = tableFormat(f.format == "markdown", f.format == "csv");
        std::cout << (tf == ts::TableFormat::Csv
                          ? chooseCsvTable(ts::distributedCsvTables(results), f.table)
                          : ts::formatDistributed(results, tf));
    }
    std::cout << std::flush;
    bool cancelled = false, failed = false;
    for (const auto& r : results) {
        cancelled = cancelled || r.status == ts::Status::Cancelled;
        if (r.status != ts::Status::Ok && r.status != ts::Status::Cancelled && !store_failed) {
            std::fprintf(stderr, "trainscope-cli: %s\n", r.error.c_str());
            if (!r.traceback.empty())  // the user's code that raised, their frames
                std::fprintf(stderr, "%s\n", r.traceback.c_str());
            failed = true;
        }
    }
    // A store failure was said above; nothing after it ran.
    return runExitCode(store_failed, cancelled, failed);
}

int runAsRank(ts::DistributedSpec spec, const LaunchFlags& f, const dist::ExternalLaunch& launch);

// Runs the points (every one checked before anything starts), stores them unless --no-store,
// prints the report; the exit code of the worst point. Under torchrun or srun this process is
// one rank of the run instead (see Note [started by torchrun or srun]).
int runDistributedPoints(const ts::DistributedSpec& spec, const LaunchFlags& f,
                         const ts::DistributedOutputs& outputs = {}) {
    std::optional<dist::ExternalLaunch> launch;
    try {
        launch = dist::externalLaunchFromEnvironment();
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
    if (launch) return runAsRank(spec, f, *launch);
    checkTableChoice(spec, f);
    const int gpus = dist::gpuCount();
    for (size_t i = 0; i < spec.points.size(); ++i)
        if (const auto problems = ts::validateDistributedPoint(
                spec.points[i], gpus, dist::ncclBuilt(), ts::availableMemoryBytes());
            !problems.empty())
            throw BadInput(problems.front());
        else if (spec.points[i].experiment == ts::DistExperiment::Ddp)
            if (auto why = ts::pythonStrategyProblem(spec.points[i].ddp); !why.empty())
                throw BadInput(why);
    // The run is announced when it is done ("stored as run N"), not before: the ranks' lines
    // come first.
    const bool nccl = spec.points.front().backend == dist::CommBackend::Nccl;
    const StoredRun run = startStoredRun(ts::kDistributedLab, f.db, f.label, f.no_store,
                                         /*quiet=*/true, ts::distributedSpecJson(spec),
                                         ts::currentEnvironment(nccl ? "cuda" : "cpu"),
                                         static_cast<int>(spec.points.size()));
    ts::ResultStore* store = run.get();
    const int64_t run_id = run.id;
    catchInterrupts();
    ProgressLines progress(f.quiet);
    const auto results = ts::runDistributed(spec, selfExecutable(), progress, interruptToken(),
                                            store, run_id, outputs);
    return reportDistributed(results, f, store, run_id);
}

// One rank of a run that torchrun or srun started: the group from the environment, every
// point's world size its WORLD_SIZE; rank 0 gathers the others' rows, stores the run and prints
// the report, the others say that their rows went to rank 0 (see Note [ranks started by torchrun
// or srun] in the engine's distributed.h).
int runAsRank(ts::DistributedSpec spec, const LaunchFlags& f, const dist::ExternalLaunch& launch) {
    checkTableChoice(spec, f);
    const dist::CommBackend backend = spec.points.front().backend;
    const bool allreduce = spec.points.front().experiment == ts::DistExperiment::Allreduce;
    dist::GroupSpec group;
    try {
        group = dist::groupSpecFromEnvironment(backend);
    } catch (const std::invalid_argument& e) {
        throw BadInput(fmt::format("{}: {}", launch.launcher, e.what()));
    }
    if (f.world_given && spec.points.front().world_size != group.world_size)
        throw BadInput(fmt::format(
            "--world {}: {} started {} ranks (WORLD_SIZE); leave --world out under {}",
            spec.points.front().world_size, launch.launcher, group.world_size, launch.launcher));
    const int gpus = dist::gpuCount();
    if (backend == dist::CommBackend::Nccl && group.local_rank >= gpus)
        throw BadInput(fmt::format(
            "NCCL runs one rank per GPU: this rank's GPU (LOCAL_RANK {}) is not here ({} "
            "visible); use --backend gloo for CPU ranks",
            group.local_rank, gpus));
    for (auto& p : spec.points) {
        p.world_size = group.world_size;
        // Each rank has checked its own GPU above; the host's memory is each node's.
        if (const auto problems = ts::validateDistributedPoint(
                p, backend == dist::CommBackend::Nccl ? group.world_size : gpus, dist::ncclBuilt());
            !problems.empty())
            throw BadInput(problems.front());
        if (p.experiment == ts::DistExperiment::Ddp && p.ddp.trace_steps > 0)
            throw BadInput(fmt::format(
                "--trace-steps: the ranks' traces are merged by TrainScope's own launcher; under "
                "{} no process sees every rank's file. Run the ranks from one machine with "
                "`distributed ddp --world N --trace-steps K`",
                launch.launcher));
        if (p.experiment == ts::DistExperiment::Ddp && ts::strategyTraits(p.ddp.strategy).python)
            throw BadInput(fmt::format(
                "--strategy {}: runs in the Python runner, which only TrainScope's own launcher "
                "starts; under {} the strategies are TrainScope's (naive, flat, overlap, "
                "bucketed, zero1, fsdp)",
                p.ddp.strategy, launch.launcher));
    }
    const bool lead = group.rank == 0;
    const StoredRun run =
        startStoredRun(ts::kDistributedLab, f.db, f.label, f.no_store || !lead, /*quiet=*/true,
                       ts::distributedSpecJson(spec),
                       ts::currentEnvironment(backend == dist::CommBackend::Nccl ? "cuda" : "cpu"),
                       static_cast<int>(spec.points.size()));
    catchInterrupts();
    ProgressLines progress(f.quiet || !lead);
    if (lead && !f.quiet)
        std::fprintf(stderr, "rank 0 of %d, started by %s on %s: the other ranks' rows come here\n",
                     group.world_size, launch.launcher.c_str(), launch.node().c_str());
    std::vector<ts::DistributedResult> results;
    try {
        results = ts::runDistributedAsRank(spec, group, launch.node(), progress, interruptToken(),
                                           run.get(), run.id);
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    } catch (const std::exception& e) {
        // Not rank 0: rank 0 has this message too (see Note [rows through the store]).
        std::fprintf(stderr, "trainscope-cli: rank %d of %d (%s): %s\n", group.rank,
                     group.world_size, launch.node().c_str(), ts::oneLineError(e.what()).c_str());
        return kRunFailed;
    }
    if (!lead) {
        std::cout << fmt::format("rank {} of {}: {} sent to rank 0\n", group.rank, group.world_size,
                                 allreduce ? "times" : "rows")
                  << std::flush;
        return interruptToken().cancelled() ? kInterrupted : kOk;
    }
    if (!f.quiet && !results.empty()) {
        std::string nodes;
        const auto& where = results.front().rank_nodes;
        for (size_t r = 0; r < where.size(); ++r)
            if (!where[r].empty())
                nodes += fmt::format("{}rank {} on {}", nodes.empty() ? "" : ", ", r, where[r]);
        if (!nodes.empty()) std::fprintf(stderr, "%s\n", nodes.c_str());
    }
    return reportDistributed(results, f, run.get(), run.id);
}

double timeoutOf(const LaunchFlags& f) {
    const double timeout_s = parseFinite("--timeout", f.timeout);
    if (timeout_s <= 0)
        throw BadInput(fmt::format("--timeout: {} is not more than 0 seconds", f.timeout));
    if (timeout_s > 86400)  // beyond it the milliseconds overflow and a hang is never noticed
        throw BadInput(fmt::format("--timeout: {} is more than the limit of 86400 seconds (a day)",
                                   f.timeout));
    return timeout_s;
}

int runDistributedAllreduce(const LaunchFlags& f) {
    ts::DistributedPoint p;
    p.experiment = ts::DistExperiment::Allreduce;
    p.backend = backendOf(f.bench.backend);
    p.world_size = static_cast<int>(parseIntIn("--world", f.world, 1, 256));
    p.allreduce = allreduceSpecOf(f.bench, p.backend);
    ts::DistributedSpec spec{{p}, timeoutOf(f)};
    return runDistributedPoints(spec, f);
}

template <typename T, typename Parse>
std::vector<T> listOf(const char* flag, const std::string& text, Parse parse) {
    std::vector<T> out;
    for (const auto& item : requireList(flag, text)) out.push_back(parse(item));
    return out;
}

int runDistributedDdp(const LaunchFlags& f, const DdpFlags& d) {
    ts::DistributedPoint base;
    base.experiment = ts::DistExperiment::Ddp;
    base.backend = backendOf(f.bench.backend);
    base.world_size = static_cast<int>(parseIntIn("--world", f.world, 1, 256));
    ts::DdpSpec& s = base.ddp;
    if (!ts::modelPreset(d.size)) {
        std::string names;
        for (const auto& n : ts::modelPresetNames()) names += (names.empty() ? "" : ", ") + n;
        throw BadInput(fmt::format("--size: '{}' is not one of {}", d.size, names));
    }
    s.model_size = d.size;
    s.context_length = parseIntIn("--context-length", d.context, 1, int64_t{1} << 20);
    s.batch_per_rank = parseIntIn("--batch-size", d.batch, 1, int64_t{1} << 20);
    const auto attention = ts::parseAttentionImpl(d.attention);
    if (!attention)
        throw BadInput(
            fmt::format("--attention: '{}' is not an attention implementation", d.attention));
    s.attention = *attention;
    s.warmup_steps = static_cast<int>(parseIntIn("--warmup", d.warmup, 0, 100000));
    s.measured_steps = static_cast<int>(parseIntIn("--steps", d.steps, 1, 100000));
    s.cuda_profiler_range = d.cuda_profiler_range;
    noteCudaProfilerRangeOff(d.cuda_profiler_range,
                             base.backend == dist::CommBackend::Nccl ? "cuda" : "cpu (gloo)");
    s.seed = static_cast<uint64_t>(parseIntIn("--seed", d.seed, 0, int64_t{1} << 62));
    s.learning_rate = parseFinite("--lr", d.lr);
    const auto precisions =
        listOf<ts::Precision>("--precision", d.precision, [](const std::string& x) {
            const auto p = ts::parsePrecision(x);
            if (!p)
                throw BadInput(fmt::format("--precision: '{}' is not one of fp32, bf16, fp16", x));
            return *p;
        });
    s.code = d.code;
    s.python = d.python;
    // With --code and no --strategy: the user's classes beside PyTorch's DDP and ours.
    const std::string strategy_list =
        !d.code.empty() && !d.strategy_given ? "yours,torch-ddp,bucketed" : d.strategy;
    std::vector<std::string> strategies;
    for (const auto& x : listOf<std::string>("--strategy", strategy_list,
                                             [](const std::string& item) { return item; })) {
        if (x == "yours") {  // the user's strategies that their adapters define
            if (d.code.empty()) throw BadInput("--strategy yours: your DDP classes need --code");
            try {
                for (auto& y : ts::userDdpStrategies(d.code)) strategies.push_back(y);
            } catch (const std::invalid_argument& e) {
                throw BadInput(fmt::format("--strategy: {}", e.what()));
            }
            continue;
        }
        const auto& names = ts::ddpStrategyNames();
        if (std::find(names.begin(), names.end(), x) == names.end())
            throw BadInput(
                fmt::format("--strategy: '{}' is not one of {}, yours", x, fmt::join(names, ", ")));
        strategies.push_back(x);
    }
    if (d.param_dtype != "fp32" && d.param_dtype != "bf16")
        throw BadInput(fmt::format("--param-dtype: '{}' is not one of fp32, bf16", d.param_dtype));
    s.param_dtype = d.param_dtype;
    s.prefetch = static_cast<int>(parseIntIn("--prefetch", d.prefetch, 0, 64));
    const auto checkpoint = ts::parseCheckpointing(d.checkpoint);
    if (!checkpoint)
        throw BadInput(fmt::format(
            "--checkpoint: '{}' is not none, a number of blocks (1 to {}), sqrt or nested",
            d.checkpoint, ts::kMaxCheckpointEvery));
    s.checkpoint = *checkpoint;
    s.vocab_size = parseIntIn("--vocab-size", d.vocab, 2, int64_t{1} << 24);
    s.fused_loss = d.fused_loss;
    s.fused_kernels = d.fused_kernels;
    s.keep_attention = d.keep_attention;
    s.compile = d.compile;
    // See Note [compiled data-parallel step] (engine/src/nn/graphed_step.cpp).
    const auto execs = listOf<ts::ExecMode>("--exec", d.exec, [](const std::string& x) {
        const auto e = ts::parseExecMode(x);
        if (!e || (*e != ts::ExecMode::Eager && *e != ts::ExecMode::Compiled))
            throw BadInput(fmt::format(
                "--exec: '{}' is not one of eager, compiled (torch.compile is the fsdp2 "
                "reference's --compile)",
                x));
        return *e;
    });
    const auto buckets = listOf<double>("--bucket-mb", d.bucket_mb, [](const std::string& x) {
        const auto mib = ts::parseBucketMiB(x);
        if (!mib)
            throw BadInput(fmt::format(
                "--bucket-mb: '{}' is not a bucket size (25 or 25MiB: MiB; 25MB: 10^6 bytes)", x));
        if (!(*mib > 0)) throw BadInput(fmt::format("--bucket-mb: {} is not more than 0 MiB", x));
        if (*mib > ts::kMaxBucketMiB)
            throw BadInput(fmt::format(
                "--bucket-mb: {} is more than the limit of {:g} MiB (any model's gradients fit)", x,
                ts::kMaxBucketMiB));
        return *mib;
    });
    std::vector<bool> shardings;
    if (d.shard == "off")
        shardings = {false};
    else if (d.shard == "on")
        shardings = {true};
    else if (d.shard == "both")
        shardings = {false, true};
    else
        throw BadInput(fmt::format("--shard: '{}' is not one of off, on, both", d.shard));
    s.bucket_mb = buckets.front();
    s.trace_steps = static_cast<int>(parseIntIn("--trace-steps", d.trace_steps, 0, 100000));
    ts::DistributedOutputs outputs{d.trace_dir};
    if (!d.trace_dir.empty()) {
        std::error_code ec;
        if (std::filesystem::exists(d.trace_dir, ec) &&
            !std::filesystem::is_directory(d.trace_dir, ec))
            throw BadInput(fmt::format("--trace-dir: '{}' is not a folder", d.trace_dir));
    }
    ts::DistributedSpec spec{ts::ddpSweep(base, precisions, strategies, buckets, shardings, execs),
                             timeoutOf(f)};
    return runDistributedPoints(spec, f, outputs);
}

void addLaunchFlags(CLI::App& cmd, LaunchFlags& f) {
    cmd.add_option("--world", f.world, "Ranks (NCCL: at most the GPUs present)")
        ->capture_default_str();
    f.choice.add(cmd, {"table", "markdown", "csv", "json"},
                 {{"markdown", "Markdown tables"},
                  {"csv", "CSV: one table (--table)"},
                  {"json", "JSON: one object a point"}});
    addTableOption(cmd, f.table,
                   "strategies, memory, fsdp, checks, buckets (each bucket's all-reduce in time), "
                   "bucket-model (the bucket-size model against the points) (ddp); allreduce, "
                   "allreduce-fit (t(n) = α + n/β per backend, world and dtype)");
    cmd.add_option("--timeout", f.timeout,
                   "Seconds a rank may stay silent before every rank is stopped")
        ->capture_default_str();
    addStoreOptions(cmd, f.db, f.label, f.no_store, "the run");
    cmd.add_flag("-q,--quiet", f.quiet, "No progress on stderr");
}

void addDistributedCommands(CLI::App& app, int& code) {
    auto lf = std::make_shared<LaunchFlags>();
    auto* cmd = app.add_subcommand("distributed",
                                   "Collectives and data-parallel training over local ranks");
    cmd->require_subcommand(1);
    auto* ar = cmd->add_subcommand(
        "allreduce",
        "Time all-reduce over N local ranks (one process each) per size and dtype: the slowest "
        "rank's "
        "mean, algbw = bytes/time, busbw = algbw·2(n−1)/n (nccl-tests' definitions). Started by "
        "torchrun (--no-python) or srun, each process is one rank and rank 0 reports");
    ar->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    addBenchFlags(*ar, lf->bench);
    addLaunchFlags(*ar, *lf);
    ar->callback([lf, ar, &code] {
        lf->world_given = ar->count("--world") > 0;
        lf->format = lf->choice.get();
        code = runDistributedAllreduce(*lf);
    });

    auto df = std::make_shared<LaunchFlags>();
    auto dd = std::make_shared<DdpFlags>();
    auto* ddp =
        cmd->add_subcommand("ddp",
                            "Data-parallel training of the LM over N local ranks (one "
                            "process each): each rank trains on its own "
                            "rows of the global batch, gradients averaged by a strategy "
                            "(naive, flat, overlap, bucketed), AdamW's "
                            "state optionally sharded (the course's scheme, or zero1's "
                            "reduce-scatter). One point per "
                            "precision × strategy × sharding (bucketed: × "
                            "bucket size); per step the slowest rank. Started by torchrun "
                            "(--no-python) or srun, each process is one rank: rank 0 gathers "
                            "every rank's rows, stores the run and prints the tables");
    ddp->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    ddp->add_option("--backend", df->bench.backend, "gloo (CPU) | nccl (one GPU per rank)")
        ->capture_default_str();
    ddp->add_option("--size", dd->size,
                    "Model size (tiny, small, medium, large, xl, 10B; 2025 table: xl-2025, 2.7B)")
        ->capture_default_str();
    ddp->add_option("--context-length", dd->context, "Context length")->capture_default_str();
    ddp->add_option("--batch-size,--batch", dd->batch,
                    "Batch per rank (the global batch is this × world size)")
        ->capture_default_str();
    ddp->add_option("--precision", dd->precision, "fp32, bf16, fp16 (a comma list: one point each)")
        ->capture_default_str();
    ddp->add_option("--attention", dd->attention, "Attention implementation")
        ->capture_default_str();
    ddp->add_option("--strategy", dd->strategy,
                    "naive, flat, overlap, bucketed, zero1 (ZeRO stage 1 as DeepSpeed does it: "
                    "gradients reduce-scattered, each rank steps its slice, slices all-gathered), "
                    "fsdp (fully sharded), fsdp2 (PyTorch's "
                    "fully_shard, in Python: the reference), torch-ddp (PyTorch's DDP; sharded: "
                    "ZeroRedundancyOptimizer), your classes from --code: yours-individual, "
                    "yours-bucketed, yours-ddp, yours-fsdp, or yours (those your adapters "
                    "define) (a comma list; with --code the default is yours,torch-ddp,bucketed)")
        ->capture_default_str();
    ddp->add_option("--code", dd->code,
                    "Your DDP classes and sharded optimizer: a course checkout (its "
                    "tests/adapters.py, 2025 or 2026 edition), a file of the course's adapter "
                    "functions, or module:Name (the class itself); each is checked against "
                    "single-process training before it is timed");
    ddp->add_option("--python", dd->python,
                    "The Python interpreter with torch for fsdp2, torch-ddp and yours-* "
                    "(default: $TRAINSCOPE_PYTHON, else set-up's)");
    ddp->add_option("--bucket-mb", dd->bucket_mb,
                    "Bucket sizes for bucketed, a comma list: a bare number is MiB (2^20 bytes, as "
                    "PyTorch's bucket_cap_mb), or with its unit: 25MiB, 25MB (10^6 bytes), 512KiB")
        ->capture_default_str();
    ddp->add_option("--param-dtype", dd->param_dtype,
                    "fsdp, fsdp2: the dtype weights are gathered and computed in, gradients "
                    "reduced in: fp32 | bf16 (needs --precision bf16); fp32 master weights")
        ->capture_default_str();
    ddp->add_option("--prefetch", dd->prefetch,
                    "fsdp: forward gathers a block's weights once the block this many before it "
                    "has run (0: when it is about to run)")
        ->capture_default_str();
    ddp->add_option("--checkpoint", dd->checkpoint,
                    "Activation checkpointing: none | K (every K blocks) | sqrt | nested")
        ->capture_default_str();
    ddp->add_option("--vocab-size", dd->vocab, "Vocabulary (the leaderboard's: 151936)")
        ->capture_default_str();
    addCudaProfilerRangeOption(*ddp, dd->cuda_profiler_range,
                               "each rank's measured steps (nsys on the launcher: "
                               "--trace-fork-before-exec=true)");
    ddp->add_option("--trace-steps", dd->trace_steps,
                    "Profile this many measured steps on every rank (Kineto: CPU ops, and on "
                    "CUDA the kernels, NCCL's among them) and merge the ranks' traces into one "
                    "Chrome/Perfetto trace, a process track per rank, stored beside the run "
                    "(every strategy: the Python ones through torch.profiler; 0: none)")
        ->capture_default_str();
    ddp->add_option("--trace-dir", dd->trace_dir,
                    "The folder of the merged traces (default: beside the store, "
                    "<store>.traces/; with --no-store the current folder)");
    ddp->add_flag("--fused-loss", dd->fused_loss,
                  "TrainScope's strategies: the LM head and cross-entropy fused, in chunks of the "
                  "sequence, never materialising the [batch, seq, vocab] logits");
    ddp->add_flag("--keep-attention", dd->keep_attention,
                  "With --fused-kernels, --attention flash and --checkpoint: a checkpoint's "
                  "recompute reuses attention's output instead of running it again");
    ddp->add_flag("--fused-kernels", dd->fused_kernels,
                  "TrainScope's strategies: RMSNorm, residual + norm, RoPE and SwiGLU as this "
                  "project's fused kernels (the compiled mode's model, eager)");
    ddp->add_flag("--compile", dd->compile,
                  "fsdp2: torch.compile each block and the LM head with the loss (the reference)");
    ddp->add_option("--exec", dd->exec,
                    "TrainScope's naive, flat, overlap, bucketed, zero1: eager | compiled (the "
                    "whole step, NCCL's collectives included, captured as CUDA graphs and "
                    "replayed; nccl only), a comma list: a point each")
        ->capture_default_str();
    ddp->add_option("--shard", dd->shard,
                    "The course's optimizer-state sharding (gradients all-reduced, each rank steps "
                    "the parameters it owns, the owners broadcast them): off | on | both")
        ->capture_default_str();
    ddp->add_option("--warmup", dd->warmup, "Warm-up steps")->capture_default_str();
    ddp->add_option("--steps", dd->steps, "Measured steps")->capture_default_str();
    ddp->add_option("--seed", dd->seed, "Seed of the model and the batch")->capture_default_str();
    ddp->add_option("--lr", dd->lr, "AdamW's learning rate")->capture_default_str();
    addLaunchFlags(*ddp, *df);
    ddp->callback([df, dd, ddp, &code] {
        dd->strategy_given = ddp->count("--strategy") > 0;
        df->world_given = ddp->count("--world") > 0;
        df->format = df->choice.get();
        code = runDistributedDdp(*df, *dd);
    });

    auto wf = std::make_shared<WorkerFlags>();
    auto* worker = app.add_subcommand(
        "worker",
        "One rank of a distributed experiment, placed by RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR "
        "and "
        "MASTER_PORT (as `distributed`, torchrun or srun set them); JSON lines on stdout");
    worker->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    worker->add_option("--experiment", wf->experiment, "allreduce | ddp")->required();
    worker->add_option("--spec", wf->spec,
                       "ddp: the DDP spec as JSON (as `distributed ddp` passes it)");
    addBenchFlags(*worker, wf->bench);
    worker->callback([wf, &code] { code = runWorker(*wf); });
}

const CommandRegistration registration(ts::kDistributedLab, addDistributedCommands);

}  // namespace
