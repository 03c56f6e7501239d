// JSON form of the memory lab's value types: the spec (stored with the run), the result (one
// stored row per point, the allocator's trace included, so every table and the snapshot can
// be rebuilt from the store). Parsing throws std::invalid_argument naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "memory/memory.h"

namespace ts {

nlohmann::json toJson(const MemorySpec& s);
nlohmann::json toJson(const MemoryResult& r);
nlohmann::json toJson(const FrontierResult& f);
MemorySpec memorySpecFromJson(const nlohmann::json& j);
MemoryResult memoryResultFromJson(const nlohmann::json& j);
// The allocator's trace alone, in the form a stored result holds it (and the Python runner
// sends it: runner/trainscope_runner/memory.py).
RawMemoryTrace memoryTraceFromJson(const nlohmann::json& j);

// The run's spec as stored (createRun): one spec, or {"points": [...]} for several.
std::string memorySpecJson(const std::vector<MemorySpec>& specs);
void storeMemory(ResultStore& store, int64_t run_id, int index, const MemoryResult& r);

}  // namespace ts
