// Every lab the engine offers: one line each.
#include "attention/attention_report.h"
#include "benchmark/benchmark_report.h"
#include "core/lab.h"

namespace ts {

const std::vector<Lab>& labs() {
    static const std::vector<Lab> all = {
        benchmarkLab(),
        attentionLab(),
    };
    return all;
}

}  // namespace ts
