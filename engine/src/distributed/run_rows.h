// How a distributed run's rows reach the store, written once for both runners (the local
// launcher's, runDistributed, and a rank's under torchrun or srun, runDistributedAsRank).
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/observer.h"
#include "core/store.h"
#include "distributed/distributed.h"
#include "distributed/distributed_json.h"

namespace ts {

// As in the benchmark's runSweep: a row that cannot be stored (a full disk, a run or a store
// deleted) stops the run. The rows go in order; after the first that fails nothing more is
// stored, the observer gets the Error that makes the CLI exit 3, and every point closed after it
// says that it was not stored. No store (--no-store, or a rank other than 0): nothing is written.
class RunRows {
public:
    RunRows(ResultStore* store, int64_t run_id, size_t points, DistributedObserver& observer)
        : store_(store), run_id_(run_id), points_(points), observer_(observer) {}

    void store(int point, const DistributedPoint& p, const nlohmann::json& payload, Status status) {
        if (!store_ || !error_.empty()) return;
        try {
            storeDistributedRow(*store_, run_id_, index_++, point, p, payload, status);
        } catch (const std::exception& e) {
            error_ = e.what();
            observer_.log(LogLevel::Error,
                          storeFailure("point", static_cast<size_t>(point), points_, e));
        }
    }

    // The point's end: failed if the store failed; a failure logged; its closing row stored; the
    // observer told; the result kept in `results`.
    void finish(int point, DistributedResult r, std::vector<DistributedResult>& results) {
        if (!error_.empty()) {
            r.status = Status::Failed;
            r.store_error = error_;
            r.error = "not stored, so the run stopped: " + error_;
        } else if (r.status == Status::Failed) {
            observer_.log(LogLevel::Error, fmt::format("distributed: point {} ({}) failed: {}",
                                                       point + 1, pointHeadline(r.point), r.error));
        }
        store(point, r.point, pointEndPayload(r), r.status);
        observer_.pointFinished(point, r);
        results.push_back(std::move(r));
    }

    // What the store said when a row failed; empty while every row was stored.
    const std::string& error() const { return error_; }

private:
    ResultStore* store_;
    int64_t run_id_;
    size_t points_;
    DistributedObserver& observer_;
    int index_ = 0;
    std::string error_;
};

}  // namespace ts
