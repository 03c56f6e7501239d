// One line per experiment. The window builds its experiment chooser from this list.
#include "attention/attentionpanel.h"
#include "benchmark/benchpanel.h"
#include "common/experimentpanel.h"

namespace ts::ui {

template <typename Panel>
static PanelEntry entry(const char* id, const char* title) {
    return {QString::fromLatin1(id), QObject::tr(title),
            [](QWidget* parent) -> ExperimentPanel* { return new Panel(parent); }};
}

const std::vector<PanelEntry>& experimentPanels() {
    static const std::vector<PanelEntry> panels = {
        entry<BenchPanel>("bench", "End-to-end benchmark"),
        entry<AttentionPanel>("attention", "Attention benchmark"),
        // entry<DdpPanel>("ddp", "Data parallel training"),  ← the next one: one line
    };
    return panels;
}

}  // namespace ts::ui
