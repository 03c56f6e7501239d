// JSON form of the attention lab's value types.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "attention/attention_lab.h"
#include "core/store.h"

namespace ts {

nlohmann::json toJson(const AttentionCell& c);
AttentionCell attentionCellFromJson(const nlohmann::json& j);
nlohmann::json toJson(const AttentionBenchSpec& s);
// A cell's problem (impl, dtype, shape, causal) without its measurements, as JSON text.
std::string attentionProblemJson(const AttentionCell& cell);

// A cell as a row of the store (its own transaction), and a run's cells read back.
void storeAttentionCell(ResultStore& store, int64_t run_id, int index, const AttentionCell& cell);
std::vector<AttentionCell> loadAttentionCells(const ResultStore& store, int64_t run_id);

}  // namespace ts
