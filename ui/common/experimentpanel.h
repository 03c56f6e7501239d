// The configuration panel of one experiment, and the registry of all of them. The main
// window only knows this interface: adding an experiment is a new panel class plus one line
// in panelregistry.cpp.
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

class DataTableView;
class ExportableChart;

// The results of an experiment the benchmark views do not cover, in a tab of their own: the
// window adds it once, clears it when a run of its experiment starts, and hands it every
// item the job posts (JobObserver::item), in order, on the UI thread.
class ExperimentView : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;
    virtual QString title() const = 0;  // the tab's text
    virtual void clear() = 0;
    virtual void addItem(const QVariant& item) = 0;
    // For the exports: what this view shows.
    virtual ExportableChart* chart() { return nullptr; }
    virtual DataTableView* table() { return nullptr; }
};

class ExperimentPanel : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    // What this machine can run; until it is known the panel offers only what needs no probe.
    virtual void setCapabilities(const Capabilities& caps) = 0;
    // The problems that block Run, each a sentence; empty when the configuration can run.
    virtual QStringList problems() const = 0;
    bool isValid() const { return problems().isEmpty(); }
    // The run, or nullopt when invalid.
    virtual std::optional<ExperimentJob> makeJob() const = 0;
    // One line for the status bar: "6 points: ...".
    virtual QString summary() const = 0;
    // Every field, to restore the last configuration and to load classroom presets.
    virtual QJsonObject state() const = 0;
    // Values the machine cannot run are dropped; `notes` says which and why.
    virtual void setState(const QJsonObject& state, QStringList* notes = nullptr) = 0;
    // The experiment's own results view, or nullptr when the benchmark views show its runs.
    // Called once; the window owns the view.
    virtual ExperimentView* createView(QWidget* parent) {
        Q_UNUSED(parent);
        return nullptr;
    }

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

struct PanelEntry {
    QString id;     // "bench": the store's run kind and the presets' "experiment"
    QString title;  // "Benchmark"
    std::function<ExperimentPanel*(QWidget* parent)> create;
};

// Every experiment the window offers, in menu order.
const std::vector<PanelEntry>& experimentPanels();

}  // namespace ts::ui
