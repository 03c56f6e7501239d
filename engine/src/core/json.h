// JSON form of the engine's value types (nlohmann::json), used by the CLI, the store and
// the window's exports. Parsing throws std::invalid_argument with a message naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "trainscope/engine/attention_bench.h"
#include "trainscope/engine/config.h"
#include "trainscope/engine/result.h"

namespace ts {

nlohmann::json toJson(const ModelConfig& m);
nlohmann::json toJson(const BenchConfig& c);
nlohmann::json toJson(const StepSample& s);
nlohmann::json toJson(const Stats& s);
nlohmann::json toJson(const Environment& e);
nlohmann::json toJson(const BenchResult& r);
nlohmann::json toJson(const AttentionCell& c);

ModelConfig modelFromJson(const nlohmann::json& j);
BenchConfig benchFromJson(const nlohmann::json& j);
StepSample stepFromJson(const nlohmann::json& j);
Stats statsFromJson(const nlohmann::json& j);
Environment environmentFromJson(const nlohmann::json& j);
BenchResult resultFromJson(const nlohmann::json& j);
AttentionCell attentionCellFromJson(const nlohmann::json& j);

// A sweep file: {"base": {...BenchConfig fields...}, "sizes": [...], "context_lengths": [...],
// "batch_sizes": [...],
// "precisions": [...], "attentions": [...], "modes": [...], "warmups": [...], "devices": [...]}.
SweepSpec sweepFromJson(const nlohmann::json& j);

}  // namespace ts
