// The configuration panel of a lab: its fields, their validation against this machine, and
// the job that Run hands to the RunController. The main window knows panels only through
// this interface (the registry is ui/labs.cpp).
#pragma once

#include <QJsonObject>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

#include "common/runcontroller.h"
#include "runtime/environment.h"

namespace ts::ui {

class LabPanel : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    // What this machine can run; until it is known the panel offers only what needs no probe.
    virtual void setCapabilities(const Capabilities& caps) = 0;
    // The problems that block Run, each a sentence; empty when the configuration can run.
    virtual QStringList problems() const = 0;
    bool isValid() const { return problems().isEmpty(); }
    // The run, or nullopt when invalid.
    virtual std::optional<LabJob> makeJob() const = 0;
    // One line for the status bar: "6 points: ...".
    virtual QString summary() const = 0;
    // Every field, to restore the last configuration and to load classroom presets.
    virtual QJsonObject state() const = 0;
    // Values the machine cannot run are dropped; `notes` says which and why.
    virtual void setState(const QJsonObject& state, QStringList* notes = nullptr) = 0;
protected:
    // Marks a field invalid (red frame, the messages in its tooltip above `base_tooltip`) or
    // valid again (no frame, `base_tooltip` alone).
    static void flagField(QWidget* w, const QStringList& messages, const QString& base_tooltip);

Q_SIGNALS:
    // Any field changed; `problems()` may have changed too.
    void changed();
    // Ctrl+Enter in a field.
    void runRequested();
};

}  // namespace ts::ui
