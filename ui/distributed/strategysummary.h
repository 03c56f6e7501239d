// The DDP points of a distributed run as the Strategies chart draws them: each point's step
// split into compute, exposed communication and optimizer with their spread over the measured
// steps, its memory per rank, and the one-GPU step it is compared with when the run has one.
// See Note [a strategy's step against one GPU] in strategysummary.cpp.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

#include "distributed/distributed.h"

namespace ts::ui {

// A DDP point in a few words for tables and bar groups: "bucketed 25 MB, sharded, bf16".
QString ddpPointName(const DistributedPoint& p);

struct StrategyBar {
    int point = 0;  // the point's index in the run (0-based)
    QString label;  // "3: bucketed 25 MB, bf16"
    QString strategy;
    int world_size = 0;
    bool measured = false;  // finished with measured steps: the rest holds values
    QString why;            // not measured: "failed on rank 1", "OOM", "no measured steps"
    int steps = 0;
    // Per measured step the slowest rank's row (a step ends when every rank's does, as
    // summarizeDdp), then the mean and the sample standard deviation over the steps.
    // compute: forward and backward (fully sharded: with its waits for weights); comm: the wait
    // after backward for the gradients (the communication backward did not hide); other: the
    // step's time less those three (never negative).
    double compute_ms = 0, compute_std = 0;
    double comm_ms = 0, comm_std = 0;
    double optimizer_ms = 0, optimizer_std = 0;
    double other_ms = 0;
    double step_ms = 0, step_std = 0;
    // The allocator's peak of the rank that peaked highest; on the CPU (no allocator) the largest
    // rank's tensors (parameters, gradients, optimizer state, buffers) and memory_is_peak false.
    int64_t memory_bytes = 0;
    bool memory_is_peak = false;
    // The step of the run's one-GPU point (world size 1) of the same model, precision and batch
    // per rank; negative when the run has none. overhead(): step / baseline − 1.
    double baseline_ms = -1;
    int baseline_point = -1;
    double overhead() const { return baseline_ms > 0 ? step_ms / baseline_ms - 1 : 0; }
};

// The finished DDP points of `points` (finished[i]: point i has ended), in run order.
std::vector<StrategyBar> strategyBars(const std::vector<DistributedResult>& points,
                                      const std::vector<bool>& finished);

}  // namespace ts::ui
