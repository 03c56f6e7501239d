// The distributed lab's results for people: the all-reduce table, the DDP strategies compared,
// memory per rank. Shared by the CLI (`distributed`, `runs show/export`) and the window's
// exports. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/lab.h"
#include "distributed/ddp_buckets.h"
#include "distributed/distributed.h"

namespace ts {

// size, dtype, time (the slowest rank's mean), the ranks' means, one iteration's range, algbw,
// busbw (and the ideal time where a link bandwidth was given).
std::string formatAllreduceRows(const std::vector<dist::AllreduceRow>& rows, TableFormat format,
                                const std::string& heading);
// Per backend, world size and dtype of the rows, the all-reduce fitted as t(n) = alpha + n / beta
// (see fitLatencyBandwidth): the latency, the bandwidth, the fit's residual. Empty without rows.
std::string formatAllreduceFit(const std::vector<dist::AllreduceRow>& rows, TableFormat format);
// One row per DDP point: strategy, bucket, sharding, precision, step ms ± std, forward,
// backward, communication waited for, hidden share, optimizer, peak, last loss, status.
std::string formatDdpComparison(const std::vector<DistributedResult>& results, TableFormat format);
// See Note [a step that varies]: the DDP points whose measured steps vary by 5% or more, each with
// its spread, and what makes such a step vary and what steadies it. Empty when none does.
std::string formatStepSpread(const std::vector<DistributedResult>& results, TableFormat format);
// Per DDP point and rank: parameters, gradients, optimizer state, buffers, and the allocator
// after model / forward / backward / optimizer.
// The course's check of the user's classes (see Note [your DDP classes]); empty when none ran.
std::string formatDdpChecks(const std::vector<DistributedResult>& results, TableFormat format);
std::string formatDdpMemory(const std::vector<DistributedResult>& results, TableFormat format);
// Per fsdp point: the all-gathers' and reduce-scatters' time, how long forward and backward
// waited for weights, the bytes moved, the units held at once. Empty without an fsdp point.
std::string formatFsdpCommunication(const std::vector<DistributedResult>& results,
                                    TableFormat format);
// Per bucketed point, its buckets (see Note [per-bucket timing]): the means over ranks and measured
// steps of when each was ready, launched and done against backward; CSV: every rank's every step.
// Empty without per-bucket rows.
std::string formatBucketTimes(const std::vector<DistributedResult>& results, TableFormat format);
// The bucket-size model of each configuration of bucketed points (see Note [bucket-size model]):
// the fit, then per bucket size run the predicted and measured wait after backward, and the best
// size. Empty without bucketed points.
std::string formatBucketModel(const std::vector<DistributedResult>& results, TableFormat format);
nlohmann::json bucketModelJson(const BucketModel& m);
// Everything of a run: failed points named, the all-reduce rows, the DDP comparison and memory.
std::string formatDistributed(const std::vector<DistributedResult>& results, TableFormat format);
// The run's CSV tables (see Note [tables other programs read]): with DDP points "strategies"
// (one row a point), "memory" (a point's ranks), "fsdp" and "checks" where there are such
// points, "buckets" and "bucket-model" where bucketed points kept their buckets' times;
// "allreduce" (one row a size, dtype and world) and "allreduce-fit" where rows were measured.
std::vector<CsvTable> distributedCsvTables(const std::vector<DistributedResult>& results);
// A DDP point's summary as one JSON object (the CLI's --format json, the evidence scripts).
nlohmann::json ddpSummaryJson(const DistributedResult& r);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab distributedLab();

}  // namespace ts
