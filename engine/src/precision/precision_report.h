// The precision lab's JSON, tables and stored runs.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/lab.h"
#include "precision/precision.h"

namespace ts {

nlohmann::json toJson(const AccumulationResult& r);
nlohmann::json toJson(const AutocastReport& r);
nlohmann::json toJson(const TrainNumericsCurve& c);
// A stored row's result JSON back; throws std::runtime_error naming the bad field.
PrecisionRow precisionRowFromJson(const nlohmann::json& j);

// Rows of the store (each in its own transaction) and a run's rows read back.
void storeAccumulation(ResultStore& store, int64_t run_id, int index, const AccumulationResult& r);
void storeAutocast(ResultStore& store, int64_t run_id, int index, const AutocastReport& r);
void storeTrainNumerics(ResultStore& store, int64_t run_id, int index, const TrainNumericsCurve& c);
std::vector<PrecisionRow> precisionRowsFromRows(const RunInfo& run,
                                                const std::vector<StoredRow>& rows);

// The accumulation table (one row a sum: value, error, first rounding / stall step, ulp) and
// the autocast table (one row a module or tensor: dtypes), as Text (aligned) or Markdown.
std::string accumulationTable(const std::vector<AccumulationResult>& results, TableFormat format);
std::string autocastTable(const AutocastReport& report, TableFormat format);
// The ops the inspector saw (see Note [computed in]): phase, module, op (indented by depth),
// autograd node, inputs as called, whether autocast cast them, the dtype computed in, output.
std::string autocastOpsTable(const AutocastReport& report, TableFormat format);
// One row a precision: final loss, largest difference to the fp32 curve (when there is one),
// skipped steps, the last loss scale, the fp16 underflow counts.
std::string trainNumericsTable(const std::vector<TrainNumericsCurve>& curves, TableFormat format);
std::string trainNumericsJsonLine(const TrainNumericsCurve& c);
// Where the report was taken on the CPU: that autocast followed the CPU's op lists there, and
// which of its ops came out in the reduced dtype that CUDA's autocast keeps in fp32 (see Note
// [autocast on the CPU]); empty on a GPU.
std::string autocastPolicyNote(const AutocastReport& r);
// The lab's CSV tables (see Note [tables other programs read]), those of the experiments given, in
// this order: "sums" (one row a sum), "tensors" (one row an autocast record) and "ops" (one row
// an op the inspector saw), "steps" (one row a training step of a precision).
std::vector<CsvTable> precisionCsvTables(const std::vector<AccumulationResult>& sums,
                                         const std::vector<AutocastReport>& casts,
                                         const std::vector<TrainNumericsCurve>& curves);
// One JSON object a line (an accumulation result without its running error unless asked).
std::string accumulationJsonLine(const AccumulationResult& r, bool with_running_error);
std::string autocastJsonLine(const AutocastReport& r);

// The lab's entry in the registry (engine/src/labs.cpp).
Lab precisionLab();

}  // namespace ts
