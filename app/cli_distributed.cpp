// `trainscope-cli distributed allreduce`: the all-reduce benchmark over N local ranks. The
// LocalLauncher starts N copies of this executable as `trainscope-cli worker`, each rank
// prints JSON lines (distributed/worker_lines.h), and this process merges rank 0's gathered
// timings into one row per (size, dtype).
// `trainscope-cli worker --experiment allreduce|ddp`: one rank's part, reading its place in the
// group from the environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), so that
// torchrun or srun can start it too.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "core/json.h"
#include "core/table.h"
#include "trainscope/distributed/allreduce_bench.h"
#include "trainscope/distributed/launcher.h"
#include "trainscope/distributed/worker_lines.h"

namespace {

using namespace ts::cli;
namespace dist = ts::dist;

// The benchmark's flags, as the launching command takes them and passes them on to each worker.
struct BenchFlags {
    std::string backend = "gloo", sizes, dtypes = "fp32,bf16", warmup = "5", iters = "20", link_gbps = "0";
};

struct LaunchFlags {
    BenchFlags bench;
    std::string world = "2", format = "table", timeout = "120";
    bool quiet = false;
};

struct WorkerFlags {
    BenchFlags bench;
    std::string experiment;
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
            if (!bytes) throw BadInput(fmt::format("--sizes: '{}' is not a size (1MB, 16MiB, 1GB, or bytes)", item));
            if (*bytes <= 0) throw BadInput(fmt::format("--sizes: '{}' is not more than 0 bytes", item));
            if (*bytes > dist::kMaxAllreduceBytes)
                throw BadInput(fmt::format("--sizes: {} is more than {}", item, dist::formatByteSize(dist::kMaxAllreduceBytes)));
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
    spec.iters = static_cast<int>(parseIntIn("--iters", f.iters, 1, 100000));
    spec.link_gbps = parseFinite("--link-gbps", f.link_gbps);
    if (spec.link_gbps < 0) throw BadInput(fmt::format("--link-gbps: {} is below 0 (0: unknown)", f.link_gbps));
    if (const std::string problem = dist::allreduceSpecProblem(spec); !problem.empty()) throw BadInput(problem);
    return spec;
}

void addBenchFlags(CLI::App& cmd, BenchFlags& f) {
    cmd.add_option("--backend", f.backend, "gloo (CPU) | nccl (one GPU per rank)")->capture_default_str();
    cmd.add_option("--sizes", f.sizes,
                   "Bytes per rank's tensor, a comma list: 1MB (10^6), 16MiB (2^20), 1GB, 1048576 "
                   "(default: 1 MiB to 1 GiB on NCCL, to 64 MiB on Gloo)");
    cmd.add_option("--dtypes", f.dtypes, "fp32, bf16 (a comma list)")->capture_default_str();
    cmd.add_option("--warmup", f.warmup, "Untimed all-reduces per size and dtype")->capture_default_str();
    cmd.add_option("--iters", f.iters, "Timed all-reduces per size and dtype")->capture_default_str();
    cmd.add_option("--link-gbps", f.link_gbps, "A link's bandwidth in GB/s for the ideal time (0: unknown)")
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
        if (const char* k = std::getenv("TRAINSCOPE_TEST_KILL_RANK"); k && *k) kill_rank_ = std::atoi(k);
    }
    void ready(int rank, int world_size, const std::string& device) override {
        emit(dist::readyLine(rank, world_size, backend_, device));
    }
    void measured(const dist::AllreduceTiming& t, int done, int total) override {
        emit(dist::allreduceResultLine(t));
        emit(dist::progressLine(t.rank, done, total,
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

int runWorker(const WorkerFlags& f) {
    int rank = -1;
    if (const char* r = std::getenv("RANK"); r && *r) rank = std::atoi(r);
    try {
        // One entry an experiment; each reads its own flags. nullptr: named, not there yet.
        using Experiment = int (*)(const BenchFlags&, const dist::GroupSpec&);
        static const std::map<std::string, Experiment> experiments = {{"allreduce", allreduceWorker},
                                                                      {"ddp", nullptr}};
        const auto it = experiments.find(f.experiment);
        if (it == experiments.end())
            throw BadInput(fmt::format("--experiment: '{}' is not one of allreduce, ddp", f.experiment));
        if (!it->second)
            throw BadInput(fmt::format("--experiment {}: not yet (the DDP strategies come with the next part of issue 12)",
                                       f.experiment));
        const dist::CommBackend backend = backendOf(f.bench.backend);
        dist::GroupSpec group;
        try {
            group = dist::groupSpecFromEnvironment(backend);
        } catch (const std::invalid_argument& e) {
            throw BadInput(e.what());
        }
        rank = group.rank;
        return it->second(f.bench, group);
    } catch (const BadInput& e) {
        emit(dist::errorLine(rank, e.what()));
        std::fprintf(stderr, "trainscope-cli worker: %s\n", e.what());
        return kBadInput;
    } catch (const std::exception& e) {
        const std::string message = withoutRank(e.what(), rank);
        emit(dist::errorLine(rank, message));
        std::fprintf(stderr, "trainscope-cli worker: rank %d: %s\n", rank, message.c_str());
        return kRunFailed;
    }
}

// ---- the launching command ----

std::string selfExecutable() {
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe): " + ec.message());
    return path.string();
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
    return out;
}

std::string ms(double v) { return v >= 100 ? fmt::format("{:.1f}", v) : v >= 1 ? fmt::format("{:.2f}", v) : fmt::format("{:.3f}", v); }
std::string gbps(double v) { return fmt::format("{:.2f}", v); }

nlohmann::json rowJson(const dist::AllreduceRow& r) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& x : r.ranks)
        ranks.push_back({{"rank", x.rank}, {"mean_ms", x.mean_ms}, {"min_ms", x.min_ms}, {"max_ms", x.max_ms}});
    return {{"bytes", r.bytes},
            {"size", dist::formatByteSize(r.bytes)},
            {"elements", r.elements},
            {"dtype", dist::dtypeName(r.dtype)},
            {"backend", dist::backendName(r.backend)},
            {"world_size", r.world_size},
            {"iters", r.iters},
            {"time_ms", r.time_ms},
            {"rank_mean_min_ms", r.rank_mean_min_ms},
            {"fastest_ms", r.fastest_ms},
            {"slowest_ms", r.slowest_ms},
            {"algbw_gbps", r.algbw_gbps},
            {"busbw_gbps", r.busbw_gbps},
            {"ideal_ms", r.ideal_ms > 0 ? nlohmann::json(r.ideal_ms) : nlohmann::json(nullptr)},
            {"ranks", ranks}};
}

std::string allreduceReport(const std::vector<dist::AllreduceRow>& rows, const std::string& format,
                            const std::string& heading) {
    if (format == "json") {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : rows) arr.push_back(rowJson(r));
        return ts::dumpJson({{"experiment", "allreduce"}, {"rows", arr}}, 2) + "\n";
    }
    const bool ideal = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.ideal_ms > 0; });
    ts::TextTable t;
    if (format == "csv") {
        t.headers = {"bytes", "dtype", "backend", "world_size", "iters", "time_ms", "rank_mean_min_ms", "fastest_ms",
                     "slowest_ms", "algbw_gbps", "busbw_gbps", "ideal_ms"};
        for (const auto& r : rows)
            t.rows.push_back({fmt::format("{}", r.bytes), dist::dtypeName(r.dtype), dist::backendName(r.backend),
                              fmt::format("{}", r.world_size), fmt::format("{}", r.iters), fmt::format("{}", r.time_ms),
                              fmt::format("{}", r.rank_mean_min_ms), fmt::format("{}", r.fastest_ms),
                              fmt::format("{}", r.slowest_ms), fmt::format("{}", r.algbw_gbps),
                              fmt::format("{}", r.busbw_gbps), r.ideal_ms > 0 ? fmt::format("{}", r.ideal_ms) : ""});
        return ts::renderTable(t, ts::TableFormat::Csv);
    }
    t.headers = {"size", "dtype", "time ms", "ranks' means ms", "one iteration ms", "algbw GB/s", "busbw GB/s"};
    t.right = {true, false, true, true, true, true, true};
    if (ideal) {
        t.headers.push_back("ideal ms");
        t.right.push_back(true);
    }
    for (const auto& r : rows) {
        std::vector<std::string> cells = {dist::formatByteSize(r.bytes), dist::dtypeName(r.dtype), ms(r.time_ms),
                                          ms(r.rank_mean_min_ms) + "–" + ms(r.time_ms),
                                          ms(r.fastest_ms) + "–" + ms(r.slowest_ms), gbps(r.algbw_gbps),
                                          gbps(r.busbw_gbps)};
        if (ideal) cells.push_back(r.ideal_ms > 0 ? ms(r.ideal_ms) : "");
        t.rows.push_back(std::move(cells));
    }
    const ts::TableFormat tf = format == "markdown" ? ts::TableFormat::Markdown : ts::TableFormat::Text;
    return ts::tableHeading(heading, tf) + "\n" + ts::renderTable(t, tf);
}

int runDistributedAllreduce(const LaunchFlags& f) {
    // Every check before anything starts: a bad flag is exit 2 with nothing launched.
    const dist::CommBackend backend = backendOf(f.bench.backend);
    const int world = static_cast<int>(parseIntIn("--world", f.world, 1, 256));
    const dist::AllreduceSpec spec = allreduceSpecOf(f.bench, backend);
    const double timeout_s = parseFinite("--timeout", f.timeout);
    if (timeout_s <= 0) throw BadInput(fmt::format("--timeout: {} is not more than 0 seconds", f.timeout));

    dist::LaunchSpec launch;
    launch.executable = selfExecutable();
    launch.world_size = world;
    launch.backend = backend;
    launch.hang_timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(timeout_s * 1000)));
    std::vector<std::string> sizes, dtypes;
    for (int64_t s : spec.sizes) sizes.push_back(std::to_string(s));
    for (auto d : spec.dtypes) dtypes.push_back(dist::dtypeName(d));
    launch.arguments = {"worker", "--experiment", "allreduce", "--backend", dist::backendName(backend),
                        "--sizes", joined(sizes), "--dtypes", joined(dtypes), "--warmup", std::to_string(spec.warmup),
                        "--iters", std::to_string(spec.iters), "--link-gbps", fmt::format("{}", spec.link_gbps)};
    if (const std::string problem = dist::launchProblem(launch); !problem.empty()) throw BadInput(problem);

    const int total = static_cast<int>(spec.sizes.size() * spec.dtypes.size());
    if (!f.quiet)
        std::fprintf(stderr, "all-reduce on %d %s rank%s: %d sizes × %d dtypes, %d warm-up + %d timed each\n", world,
                     dist::backendName(backend), world == 1 ? "" : "s", static_cast<int>(spec.sizes.size()),
                     static_cast<int>(spec.dtypes.size()), spec.warmup, spec.iters);
    std::vector<dist::AllreduceRow> rows;
    std::vector<int> results_per_rank(world, 0);
    int ready = 0;
    catchInterrupts();
    dist::LocalLauncher launcher(launch);
    const dist::LaunchOutcome outcome = launcher.run(
        [&](int rank, const std::string& text) {
            const auto line = dist::parseWorkerLine(text);
            if (!line) return;  // not a worker line (a library's print): the stderr tail has the rest
            if (line->event == "ready") {
                if (++ready == world && !f.quiet) std::fprintf(stderr, "%d rank%s ready\n", world, world == 1 ? "" : "s");
            } else if (line->event == "result" && line->allreduce) {
                ++results_per_rank[rank];
                if (rank != 0) return;
                rows.push_back(dist::allreduceRow(*line->allreduce, spec.link_gbps));
                const auto& r = rows.back();
                if (!f.quiet)
                    std::fprintf(stderr, "[%d/%d] %s %s: %s ms, busbw %s GB/s\n", static_cast<int>(rows.size()), total,
                                 dist::formatByteSize(r.bytes).c_str(), dist::dtypeName(r.dtype), ms(r.time_ms).c_str(),
                                 gbps(r.busbw_gbps).c_str());
            }
        },
        [] { return interruptToken().cancelled(); });

    const std::string heading = fmt::format("All-reduce, {} × {} ({} warm-up, {} timed; time = the slowest rank's mean)",
                                            world, dist::backendName(backend), spec.warmup, spec.iters);
    if (!rows.empty() || outcome.ok()) std::cout << allreduceReport(rows, f.format, heading) << std::flush;
    switch (outcome.state) {
        case dist::LaunchOutcome::State::Finished:
            for (int r = 0; r < world; ++r)
                if (results_per_rank[r] != total) {
                    std::fprintf(stderr, "trainscope-cli: rank %d reported %d of %d results\n", r, results_per_rank[r], total);
                    return kRunFailed;
                }
            return kOk;
        case dist::LaunchOutcome::State::Cancelled:
            std::fprintf(stderr, "trainscope-cli: stopped; every rank was ended\n");
            return kInterrupted;
        case dist::LaunchOutcome::State::Failed:
        case dist::LaunchOutcome::State::TimedOut: break;
    }
    std::fprintf(stderr, "trainscope-cli: %s\n", outcome.message.c_str());
    // The failing rank's last stderr lines, when they say more than its message.
    if (outcome.failed_rank >= 0) {
        const auto& end = outcome.ranks[outcome.failed_rank];
        const size_t n = end.stderr_tail.size(), from = n > 8 ? n - 8 : 0;
        if (n > 1 || (n == 1 && end.stderr_tail.back() != end.message))
            for (size_t i = from; i < n; ++i)
                std::fprintf(stderr, "  rank %d stderr: %s\n", outcome.failed_rank, end.stderr_tail[i].c_str());
    }
    return kRunFailed;
}

void addDistributedCommands(CLI::App& app, int& code) {
    auto lf = std::make_shared<LaunchFlags>();
    auto* cmd = app.add_subcommand("distributed", "Collectives and data-parallel training over local ranks");
    cmd->require_subcommand(1);
    auto* ar = cmd->add_subcommand(
        "allreduce", "Time all-reduce over N local ranks (one process each) per size and dtype: the slowest rank's "
                     "mean, algbw = bytes/time, busbw = algbw·2(n−1)/n (nccl-tests' definitions)");
    ar->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    addBenchFlags(*ar, lf->bench);
    ar->add_option("--world", lf->world, "Ranks (NCCL: at most the GPUs present)")->capture_default_str();
    ar->add_option("--format", lf->format, "table | markdown | csv | json")
        ->check(CLI::IsMember({"table", "markdown", "csv", "json"}))
        ->capture_default_str();
    ar->add_option("--timeout", lf->timeout, "Seconds a rank may stay silent before every rank is stopped")
        ->capture_default_str();
    ar->add_flag("-q,--quiet", lf->quiet, "No progress on stderr");
    ar->callback([lf, &code] { code = runDistributedAllreduce(*lf); });

    auto wf = std::make_shared<WorkerFlags>();
    auto* worker = app.add_subcommand(
        "worker", "One rank of a distributed experiment, placed by RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and "
                  "MASTER_PORT (as `distributed`, torchrun or srun set them); JSON lines on stdout");
    worker->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    worker->add_option("--experiment", wf->experiment, "allreduce | ddp")->required();
    addBenchFlags(*worker, wf->bench);
    worker->callback([wf, &code] { code = runWorker(*wf); });
}

const CommandRegistration registration(50, addDistributedCommands);

}  // namespace
