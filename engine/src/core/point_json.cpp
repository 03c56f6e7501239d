// JSON of the training point and of a measured step. See core/point_json.h.
#include "core/point_json.h"

#include <algorithm>
#include <iterator>

#include "core/json.h"
#include "core/json_read.h"
#include "core/sweep.h"

namespace ts {
using namespace jsonio;

namespace {
// The point's fields this file writes by name; the point's other dimensions (Note [point
// dimensions]) are written and read through their rows, by their json_key, as text (a number
// for a whole number).
constexpr std::string_view kNamedFields[] = {
    "model", "size",          "batch_size", "warmup",         "steps",
    "mode",  "precision",     "attention",  "exec",           "source",
    "code",  "optimizer",     "python",     "timeout_s",      "device",
    "seed",  "learning_rate", "vocab_size", "context_length", "d_model",
    "d_ff",  "num_layers",    "num_heads",  "rope_theta",     "cuda_profiler_range"};

bool named(std::string_view key) {
    return std::find(std::begin(kNamedFields), std::end(kNamedFields), key) !=
           std::end(kNamedFields);
}
}  // namespace

json toJson(const PointConfig& c) {
    json j = {{"model", toJson(c.model)},
              {"batch_size", c.batch_size},
              {"warmup", c.warmup},
              {"steps", c.steps},
              {"mode", toString(c.mode)},
              {"precision", toString(c.precision)},
              {"attention", toString(c.attention)},
              {"exec", toString(c.exec)},
              {"device", c.device},
              {"seed", c.seed},
              {"learning_rate", number(c.learning_rate)}};
    for (const auto& d : pointDimensions()) {
        if (d.json_key.empty() || named(d.json_key)) continue;
        const std::string v = d.get(c);
        j[std::string(d.json_key)] =
            d.kind == DimensionDef::Kind::Integer ? json(std::stoll(v)) : json(v);
    }
    // The source and the code only where there is the user's code (a sweep's base may be
    // TrainScope's point of a sweep over both): TrainScope's points read as they always did.
    if (c.source != Source::TrainScope) j["source"] = toString(c.source);
    if (c.source != Source::TrainScope || !c.python.code.empty()) {
        j["code"] = c.python.code;
        j["optimizer"] = c.python.optimizer;
        j["python"] = c.python.python;
        j["timeout_s"] = number(c.python.timeout_s);
    }
    // Only when asked: points read and stored as they always were otherwise.
    if (c.cuda_profiler_range) j["cuda_profiler_range"] = true;
    return j;
}

json pythonRunnerSpec(const PointConfig& c) {
    const ModelConfig& m = c.model;
    return {{"code", c.python.code},
            {"optimizer", c.python.optimizer},
            {"model",
             {{"vocab_size", m.vocab_size},
              {"context_length", m.context_length},
              {"d_model", m.d_model},
              {"num_layers", m.num_layers},
              {"num_heads", m.num_heads},
              {"d_ff", m.d_ff},
              {"rope_theta", m.rope_theta}}},
            {"batch_size", c.batch_size},
            {"warmup", c.warmup},
            {"steps", c.steps},
            {"mode", toString(c.mode)},
            {"precision", toString(c.precision)},
            {"exec", toString(c.exec)},
            {"device", c.device},
            {"seed", c.seed},
            {"learning_rate", number(c.learning_rate)},
            {"cuda_profiler_range", c.cuda_profiler_range}};
}

json toJson(const StepSample& s) {
    return {{"index", s.index},
            {"warmup", s.warmup},
            {"forward_ms", number(s.forward_ms)},
            {"backward_ms", number(s.backward_ms)},
            {"optimizer_ms", number(s.optimizer_ms)},
            {"total_ms", number(s.total_ms)},
            {"loss", number(s.loss)},
            {"memory_allocated", s.memory_allocated},
            {"memory_reserved", s.memory_reserved},
            {"memory_peak", s.memory_peak}};
}

PointConfig pointFromJson(const json& j, std::string_view prefix, bool strict) {
    requireObject(j, prefix);
    if (strict) {
        std::vector<std::string_view> known(std::begin(kNamedFields), std::end(kNamedFields));
        for (const auto& d : pointDimensions())
            if (!d.json_key.empty() && !named(d.json_key)) known.push_back(d.json_key);
        rejectUnknown(j, prefix, known);
    }
    PointConfig c;
    // The dimensions read through their rows; absent in points stored before them: the
    // default (no checkpoints).
    for (const auto& d : pointDimensions()) {
        if (d.json_key.empty() || named(d.json_key)) continue;
        const std::string key(d.json_key);
        const auto it = j.find(key);
        if (it == j.end()) continue;
        const std::string field = join(prefix, key);
        const std::string text = d.kind == DimensionDef::Kind::Integer
                                     ? std::to_string(toInt(*it, field, d.min, d.max))
                                     : toStr(*it, field);
        try {
            d.set(c, parseValue(d, text));
        } catch (const std::invalid_argument& e) {
            fail(field, e.what());
        }
    }
    const auto model = j.find("model");
    const auto size = j.find("size");
    if (model != j.end() && size != j.end())
        fail(join(prefix, "size"), "give either \"model\" or \"size\", not both");
    if (model != j.end()) {
        // Dimensions beside a "model" object would be ambiguous: which one wins?
        for (auto key : kModelDims)
            if (j.contains(key))
                fail(join(prefix, key), "set it inside \"model\", or use \"size\" with overrides");
        c.model = modelFrom(*model, join(prefix, "model"), strict);
    } else if (size != j.end()) {
        c.model = presetWithOverrides(j, prefix, toSize(*size, join(prefix, "size"), false));
    } else {
        readModelFields(j, prefix, c.model);
    }
    read(j, prefix, "batch_size", c.batch_size, kInt64);
    read(j, prefix, "warmup", c.warmup, kInt);
    read(j, prefix, "steps", c.steps, kInt);
    read(j, prefix, "mode", c.mode, toMode);
    read(j, prefix, "precision", c.precision, toPrecision);
    read(j, prefix, "attention", c.attention, toAttentionImpl);
    read(j, prefix, "exec", c.exec, toExecMode);    // absent in runs stored before it: eager
    read(j, prefix, "source", c.source, toSource);  // likewise: TrainScope's model
    read(j, prefix, "code", c.python.code, toStr);
    read(j, prefix, "optimizer", c.python.optimizer, toStr);
    read(j, prefix, "python", c.python.python, toStr);
    read(j, prefix, "timeout_s", c.python.timeout_s, toDouble);
    read(j, prefix, "device", c.device, toStr);
    read(j, prefix, "seed", c.seed, toUint);
    read(j, prefix, "learning_rate", c.learning_rate, toDouble);
    read(j, prefix, "cuda_profiler_range", c.cuda_profiler_range, toBool);
    return c;
}

StepSample stepFromJson(const json& j, std::string_view prefix) {
    requireObject(j, prefix);
    StepSample s;
    read(j, prefix, "index", s.index, kInt);
    read(j, prefix, "warmup", s.warmup, toBool);
    read(j, prefix, "forward_ms", s.forward_ms, toDouble);
    read(j, prefix, "backward_ms", s.backward_ms, toDouble);
    read(j, prefix, "optimizer_ms", s.optimizer_ms, toDouble);
    read(j, prefix, "total_ms", s.total_ms, toDouble);
    read(j, prefix, "loss", s.loss, toDouble);
    read(j, prefix, "memory_allocated", s.memory_allocated, kInt64);
    read(j, prefix, "memory_reserved", s.memory_reserved, kInt64);
    read(j, prefix, "memory_peak", s.memory_peak, kInt64);
    return s;
}

}  // namespace ts
