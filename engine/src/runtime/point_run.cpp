// Running a training point: the parts the labs that run steps share. See runtime/point_run.h.
#include "runtime/point_run.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/point_json.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "runtime/host_memory.h"
#include "runtime/python_runner.h"

namespace ts {

TrainingSetup trainingSetup(const PointConfig& c) {
    TrainingSetup s;
    s.model = c.model;
    s.batch_size = c.batch_size;
    s.mode = c.mode;
    s.precision = c.precision;
    s.attention = c.attention;
    s.seed = c.seed;
    s.learning_rate = c.learning_rate;
    s.exec = c.exec;
    s.checkpoint = c.checkpoint;
    s.fused_loss = c.fused_loss;
    return s;
}

StepSample stepSample(const StepTimes& t, int index, bool warmup) {
    StepSample s;
    s.index = index;
    s.warmup = warmup;
    s.forward_ms = t.forward_ms;
    s.backward_ms = t.backward_ms;
    s.optimizer_ms = t.optimizer_ms;
    s.total_ms = t.total_ms;
    s.loss = t.loss;
    s.memory_allocated = t.memory_allocated;
    s.memory_reserved = t.memory_reserved;
    s.memory_peak = t.memory_peak;
    return s;
}

std::vector<std::string> checkPointRunnable(const PointConfig& c) {
    auto problems = checkRunnable({c.device, {c.precision}, {c.attention}});
    if (!problems.empty()) return problems;
    // A tensor bigger than the whole GPU fails in LibTorch with an allocator message; say it
    // up front. "cuda" is the current device, cuda:0 unless set otherwise.
    const std::string id = c.device == "cuda" ? "cuda:0" : c.device;
    if (id == "cpu") {
        if (auto p = deviceMemoryProblem(c, systemMemoryBytes(), "this machine's memory");
            !p.empty())
            problems.push_back(p);
        else if (auto q = hostMemoryProblem(c, availableMemoryBytes()); !q.empty())
            problems.push_back(q);
        return problems;
    }
    for (const auto& d : capabilities().devices)
        if (d.id == id)
            if (auto p = deviceMemoryProblem(c, d.total_memory, d.name); !p.empty())
                problems.push_back(p);
    return problems;
}

PythonPointOutcome runPythonPoint(const PointConfig& cfg, const std::string& command,
                                  const nlohmann::json& spec, Observer& obs, int point_index,
                                  const CancelToken& cancel,
                                  const std::function<void(const StepSample&)>& on_step,
                                  const std::function<void(const nlohmann::json&)>& on_other,
                                  const std::function<void(const nlohmann::json&)>& on_result) {
    PythonPointOutcome r;
    int steps = 0;
    bool finished = false;
    const PythonOutcome out = runPython(
        {cfg.python.python, command, spec, cfg.python.timeout_s},
        [&](const nlohmann::json& j) {
            const std::string event = j.value("event", "");
            if (event == "ready") {
                r.parameter_count = j.value("parameters", int64_t{0});
                obs.log(LogLevel::Info,
                        fmt::format("point {}: {} ({} parameters) with {}, torch {}",
                                    point_index + 1, j.value("model", "?"), r.parameter_count,
                                    j.value("optimizer", "no optimizer"), j.value("torch", "?")));
                for (const auto& note : j.value("notes", std::vector<std::string>{}))
                    obs.log(LogLevel::Info, fmt::format("point {}: {}", point_index + 1, note));
            } else if (event == "step") {
                ++steps;
                on_step(stepFromJson(j));  // the runner's step line has a StepSample's fields
            } else if (event == "result") {
                finished = true;
                if (on_result) on_result(j);
                if (j.value("status", "ok") == "oom") {
                    r.status = Status::OOM;
                    r.error = j.value("message", "out of memory in the user's code");
                    if (const std::string at = j.value("where", ""); !at.empty())
                        r.error += " (" + at + ")";
                }
            } else if (on_other) {
                on_other(j);
            }
        },
        cancel);
    switch (out.state) {
        case PythonOutcome::State::Finished:
            if (!finished) {
                r.status = Status::Failed;
                r.error = "the Python runner ended without a result";
            }
            break;
        case PythonOutcome::State::Cancelled:
            r.status = Status::Cancelled;
            r.error = steps < cfg.warmup
                          ? fmt::format("during warm-up step {} of {}", steps + 1, cfg.warmup)
                          : fmt::format("after {} steps past the warm-up", steps - cfg.warmup);
            break;
        case PythonOutcome::State::TimedOut:
        case PythonOutcome::State::Failed:
            r.status = Status::Failed;
            r.error = out.text();
            break;
    }
    if (r.status != Status::Ok && r.status != Status::Cancelled)
        obs.log(LogLevel::Warning, fmt::format("point {}: {}: {}", point_index + 1,
                                               toString(r.status), firstLine(r.error)));
    return r;
}

}  // namespace ts
