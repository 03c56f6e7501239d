// JSON form of the value types every lab shares (nlohmann::json): the model, statistics, the
// environment. Each lab has its own (benchmark/benchmark_json.h, ...). Parsing throws
// std::invalid_argument with a message naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "core/config.h"
#include "core/result.h"

namespace ts {

nlohmann::json toJson(const ModelConfig& m);
nlohmann::json toJson(const Stats& s);
nlohmann::json toJson(const Environment& e);

// JSON text from outside (a sweep file, a preset, a stored row). Nesting deeper than
// kMaxJsonDepth throws std::invalid_argument before nlohmann sees the text: a file of 100k
// "[" would otherwise overflow the stack of any recursive walk over it. Bad syntax throws
// nlohmann::json::parse_error.
inline constexpr int kMaxJsonDepth = 64;
nlohmann::json parseJson(std::string_view text);
// The same reader for text that may be anything (a stored run's spec as a view opens it): a
// discarded value (is_discarded()) instead of an exception for bad syntax, a NUL, a key given
// twice or nesting past kMaxJsonDepth. The one way a view reads stored JSON.
nlohmann::json parseJsonOrDiscarded(std::string_view text);
// JSON text of a value that may hold text from users or stores (a label, an error): invalid
// UTF-8 is written as U+FFFD instead of throwing, so one bad label cannot break a listing.
std::string dumpJson(const nlohmann::json& j, int indent = -1);

ModelConfig modelFromJson(const nlohmann::json& j);
Stats statsFromJson(const nlohmann::json& j);
Environment environmentFromJson(const nlohmann::json& j);

}  // namespace ts
