// JSON form of the benchmark's value types, used by the CLI, the store's rows and the
// window's exports. Parsing throws std::invalid_argument with a message naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "benchmark/benchmark.h"
#include "core/store.h"

namespace ts {

nlohmann::json toJson(const BenchConfig& c);
// The point as the Python runner reads it (runner/trainscope_runner/bench.py: Point): the
// user's code, the model's dimensions, the step's settings.
nlohmann::json pythonRunnerSpec(const BenchConfig& c);
nlohmann::json toJson(const StepSample& s);
nlohmann::json toJson(const BenchResult& r);

BenchConfig benchFromJson(const nlohmann::json& j);
StepSample stepFromJson(const nlohmann::json& j);
BenchResult resultFromJson(const nlohmann::json& j);

// A sweep file: {"base": {...BenchConfig fields...}, "sizes": [...], "context_lengths": [...],
// "batch_sizes": [...], "precisions": [...], "attentions": [...], "modes": [...], "execs": [...],
// "warmups": [...], "devices": [...]}.
SweepSpec sweepFromJson(const nlohmann::json& j);

// A point as a row of the store (its own transaction), and a run's points read back
// (throws std::runtime_error naming a row that does not parse, or a run of another lab).
void storeBenchPoint(ResultStore& store, int64_t run_id, int index, const BenchResult& result);
std::vector<BenchResult> loadBenchPoints(const ResultStore& store, int64_t run_id);

}  // namespace ts
