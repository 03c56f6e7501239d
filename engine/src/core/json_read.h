// Reading JSON written by people (sweep files, presets) or by this program (stored rows):
// every value checked, every error naming its field ("base.steps: expected an integer").
// Used by the JSON code of the core and of each lab. Includes the whole nlohmann/json.hpp:
// include it from .cpp files only.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/result.h"

namespace ts::jsonio {

using nlohmann::json;

[[noreturn]] void fail(std::string_view field, std::string_view problem);
// The offending value as it appeared, shortened so a huge object does not flood the message.
std::string shown(const json& v);
// "prefix.key", or "key" without a prefix.
std::string join(std::string_view prefix, std::string_view key);
void requireObject(const json& j, std::string_view field);
// Rejects keys outside `known`: a misspelt key must not be silently ignored.
void rejectUnknown(const json& j, std::string_view prefix,
                   const std::vector<std::string_view>& known);

// Non-finite doubles (a diverged loss) have no JSON literal; nlohmann would write null and
// lose which one it was, so they go out as strings and come back from strings (or null).
json number(double v);
double toDouble(const json& v, std::string_view field);
// Integers; an integral float (1e4 in a hand-written file) is accepted, 4.5 is not.
int64_t toInt(const json& v, std::string_view field, int64_t lo, int64_t hi);
uint64_t toUint(const json& v, std::string_view field);
std::string toStr(const json& v, std::string_view field);
bool toBool(const json& v, std::string_view field);
Mode toMode(const json& v, std::string_view field);
Precision toPrecision(const json& v, std::string_view field);
AttentionImpl toAttentionImpl(const json& v, std::string_view field);
ExecMode toExecMode(const json& v, std::string_view field);
Source toSource(const json& v, std::string_view field);
Status toStatus(const json& v, std::string_view field);
// A preset name ("small"), or "custom" where allowed.
std::string toSize(const json& v, std::string_view field, bool allow_custom);

inline auto intIn(int64_t lo, int64_t hi) {
    return [lo, hi](const json& v, std::string_view f) { return toInt(v, f, lo, hi); };
}
inline const auto kInt64 =
    intIn(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
inline const auto kInt = intIn(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());

// Reads j[key] into out when present; leaves the default otherwise.
template <typename T, typename Conv>
void read(const json& j, std::string_view prefix, const char* key, T& out, Conv conv) {
    auto it = j.find(key);
    if (it != j.end()) out = static_cast<T>(conv(*it, join(prefix, key)));
}

// A list field: each element converted, errors naming "field[i]".
template <typename T, typename Conv>
void readList(const json& j, const char* key, std::vector<T>& out, Conv conv) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (!it->is_array()) fail(key, "expected a list, got " + shown(*it));
    for (size_t i = 0; i < it->size(); ++i)
        out.push_back(static_cast<T>(conv((*it)[i], fmt::format("{}[{}]", key, i))));
}

// A list of fixed-width records (the compact arrays a lab stores its traces in):
// j[key] must be a list of arrays of `fields` values, each parsed by `parse`; an error names
// "trace.key[i]".
template <typename T, typename Parse>
std::vector<T> recordsFrom(const json& j, const char* key, size_t fields, Parse parse) {
    std::vector<T> out;
    const json& list = j.at(key);
    if (!list.is_array())
        throw std::invalid_argument(fmt::format("trace.{}: expected a list", key));
    out.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        const json& e = list[i];
        try {
            if (!e.is_array() || e.size() != fields)
                throw std::invalid_argument(fmt::format("expected {} fields", fields));
            out.push_back(parse(e));
        } catch (const std::exception& ex) {
            throw std::invalid_argument(fmt::format("trace.{}[{}]: {}", key, i, ex.what()));
        }
    }
    return out;
}

// An enum stored by name, read back with its parse function ("unknown phase \"x\"").
template <typename E, typename Parse>
E enumFrom(const json& v, Parse parse, const char* what) {
    auto e = parse(v.get<std::string>());
    if (!e) throw std::invalid_argument(fmt::format("unknown {} {}", what, v.dump()));
    return *e;
}

// The dimension fields of a model, read over whatever `m` holds already.
void readModelFields(const json& j, std::string_view prefix, ModelConfig& m);
// A preset with overrides: a changed shape is no longer that preset, so it becomes "custom".
ModelConfig presetWithOverrides(const json& j, std::string_view prefix, const std::string& size);
// `strict` rejects unknown keys: on for configs people write, off for stored results so that
// a file written by a newer build (with more fields) still reads.
ModelConfig modelFrom(const json& j, std::string_view prefix, bool strict);
Stats statsFrom(const json& j, std::string_view prefix);
Environment environmentFrom(const json& j, std::string_view prefix);

// The model's dimension keys, which may stand beside "size" in a configuration.
inline constexpr std::string_view kModelDims[] = {
    "vocab_size", "context_length", "d_model", "d_ff", "num_layers", "num_heads", "rope_theta"};

}  // namespace ts::jsonio
