// Running a training point, the parts every lab that runs steps shares (on the LibTorch side):
// whether this machine can run it, a step as TrainingStep measured it, and the user's code
// through the Python runner.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/observer.h"
#include "core/point.h"
#include "core/result.h"

namespace ts {

struct StepTimes;
struct TrainingSetup;

// The training step a point runs (nn/training_step.h): its model, batch, mode, precision,
// attention, seed, learning rate, execution mode and checkpointing.
TrainingSetup trainingSetup(const PointConfig& c);

// Why this machine cannot run the point (runtime/environment.h), empty if it can.
std::vector<std::string> checkPointRunnable(const PointConfig& c);

// A step as TrainingStep::run measured it (defined with the runner, on the LibTorch side).
StepSample stepSample(const StepTimes& t, int index, bool warmup);

// The Python source (the user's code) for any lab that runs a point's steps: `command` of the
// Python runner (runtime/python_runner.h) with `spec` (pythonRunnerSpec, and what the lab
// adds), its steps handed to `on_step`, its other lines (a profile's trace) to `on_other` and its
// result line (what a lab reads besides the status) to `on_result`.
// The outcome: Ok, OOM (a result), Failed (the user's message and traceback, a crash, a hang),
// Cancelled; the "ready" line's model, optimizer and notes are logged as Info.
struct PythonPointOutcome {
    Status status = Status::Ok;
    std::string error;
    int64_t parameter_count = 0;
};
PythonPointOutcome runPythonPoint(const PointConfig& cfg, const std::string& command,
                                  const nlohmann::json& spec, Observer& obs, int point_index,
                                  const CancelToken& cancel,
                                  const std::function<void(const StepSample&)>& on_step,
                                  const std::function<void(const nlohmann::json&)>& on_other,
                                  const std::function<void(const nlohmann::json&)>& on_result = {});

}  // namespace ts
