#include "ui/benchmark/storedbenchrun.h"

#include "benchmark/benchmark_report.h"
#include "ui/common/format.h"

namespace ts::ui {

StoredBenchRun benchRunFrom(const StoredRun& run) {
    StoredBenchRun out{run.info, {}, run.error};
    if (!out.error.isEmpty()) return out;
    try {
        out.points = benchResultsFromRows(run.info, run.rows);
    } catch (const std::exception& e) {
        out.error = qstr(std::string(e.what()));
    }
    return out;
}

}  // namespace ts::ui
