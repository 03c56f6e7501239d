// A stored run's configuration as the window shows and reuses it: a short human summary for
// History's Configuration column and filter, and the lab panel's state that reproduces the run
// (History's "Load Configuration" and "Run Again"). Both read the spec JSON stored with the run
// (benchSpecJson, attentionSpecJson: what the CLI and the window store alike).
#pragma once

#include <QJsonObject>
#include <QString>
#include <optional>

#include "core/store.h"

namespace ts::ui {

// "tiny · ctx 32 · bs 2 · fp32 · naive · train · warm-up 1 · steps 3 · cpu"; empty when the
// spec cannot be read.
QString configurationSummary(const RunInfo& run);

// The state (LabPanel::setState) of the run's lab panel that asks for the same run, label
// included; nullopt with `why` when the spec is unreadable or of an unknown lab.
std::optional<QJsonObject> panelStateForRun(const RunInfo& run, QString* why = nullptr);

}  // namespace ts::ui
