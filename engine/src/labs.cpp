// Every lab the engine offers: one line each.
#include "attention/attention_report.h"
#include "benchmark/benchmark_report.h"
#include "core/lab.h"
#include "distributed/distributed_report.h"
#include "memory/memory_report.h"
#include "planner/planner_report.h"
#include "precision/precision_report.h"
#include "profiler/profiler_report.h"

namespace ts {

const std::vector<Lab>& labs() {
    static const std::vector<Lab> all = {
        benchmarkLab(), attentionLab(),   profilerLab(), precisionLab(),
        memoryLab(),    distributedLab(), plannerLab(),
    };
    return all;
}

}  // namespace ts
