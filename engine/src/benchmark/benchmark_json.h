// JSON form of the benchmark's value types (the point's own: core/point_json.h), used by the CLI,
// the store's rows and the window's exports. Parsing throws std::invalid_argument with a message
// naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "benchmark/benchmark.h"
#include "core/point_json.h"
#include "core/store.h"

namespace ts {

nlohmann::json toJson(const BenchResult& r);

BenchResult resultFromJson(const nlohmann::json& j);

// A point as a row of the store (its own transaction), and a run's points read back
// (throws std::runtime_error naming a row that does not parse, or a run of another lab).
void storeBenchPoint(ResultStore& store, int64_t run_id, int index, const BenchResult& result);
std::vector<BenchResult> loadBenchPoints(const ResultStore& store, int64_t run_id);

}  // namespace ts
