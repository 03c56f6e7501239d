// JSON form of the profiler's value types: the spec (stored with the run), the result (one
// stored row, events included, so every table can be rebuilt from the store). Parsing throws
// std::invalid_argument naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "profiler/profiler.h"

namespace ts {

nlohmann::json toJson(const ProfileSpec& s);
nlohmann::json toJson(const ProfileResult& r);
ProfileSpec profileSpecFromJson(const nlohmann::json& j);
ProfileResult profileResultFromJson(const nlohmann::json& j);

// The run's spec as stored (createRun), and the result as its one row.
std::string profileSpecJson(const ProfileSpec& s);
void storeProfile(ResultStore& store, int64_t run_id, const ProfileResult& r);

}  // namespace ts
