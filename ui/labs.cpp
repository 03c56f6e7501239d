// One line per lab. The window builds its lab chooser, its views, History's abilities and
// its reading of stored configurations from this list.
#include "ui/labs.h"

#include "ui/attention/attentionpanel.h"
#include "ui/attention/attentionview.h"
#include "ui/benchmark/benchpanel.h"
#include "ui/benchmark/benchview.h"
#include "ui/distributed/distributedpanel.h"
#include "ui/distributed/distributedview.h"
#include "ui/memory/memorypanel.h"
#include "ui/memory/memoryview.h"
#include "ui/planner/plannerpanel.h"
#include "ui/planner/plannerview.h"
#include "ui/precision/precisionpanel.h"
#include "ui/precision/precisionview.h"
#include "ui/profiler/profilepanel.h"
#include "ui/profiler/profileview.h"

namespace ts::ui {

template <typename Panel, typename View>
static LabEntry entry(const char* id, const char* title) {
    LabEntry e{QString::fromLatin1(id),
               QObject::tr(title),
               [] { return static_cast<LabPanel*>(new Panel); },
               [] { return static_cast<LabView*>(new View); },
               &Panel::describeSpec,
               &Panel::stateFromSpec,
               {},
               {}};
    // A lab that takes a training point says so with a static stateFromPoint.
    if constexpr (requires(const QJsonObject& point) { Panel::stateFromPoint(point); })
        e.stateFromPoint = &Panel::stateFromPoint;
    // A lab whose runs overlay says so with a static overlayOf on its view.
    if constexpr (requires(const StoredRun& run) { View::overlayOf(run); })
        e.overlayOf = &View::overlayOf;
    return e;
}

const std::vector<LabEntry>& uiLabs() {
    static const std::vector<LabEntry> labs = {
        entry<BenchPanel, BenchView>(kBenchLab, "End-to-end benchmark"),
        entry<AttentionPanel, AttentionView>(kAttentionLab, "Attention benchmark"),
        entry<PrecisionPanel, PrecisionView>(kPrecisionLab, "Precision"),
        entry<ProfilePanel, ProfileView>(kProfileLab, "Profiler"),
        entry<MemoryPanel, MemoryView>(kMemoryLab, "Memory"),
        entry<DistributedPanel, DistributedView>(kDistributedLab, "Distributed"),
        entry<PlannerPanel, PlannerView>(kPlannerLab, "Parallelism planner"),
    };
    return labs;
}

}  // namespace ts::ui
