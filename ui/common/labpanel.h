// The configuration panel of a lab: its fields, their validation against this machine, and
// the job that Run hands to the RunController. The main window knows panels only through
// this interface (the registry is ui/labs.cpp).
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/environment.h"
#include "ui/common/runcontroller.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QVBoxLayout;

namespace ts::ui {

class LabPanel : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    // What this machine can run; until it is known the panel offers only what needs no probe.
    // Fills the device list, then asks the lab what else the machine allows.
    void setCapabilities(const Capabilities& caps);
    bool capabilitiesKnown() const { return capsKnown_; }
    // The problems that block Run, each a sentence; empty when the configuration can run.
    QStringList problems() const { return problems_; }
    bool isValid() const { return problems_.isEmpty(); }
    // The widget of field `name` ("context", "seq", ...): flagged when invalid; for tests.
    QWidget* fieldWidget(const QString& name) const { return fields_.value(name); }
    // The run, or nullopt when invalid.
    virtual std::optional<LabJob> makeJob() const = 0;
    // One line for the status bar: "6 points: ...".
    virtual QString summary() const = 0;
    // Every field, to restore the last configuration and to load classroom presets.
    virtual QJsonObject state() const = 0;
    // Values the machine cannot run are dropped; `notes` says which and why.
    virtual void setState(const QJsonObject& state, QStringList* notes = nullptr) = 0;

    // A classroom preset (or a stored run's configuration, loaded from History): its
    // configuration, labelled with its title for as long as the
    // configuration stays the preset's. The first change of any field (other than the label)
    // clears that label, so that a changed run is not stored under the preset's name; typing
    // a label of one's own keeps it.
    void applyPreset(const QJsonObject& config, const QString& title, QStringList* notes = nullptr);
    // state() plus where its label came from, for the next session; restoreState() reads it
    // back (a plain state() is read too).
    QJsonObject savedState() const;
    void restoreState(const QJsonObject& saved);

protected:
    void showEvent(QShowEvent* e) override;
    // The lab's own checks: what this machine offers (options disabled with the reason), and
    // the fields' validation, which ends in showProblems().
    virtual void updateAvailability() = 0;
    virtual void revalidate() = 0;

    // The summary line and the problems below it, at the top of the panel.
    void addStatusLabels(QVBoxLayout* layout);
    // The device chooser every lab has: cpu, then each GPU; without one, "cuda" disabled with
    // the reason in its tooltip.
    QComboBox* makeDeviceCombo(QWidget* parent);
    // Names the fields (object names) and keeps their tooltips, to flag them later.
    void registerFields(const QHash<QString, QWidget*>& fields);
    // Ctrl+Enter in any field asks for Run.
    void installRunShortcut();
    // The run's label field, which a preset fills (see applyPreset).
    void setLabelField(QLineEdit* label);
    // Flags every field with its messages, collects problems() (fields first, in registration
    // order, then `general`) and shows them with the summary. Emits nothing.
    void showProblems(const QHash<QWidget*, QStringList>& byField, const QStringList& general);
    // Marks a field invalid (red frame, the messages in its tooltip above `base_tooltip`) or
    // valid again (no frame, `base_tooltip` alone).
    static void flagField(QWidget* w, const QStringList& messages, const QString& base_tooltip);

    Capabilities caps_;
    bool capsKnown_ = false;
    bool updating_ = false;  // set while the panel changes its own fields
    QStringList problems_;
    QComboBox* device_ = nullptr;

Q_SIGNALS:
    // Any field changed; `problems()` may have changed too.
    void changed();
    // Ctrl+Enter in a field.
    void runRequested();

private:
    QJsonObject configWithoutLabel() const;
    void forgetPresetOnChange();

    QLineEdit* label_ = nullptr;
    QString presetTitle_;       // the label a preset set; empty once the configuration changed
    QJsonObject presetConfig_;  // the configuration it labels
    bool applyingPreset_ = false;
    QObject* wheelGuard_ = nullptr;
    QHash<QString, QWidget*> fields_;
    QHash<QWidget*, QString> baseTooltips_;
    QLabel* summary_ = nullptr;
    QLabel* problemsLabel_ = nullptr;
};

}  // namespace ts::ui
