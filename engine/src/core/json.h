// JSON form of the value types every lab shares (nlohmann::json): the model, statistics, the
// environment. Each lab has its own (benchmark/benchmark_json.h, ...). Parsing throws
// std::invalid_argument with a message naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "core/config.h"
#include "core/result.h"

namespace ts {

nlohmann::json toJson(const ModelConfig& m);
nlohmann::json toJson(const Stats& s);
nlohmann::json toJson(const Environment& e);

ModelConfig modelFromJson(const nlohmann::json& j);
Stats statsFromJson(const nlohmann::json& j);
Environment environmentFromJson(const nlohmann::json& j);

}  // namespace ts
