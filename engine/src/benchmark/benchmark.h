// The end-to-end benchmark: forward, backward and optimizer step of the Transformer LM.
#pragma once

#include <vector>

#include "trainscope/engine/config.h"
#include "trainscope/engine/observer.h"
#include "trainscope/engine/result.h"

namespace ts {

class ResultStore;

// Runs one point. Never throws for a run-time failure: an out-of-memory becomes status OOM
// (its memory released), any other error status Failed with the message, a cancel status
// Cancelled with the steps measured so far. Invalid configurations are reported as Failed
// with the validation messages; callers should validate first for a better message.
BenchResult runBenchmark(const BenchConfig& config, Observer& observer, const CancelToken& cancel,
                         int point_index = 0, int point_count = 1);

// Runs the points in order. Each finished point goes to `store` (when given, under `run_id`)
// before the next starts, so a crash or kill loses no finished point. Stops early when
// cancelled; returns the results of the points that ran.
std::vector<BenchResult> runSweep(const std::vector<BenchConfig>& points, Observer& observer,
                                  const CancelToken& cancel, ResultStore* store = nullptr,
                                  int64_t run_id = 0);

}  // namespace ts
