// A stored benchmark run with its rows read into results, for the views, the replayer and
// Compare.
#pragma once

#include <QString>
#include <vector>

#include "benchmark/benchmark.h"
#include "ui/common/storeaccess.h"

namespace ts::ui {

struct StoredBenchRun {
    RunInfo info;
    std::vector<BenchResult> points;
    QString error;  // the store, or a row, could not be read
};

// Reads the rows of `run` (its error, if any, carries over).
StoredBenchRun benchRunFrom(const StoredRun& run);

}  // namespace ts::ui
