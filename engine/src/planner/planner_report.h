// The planner lab's JSON, tables, stored runs and its entry in the lab registry.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/lab.h"
#include "planner/planner.h"

namespace ts {

nlohmann::json toJson(const PlannerInputs& in);
nlohmann::json toJson(const MachineMeasurement& m);
nlohmann::json toJson(const MeasureSpec& s);
// The whole report: inputs, measurement, every strategy with its formulas and limits, the
// collectives and the predictions.
nlohmann::json toJson(const PlannerReport& r);
// Read back; each throws std::invalid_argument naming the bad field (inputs are validated too).
PlannerInputs plannerInputsFromJson(const nlohmann::json& j);
MachineMeasurement measurementFromJson(const nlohmann::json& j);
MeasureSpec measureSpecFromJson(const nlohmann::json& j);
// A stored row (its inputs and measurement; the plans are computed again from them).
PlannerReport plannerReportFromJson(const nlohmann::json& j);

// The spec a run is stored with: {"command": "plan", inputs..., "measure": spec or null}.
std::string plannerSpecJson(const PlannerInputs& in, const std::optional<MeasureSpec>& measure);

// One row: the report.
void storePlannerReport(ResultStore& store, int64_t run_id, int index, const PlannerReport& r);
std::vector<PlannerReport> plannerReportsFromRows(const RunInfo& run,
                                                  const std::vector<StoredRow>& rows);

// The report for people: inputs, the measurement, per strategy a layer's FLOPs, compute and
// communication per pass and the step of L layers, the formulas, the limits, the memory per
// device, the ring collectives and the whole-model predictions; Text (aligned) or Markdown.
std::string plannerReportText(const PlannerReport& r, TableFormat format);
// One row a strategy: the numbers of plannerReportText's first table.
std::string plannerCsv(const std::vector<PlannerReport>& reports);
// "12.3 ms", "45.6 µs", "1.20 s".
std::string formatSeconds(double s);
// "989 TFLOP/s", "1.2 GFLOP/s".
std::string formatFlopRate(double flops);
// "450 GB/s" (10^9 bytes).
std::string formatByteRate(double bytes_per_s);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab plannerLab();

}  // namespace ts
