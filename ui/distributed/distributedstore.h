// The distributed lab's JSON as the window needs it: the spec stored with a run (and read back
// for History), and a stored run's rows as DistributedResults. The one place that knows the
// engine's JSON of the lab (distributed/distributed_json.h); the panel and the view go through it.
#pragma once

#include <string>
#include <vector>

#include "distributed/distributed.h"
#include "ui/common/storeaccess.h"

namespace ts::ui {

// The spec as the run stores it (createRun's spec JSON).
std::string distributedSpecText(const DistributedSpec& spec);
// Throws std::invalid_argument (or nlohmann's parse error) for JSON that is no spec.
DistributedSpec distributedSpecFromText(const std::string& json);
// A stored run's points, in order; throws std::runtime_error naming a row that cannot be read.
std::vector<DistributedResult> distributedResultsOf(const StoredRun& run);

}  // namespace ts::ui
