// The point's dimensions (see Note [point dimensions], core/sweep.h) that a lab's panel has no
// field of its own for, checkpointing and any added later: a line each (text or one of the
// row's choices), named, explained and defaulted by its row of the point's table, so that a new
// dimension reaches the panels without an edit there.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QStringList>
#include <map>
#include <string>
#include <vector>

#include "core/sweep.h"

class QFormLayout;
class QLineEdit;
class QWidget;

namespace ts::ui {

class DimensionFields {
public:
    // Adds a line for each such dimension to `form`. With `lists` a comma list sweeps it.
    DimensionFields(QWidget* parent, QFormLayout* form, bool lists);

    const std::map<Dimension, QLineEdit*>& edits() const { return edits_; }
    // Each dimension's values as the table keeps them; a line that does not parse adds its
    // problem to `problems` under its field.
    std::map<Dimension, std::vector<std::string>> values(
        QHash<QWidget*, QStringList>& problems) const;
    // The field a message of the engine's names (by the dimension's key), or nullptr.
    QWidget* fieldFor(const QString& message) const;

    // The dimensions these fields show: rows with a list and a JSON field that a point's panel
    // has no field of its own for (not the size, ..., the device).
    static std::vector<const DimensionDef*> shown();
    // From a stored run: `lists` holds the swept values by list key, `point` the point's JSON
    // (its json_key). Runs stored before a dimension hold its default.
    static void stateFromSpec(const QJsonObject& lists, const QJsonObject& point,
                              QJsonObject& state);
    // "checkpointing 2, nested" for each dimension that is not its default, for a run's summary.
    static QStringList describe(const QJsonObject& lists, const QJsonObject& point);

private:
    bool lists_;
    std::map<Dimension, QLineEdit*> edits_;
};

}  // namespace ts::ui
