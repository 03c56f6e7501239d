// JSON of the benchmark's value types.
#include "benchmark/benchmark_json.h"

#include "benchmark/benchmark_report.h"
#include "core/json.h"
#include "core/json_read.h"

namespace ts {
using namespace jsonio;

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

BenchResult resultFromJson(const json& j) {
    requireObject(j, "");
    BenchResult r;
    if (auto it = j.find("config"); it != j.end()) r.config = pointFromJson(*it, "config", false);
    read(j, "", "status", r.status, toStatus);
    read(j, "", "error", r.error, toStr);
    read(j, "", "oom_bytes", r.oom_bytes, kInt64);
    read(j, "", "parameter_count", r.parameter_count, kInt64);
    if (auto it = j.find("steps"); it != j.end()) {
        if (!it->is_array()) fail("steps", "expected a list, got " + shown(*it));
        for (size_t i = 0; i < it->size(); ++i)
            r.steps.push_back(stepFromJson((*it)[i], fmt::format("steps[{}]", i)));
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

std::string benchSpecJson(const SweepSpec& s, size_t point_count) {
    // The sweep file's fields, so that a stored run's spec can be run again as a sweep file.
    json j = sweepToJson(s);
    j["points"] = point_count;
    j["command"] = "bench";
    return dumpJson(j);
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
