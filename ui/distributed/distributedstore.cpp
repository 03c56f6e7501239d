#include "ui/distributed/distributedstore.h"

#include "core/json.h"
#include "distributed/distributed_json.h"

namespace ts::ui {

std::string distributedSpecText(const DistributedSpec& spec) { return distributedSpecJson(spec); }

DistributedSpec distributedSpecFromText(const std::string& json) {
    return distributedSpecFromJson(parseJson(json));
}

std::vector<DistributedResult> distributedResultsOf(const StoredRun& run) {
    return distributedResultsFromRows(run.info, run.rows);
}

}  // namespace ts::ui
