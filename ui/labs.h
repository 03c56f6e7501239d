// Every lab the window offers: its id (the engine's lab id, the store's run kind), its
// title, its configuration panel and its results view. Adding a lab to the window is one
// line in labs.cpp.
#pragma once

#include <QJsonObject>
#include <QString>
#include <functional>
#include <vector>

namespace ts::ui {

class LabPanel;
class LabView;
struct RunOverlay;
struct StoredRun;

struct LabEntry {
    QString id;     // "bench"
    QString title;  // "End-to-end benchmark"
    std::function<LabPanel*()> createPanel;
    std::function<LabView*()> createView;
    // A stored run's spec JSON: a one-line summary, and the panel state that runs it again.
    std::function<QString(const QJsonObject& spec)> describeSpec;
    std::function<QJsonObject(const QJsonObject& spec)> stateFromSpec;
    // The panel state that runs one training point (core/point_json.h's JSON) in this lab: how
    // a view hands a point to another lab ("Profile This Point"); empty where the lab takes no
    // training point.
    std::function<QJsonObject(const QJsonObject& point)> stateFromPoint;
    // What History's Overlay Selected draws of one stored run (see Note [overlaying stored
    // runs] in ui/common/overlay.h); called in a pool thread. Empty where the lab has no
    // overlay (its results are no number per point).
    std::function<RunOverlay(const StoredRun& run)> overlayOf;
};

// In menu order.
const std::vector<LabEntry>& uiLabs();

}  // namespace ts::ui
