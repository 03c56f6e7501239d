// The distributed lab's points run by a rank that torchrun or srun started (see Note [ranks
// started by torchrun or srun] in distributed.h): no launcher reads the ranks' lines, so rank 0
// gathers the other ranks' rows through the group's store and reports the run as
// runDistributed would have.
#include <c10/core/DeviceGuard.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/store.h"
#include "distributed/distributed.h"
#include "distributed/distributed_json.h"
#include "distributed/run_rows.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "trainscope/distributed/allreduce_bench.h"
#include "trainscope/distributed/process_group.h"
#include "trainscope/distributed/store_gather.h"

namespace ts {

namespace {

using Culprit = std::optional<std::pair<int, std::string>>;

std::string deviceOf(const dist::GroupSpec& g) {
    return g.backend == dist::CommBackend::Nccl ? fmt::format("cuda:{}", g.local_rank) : "cpu";
}

// "rank 1: x" → "x": the point's error names the rank once.
std::string withoutRankPrefix(std::string message, int rank) {
    const std::string prefix = fmt::format("rank {}: ", rank);
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    return message;
}

// Rank 0's watch over the others while a point runs: a rank that posted its error may leave rank
// 0 in a collective that never returns (NCCL does not notice a peer gone until its own timeout),
// so the group is aborted and rank 0's collective fails at once, with the culprit known.
class ErrorWatch {
public:
    ErrorWatch(dist::Group& group, int point)
        : thread_([this, &group, point] { watch(group, point); }) {}
    ~ErrorWatch() { stop(); }
    void stop() {
        {
            std::lock_guard lock(m_);
            done_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }
    Culprit seen() {
        std::lock_guard lock(m_);
        return seen_;
    }

private:
    void watch(dist::Group& group, int point) {
        std::unique_lock lock(m_);
        while (!done_) {
            lock.unlock();
            Culprit e;
            try {
                e = dist::postedRankError(*group.store, point, group.world_size);
            } catch (const std::exception&) {  // the store's server gone: the collective says why
            }
            lock.lock();
            if (e) {
                seen_ = e;
                lock.unlock();
                try {
                    group.backend->abort();
                } catch (const std::exception&) {
                }
                return;
            }
            cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return done_; });
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    Culprit seen_;
    std::thread thread_;  // last: starts once the members above exist
};

// What rank 0 hears of the all-reduce benchmark on its own rank: its rows hold every rank's times.
class AllreduceRows : public dist::AllreduceObserver {
public:
    AllreduceRows(DistributedObserver& observer, int index, DistributedResult& result,
                  std::function<void(const dist::AllreduceRow&)> store)
        : observer_(observer), index_(index), result_(result), store_(std::move(store)) {}
    void ready(int rank, int, const std::string& device) override {
        if (rank != 0) return;
        result_.rank_devices[0] = device;
        observer_.rankReady(index_, 0, device);
    }
    void measured(const dist::AllreduceTiming& t, int, int) override {
        if (t.rank != 0) return;
        result_.allreduce.push_back(dist::allreduceRow(t, result_.point.allreduce.link_gbps));
        observer_.allreduceMeasured(index_, result_.allreduce.back());
        store_(result_.allreduce.back());
    }

private:
    DistributedObserver& observer_;
    int index_;
    DistributedResult& result_;
    std::function<void(const dist::AllreduceRow&)> store_;
};

}  // namespace

std::vector<DistributedResult> runDistributedAsRank(
    const DistributedSpec& spec, const dist::GroupSpec& group_spec, const std::string& node,
    DistributedObserver& observer, const CancelToken& cancel, ResultStore* store, int64_t run_id) {
    if (spec.points.empty()) return {};
    const bool allreduce = spec.points.front().experiment == DistExperiment::Allreduce;
    for (const auto& p : spec.points)
        if ((p.experiment == DistExperiment::Allreduce) != allreduce ||
            (allreduce && spec.points.size() > 1))
            throw std::invalid_argument(
                "under torchrun or srun a run is one all-reduce point or DDP points only");
    dist::GroupSpec gs = group_spec;
    gs.timeout =
        std::chrono::milliseconds(static_cast<int64_t>(std::ceil(spec.hang_timeout_s * 1000)));
    const bool lead = gs.rank == 0;
    const int world = gs.world_size;
    const std::string device = deviceOf(gs);
    const int count = static_cast<int>(spec.points.size());

    std::vector<DistributedResult> results;
    // See RunRows (run_rows.h): rank 0 alone stores.
    RunRows rows(lead ? store : nullptr, run_id, spec.points.size(), observer);
    auto storeRow = [&](int point, const DistributedPoint& p, const nlohmann::json& payload,
                        Status status) { rows.store(point, p, payload, status); };
    auto pointOf = [&](int i) {
        DistributedPoint p = spec.points[i];
        p.world_size = world;
        p.backend = gs.backend;
        p.ddp.device = device;
        return p;
    };
    auto newResult = [&](const DistributedPoint& p) {
        DistributedResult r;
        r.point = p;
        r.environment = currentEnvironment(p.backend == dist::CommBackend::Nccl ? "cuda" : "cpu");
        r.rank_devices.assign(static_cast<size_t>(world), "");
        r.rank_nodes.assign(static_cast<size_t>(world), "");
        r.rank_devices[static_cast<size_t>(gs.rank)] = device;
        r.rank_nodes[static_cast<size_t>(gs.rank)] = node;
        return r;
    };
    auto finish = [&](int i, DistributedResult& r) { rows.finish(i, std::move(r), results); };
    // The points after one that failed (the group is gone with it) or was stopped.
    auto skipRest = [&](int from, Status status, const std::string& why) {
        for (int k = from; k < count; ++k) {
            DistributedResult r = newResult(pointOf(k));
            r.status = status;
            r.error = why;
            observer.pointStarted(k, count, r.point);
            finish(k, r);
        }
    };

    if (allreduce) {
        // The benchmark makes its group and gathers every rank's times on rank 0 itself.
        DistributedResult r = newResult(pointOf(0));
        if (lead) observer.pointStarted(0, 1, r.point);
        AllreduceRows rows(observer, 0, r, [&](const dist::AllreduceRow& row) {
            storeRow(0, r.point, allreducePayload(row), Status::Ok);
        });
        try {
            dist::runAllreduceRank(gs, r.point.allreduce, rows);
        } catch (const std::exception& e) {
            if (!lead) throw;
            r.status = Status::Failed;
            r.failed_rank = 0;
            r.error = fmt::format("rank 0 failed: {}", withoutRankPrefix(e.what(), 0));
        }
        if (lead) finish(0, r);
        return results;
    }

    const c10::Device torch_device = parseDevice(device);
    c10::OptionalDeviceGuard device_guard;  // NCCL's communicators on this rank's GPU
    if (torch_device.is_cuda()) device_guard.reset_device(torch_device);
    dist::Group group;
    try {
        group = dist::makeGroup(gs);
    } catch (const std::exception& e) {
        if (!lead) throw;
        DistributedResult r = newResult(pointOf(0));
        observer.pointStarted(0, count, r.point);
        r.status = Status::Failed;
        r.failed_rank = 0;
        r.error = fmt::format("rank 0 failed: {}", withoutRankPrefix(e.what(), 0));
        finish(0, r);
        skipRest(1, Status::Failed, "not run: the group could not be made");
        return results;
    }

    // Test-only (tests/distributed/test_torchrun.py): TRAINSCOPE_TEST_FAIL_RANK=R makes rank R
    // fail with a message after its first step, TRAINSCOPE_TEST_KILL_RANK=R SIGKILL itself there.
    auto testRank = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v ? std::atoi(v) : -1;
    };
    const int fail_rank = testRank("TRAINSCOPE_TEST_FAIL_RANK");
    const int kill_rank = testRank("TRAINSCOPE_TEST_KILL_RANK");
    for (int i = 0; i < count; ++i) {
        DistributedResult r = newResult(pointOf(i));
        const DistributedPoint& p = r.point;
        if (lead) {
            observer.pointStarted(i, count, p);
            observer.rankReady(i, 0, device);
        }
        std::vector<DdpStepRow> mine;
        std::string error;
        Culprit culprit;
        {
            std::optional<ErrorWatch> watch;
            if (lead && world > 1) watch.emplace(group, i);
            try {
                runDdpRank(
                    p.ddp, group,
                    [&](const DdpStepRow& step) {
                        DdpStepRow row = step;
                        row.node = node;
                        mine.push_back(row);
                        if (row.rank == kill_rank) ::raise(SIGKILL);
                        if (row.rank == fail_rank)
                            throw std::runtime_error(
                                "failing on purpose (TRAINSCOPE_TEST_FAIL_RANK)");
                        if (!lead) return;
                        r.steps.push_back(row);
                        observer.ddpStep(i, row);
                        storeRow(i, p, ddpStepPayload(row), Status::Ok);
                    },
                    cancel);
            } catch (const std::exception& e) {
                error = e.what();
                if (error.empty()) error = "failed";
            }
            if (watch) {
                watch->stop();
                culprit = watch->seen();
            }
        }
        // Every rank stops at the same step (they agree on it after each one).
        const bool stopped = error.empty() && static_cast<int>(mine.size()) <
                                                  p.ddp.warmup_steps + p.ddp.measured_steps;
        if (!lead) {
            if (!error.empty()) {
                try {
                    dist::postRankError(*group.store, i, gs.rank,
                                        withoutRankPrefix(error, gs.rank));
                } catch (const std::exception&) {  // rank 0 then names itself, or times out
                }
                throw std::runtime_error(error);
            }
            nlohmann::json rows = nlohmann::json::array();
            for (const auto& row : mine) rows.push_back(toJson(row));
            dist::postRankRows(
                *group.store, i, gs.rank,
                nlohmann::json{{"device", device}, {"node", node}, {"rows", rows}}.dump(
                    -1, ' ', false, nlohmann::json::error_handler_t::replace));
            if (stopped) break;
            continue;
        }
        if (!error.empty()) {
            // Another rank's error first: rank 0's own is most often the collective it lost.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
            while (!culprit && world > 1 && std::chrono::steady_clock::now() < deadline) {
                try {
                    culprit = dist::postedRankError(*group.store, i, world);
                } catch (const std::exception&) {
                    break;
                }
                if (!culprit) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            // None: a rank died without a word (killed), or rank 0 failed by itself.
            if (!culprit)
                culprit = std::pair{
                    0, fmt::format("{}{}", withoutRankPrefix(error, 0),
                                   world > 1 ? " (no other rank said why; one that died without a "
                                               "word is in its launcher's log)"
                                             : "")};
            r.status = Status::Failed;
            r.failed_rank = culprit->first;
            r.error = fmt::format("rank {} failed: {}", culprit->first, culprit->second);
        } else {
            const dist::GatheredRows gathered =
                dist::gatherRankRows(*group.store, i, world, gs.timeout);
            if (gathered.failed_rank >= 0) {
                r.status = Status::Failed;
                r.failed_rank = gathered.failed_rank;
                r.error = fmt::format("rank {} failed: {}", gathered.failed_rank, gathered.error);
            }
            for (int k = 1; k < world && r.status == Status::Ok; ++k) {
                try {
                    const nlohmann::json j = nlohmann::json::parse(gathered.payloads[k]);
                    r.rank_devices[k] = j.value("device", "");
                    r.rank_nodes[k] = j.value("node", "");
                    observer.rankReady(i, k, r.rank_devices[k]);
                    for (const auto& row : j.at("rows")) {
                        r.steps.push_back(ddpStepRowFromJson(row));
                        observer.ddpStep(i, r.steps.back());
                        storeRow(i, p, ddpStepPayload(r.steps.back()), Status::Ok);
                    }
                } catch (const std::exception& e) {
                    r.status = Status::Failed;
                    r.failed_rank = k;
                    r.error = fmt::format("rank {} sent rows that do not read: {}", k, e.what());
                }
            }
            if (r.status == Status::Ok && (stopped || cancel.cancelled())) {
                r.status = Status::Cancelled;
                r.error = "stopped; every rank stopped at the same step";
            }
        }
        const Status status = r.status;
        finish(i, r);
        if (!rows.error().empty()) break;  // as runDistributed: nothing after it runs
        if (status == Status::Cancelled) {
            skipRest(i + 1, Status::Cancelled, "stopped before it started");
            break;
        }
        if (status != Status::Ok) {
            skipRest(i + 1, Status::Failed,
                     fmt::format("not run: point {} failed, and the process group with it", i + 1));
            break;
        }
    }
    // Every point ran: the group ends as PyTorch's destroy_process_group() ends it (NCCL's
    // communicators released now, not in a destructor that warns that nobody did).
    if (group.backend && std::all_of(results.begin(), results.end(),
                                     [](const auto& r) { return r.status == Status::Ok; })) {
        try {
            group.backend->shutdown();
        } catch (const std::exception&) {
        }
    }
    return results;
}

}  // namespace ts
