// The distributed lab's JSON: its specs, the rows the workers send and the store keeps, and the
// stored run read back as results. Torch-free.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/store.h"
#include "distributed/distributed.h"

namespace ts {

nlohmann::json toJson(const DdpSpec& s);
DdpSpec ddpSpecFromJson(const nlohmann::json& j);  // throws std::invalid_argument naming the field
nlohmann::json toJson(const DdpStepRow& r);
DdpStepRow ddpStepRowFromJson(const nlohmann::json& j);
nlohmann::json toJson(const dist::AllreduceSpec& s);
dist::AllreduceSpec allreduceSpecFromJson(const nlohmann::json& j);
nlohmann::json toJson(const dist::AllreduceRow& r);
dist::AllreduceRow allreduceRowFromJson(const nlohmann::json& j);
nlohmann::json toJson(const DistributedPoint& p);
DistributedPoint distributedPointFromJson(const nlohmann::json& j);
// The run's spec as the store keeps it:
// {"command":"distributed","points":[...],"hang_timeout_s":...}.
std::string distributedSpecJson(const DistributedSpec& s);
DistributedSpec distributedSpecFromJson(const nlohmann::json& j);

// The worker's line for one DDP step: {"event":"result","experiment":"ddp","rank":r,"row":{...}}.
std::string ddpStepLine(const DdpStepRow& r);

// Stored rows (see Note [distributed rows]): each row's result_json is {"point": i, "type": ...}
// with type "ddp_step" (a DdpStepRow), "allreduce" (an AllreduceRow) or "point" (the point's
// end: status, error, failed rank, devices, environment); config_json is the point.
void storeDistributedRow(ResultStore& store, int64_t run_id, int index, int point,
                         const DistributedPoint& p, const nlohmann::json& payload,
                         Status status = Status::Ok);
nlohmann::json ddpStepPayload(const DdpStepRow& r);
nlohmann::json allreducePayload(const dist::AllreduceRow& r);
nlohmann::json pointEndPayload(const DistributedResult& r);
// A stored run back as one result per point (rows in the store's order); throws
// std::runtime_error naming a row that cannot be read.
std::vector<DistributedResult> distributedResultsFromRows(const RunInfo& run,
                                                          const std::vector<StoredRow>& rows);
// Why a stored row cannot be read, or "".
std::string distributedRowProblem(const StoredRow& row);

}  // namespace ts
