// JSON of the training point (core/point.h) and of a measured step: what the CLI reads, every
// lab that runs steps stores, the Python runner reads and writes. Parsing throws
// std::invalid_argument with a message naming the field.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "core/point.h"

namespace ts {

nlohmann::json toJson(const PointConfig& c);
// The point as the Python runner reads it (runner/trainscope_runner/bench.py: Point): the
// user's code, the model's dimensions, the step's settings.
nlohmann::json pythonRunnerSpec(const PointConfig& c);
nlohmann::json toJson(const StepSample& s);

// `prefix` names the object in messages ("base", "config"); `strict` refuses unknown fields
// (a file the user wrote), a stored row's is read leniently (fields of later versions).
PointConfig pointFromJson(const nlohmann::json& j, std::string_view prefix = "",
                          bool strict = true);
StepSample stepFromJson(const nlohmann::json& j, std::string_view prefix = "");

}  // namespace ts
