// One line per lab. The window builds its lab chooser, its views, History's abilities and
// its reading of stored configurations from this list.
#include "labs.h"

#include "attention/attentionpanel.h"
#include "attention/attentionview.h"
#include "benchmark/benchpanel.h"
#include "benchmark/benchview.h"
#include "distributed/distributedpanel.h"
#include "distributed/distributedview.h"
#include "memory/memorypanel.h"
#include "memory/memoryview.h"
#include "precision/precisionpanel.h"
#include "precision/precisionview.h"
#include "profiler/profilepanel.h"
#include "profiler/profileview.h"

namespace ts::ui {

template <typename Panel, typename View>
static LabEntry entry(const char* id, const char* title) {
    return {QString::fromLatin1(id),
            QObject::tr(title),
            [] { return static_cast<LabPanel*>(new Panel); },
            [] { return static_cast<LabView*>(new View); },
            &Panel::describeSpec,
            &Panel::stateFromSpec};
}

const std::vector<LabEntry>& uiLabs() {
    static const std::vector<LabEntry> labs = {
        entry<BenchPanel, BenchView>(kBenchLab, "End-to-end benchmark"),
        entry<AttentionPanel, AttentionView>(kAttentionLab, "Attention benchmark"),
        entry<PrecisionPanel, PrecisionView>(kPrecisionLab, "Precision"),
        entry<ProfilePanel, ProfileView>(kProfileLab, "Profiler"),
        entry<MemoryPanel, MemoryView>(kMemoryLab, "Memory"),
        entry<DistributedPanel, DistributedView>(kDistributedLab, "Distributed"),
    };
    return labs;
}

}  // namespace ts::ui
