// JSON of the benchmark's value types.
#include "benchmark/benchmark_json.h"

#include "benchmark/benchmark_report.h"
#include "core/json.h"
#include "core/json_read.h"

namespace ts {
using namespace jsonio;

namespace {

BenchConfig benchFrom(const json& j, std::string_view prefix, bool strict) {
    requireObject(j, prefix);
    if (strict) {
        rejectUnknown(j, prefix,
                      {"model", "size",          "batch_size", "warmup",         "steps",
                       "mode",  "precision",     "attention",  "exec",           "source",
                       "code",  "optimizer",     "python",     "timeout_s",      "device",
                       "seed",  "learning_rate", "vocab_size", "context_length", "d_model",
                       "d_ff",  "num_layers",    "num_heads",  "rope_theta"});
    }
    BenchConfig c;
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
    return c;
}

StepSample stepFrom(const json& j, std::string_view prefix) {
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

}  // namespace

json toJson(const BenchConfig& c) {
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
    // The source and the code only where there is the user's code (a sweep's base may be
    // TrainScope's point of a sweep over both): TrainScope's points read as they always did.
    if (c.source != Source::TrainScope) j["source"] = toString(c.source);
    if (c.source != Source::TrainScope || !c.python.code.empty()) {
        j["code"] = c.python.code;
        j["optimizer"] = c.python.optimizer;
        j["python"] = c.python.python;
        j["timeout_s"] = number(c.python.timeout_s);
    }
    return j;
}

json pythonRunnerSpec(const BenchConfig& c) {
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
            {"learning_rate", number(c.learning_rate)}};
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

json toJson(const BenchResult& r) {
    json steps = json::array();
    for (const auto& s : r.steps) steps.push_back(toJson(s));
    return {{"config", toJson(r.config)},
            {"status", toString(r.status)},
            {"error", r.error},
            {"oom_bytes", r.oom_bytes},
            {"parameter_count", r.parameter_count},
            {"steps", std::move(steps)},
            {"forward", toJson(r.forward)},
            {"backward", toJson(r.backward)},
            {"optimizer", toJson(r.optimizer)},
            {"total", toJson(r.total)},
            {"peak_memory", r.peak_memory},
            {"first_step_ms", number(r.first_step_ms)},
            {"environment", toJson(r.environment)}};
}

BenchConfig benchFromJson(const json& j) { return benchFrom(j, "", true); }
StepSample stepFromJson(const json& j) { return stepFrom(j, ""); }

BenchResult resultFromJson(const json& j) {
    requireObject(j, "");
    BenchResult r;
    if (auto it = j.find("config"); it != j.end()) r.config = benchFrom(*it, "config", false);
    read(j, "", "status", r.status, toStatus);
    read(j, "", "error", r.error, toStr);
    read(j, "", "oom_bytes", r.oom_bytes, kInt64);
    read(j, "", "parameter_count", r.parameter_count, kInt64);
    if (auto it = j.find("steps"); it != j.end()) {
        if (!it->is_array()) fail("steps", "expected a list, got " + shown(*it));
        for (size_t i = 0; i < it->size(); ++i)
            r.steps.push_back(stepFrom((*it)[i], fmt::format("steps[{}]", i)));
    }
    if (auto it = j.find("forward"); it != j.end()) r.forward = statsFrom(*it, "forward");
    if (auto it = j.find("backward"); it != j.end()) r.backward = statsFrom(*it, "backward");
    if (auto it = j.find("optimizer"); it != j.end()) r.optimizer = statsFrom(*it, "optimizer");
    if (auto it = j.find("total"); it != j.end()) r.total = statsFrom(*it, "total");
    read(j, "", "peak_memory", r.peak_memory, kInt64);
    read(j, "", "first_step_ms", r.first_step_ms, toDouble);
    if (auto it = j.find("environment"); it != j.end())
        r.environment = environmentFrom(*it, "environment");
    return r;
}

SweepSpec sweepFromJson(const json& j) {
    requireObject(j, "");
    // "points" and "command" are what a stored run's spec adds (benchSpecJson), so that it
    // can be run again as a sweep file.
    rejectUnknown(
        j, "",
        {"base", "sizes", "context_lengths", "batch_sizes", "precisions", "attentions", "modes",
         "execs", "sources", "warmups", "devices", "points", "command", "model_table"});
    if (auto it = j.find("command"); it != j.end() && *it != "bench")
        fail("command", "this is the spec of a " + shown(*it) + " run, not a benchmark sweep");
    SweepSpec s;
    if (auto it = j.find("model_table"); it != j.end()) {
        const auto t = it->is_string() ? parseModelTable(it->get<std::string>()) : std::nullopt;
        if (!t) fail("model_table", "expected \"2026\" or \"2025\", got " + shown(*it));
        s.table = *t;
    } else if (j.contains("points")) {
        // A run stored before the two tables (Note [two model tables]): its sizes are 2025's.
        s.table = ModelTable::Edition2025;
    }
    if (auto it = j.find("base"); it != j.end()) s.base = benchFrom(*it, "base", true);
    readList(j, "sizes", s.sizes, [&](const json& v, std::string_view f) {
        return presetName(toSize(v, f, true), s.table);
    });
    readList(j, "context_lengths", s.context_lengths, kInt64);
    readList(j, "batch_sizes", s.batch_sizes, kInt64);
    readList(j, "precisions", s.precisions, toPrecision);
    readList(j, "attentions", s.attentions, toAttentionImpl);
    readList(j, "modes", s.modes, toMode);
    readList(j, "execs", s.execs, toExecMode);
    readList(j, "sources", s.sources, toSource);
    readList(j, "warmups", s.warmups, kInt);
    readList(j, "devices", s.devices, toStr);
    return s;
}

std::string benchSpecJson(const SweepSpec& s, size_t point_count) {
    // The sweep file's fields, so that a stored run's spec can be run again as a sweep file.
    auto names = [](const auto& values) {
        std::vector<std::string> out;
        for (auto v : values) out.emplace_back(toString(v));
        return out;
    };
    return dumpJson(json{{"base", toJson(s.base)},
                         {"model_table", toString(s.table)},
                         {"sizes", s.sizes},
                         {"context_lengths", s.context_lengths},
                         {"batch_sizes", s.batch_sizes},
                         {"precisions", names(s.precisions)},
                         {"attentions", names(s.attentions)},
                         {"modes", names(s.modes)},
                         {"execs", names(s.execs)},
                         {"sources", names(s.sources)},
                         {"warmups", s.warmups},
                         {"devices", s.devices},
                         {"points", point_count},
                         {"command", "bench"}});
}

void storeBenchPoint(ResultStore& store, int64_t run_id, int index, const BenchResult& r) {
    store.addRow(run_id, {index, r.status, dumpJson(toJson(r.config)), dumpJson(toJson(r))});
}

std::vector<BenchResult> loadBenchPoints(const ResultStore& store, int64_t run_id) {
    RunInfo info;
    info.id = run_id;
    info.lab = kBenchLab;
    return benchResultsFromRows(info, store.rows(run_id, kBenchLab));
}

}  // namespace ts
