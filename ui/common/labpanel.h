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
#include "ui/common/codechoice.h"
#include "ui/common/format.h"
#include "ui/common/runcontroller.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QVBoxLayout;

namespace ts::ui {

class DimensionFields;
class PointForm;

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
    // One line for the status bar: "6 points: ...", or how many problems block Run.
    QString summary() const;
    // Every field, to restore the last configuration and to load classroom presets: each
    // registered field under its key (see Field).
    QJsonObject state() const;
    // Reads the fields the state names (the others keep their values); values the machine
    // cannot run are dropped, and `notes` says which and why.
    void setState(const QJsonObject& state, QStringList* notes = nullptr);

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
    friend class PointForm;
    // One field of the panel, declared once (see Note [declared fields]): its widget, named by
    // the last part of `key`, and how state() writes it and setState() reads it back.
    struct Field {
        QString key;  // the state's key; "custom/vocab" nests it in "custom"
        QWidget* widget = nullptr;
        std::function<void(QJsonObject&)> save;
        std::function<void(const QJsonObject&, QStringList* notes)> load;
        // Read after updateAvailability(): what it may hold depends on fields read before it.
        bool late = false;
    };
    // What a combo or a row of check boxes offers: its text, its state word, its tooltip.
    struct Choice {
        QString text, data, tip;
    };
    template <typename Values>
    static QList<Choice> choicesOf(const Values& values) {
        QList<Choice> out;
        for (auto v : values) out.push_back({qstr(toString(v)), qstr(toString(v)), {}});
        return out;
    }

    // The field makers: each makes its widget (in `form` under `label`, unless null), names it,
    // sets its tooltip and value, revalidates the panel when it changes and registers its state.
    Field& addField(Field f);
    Field& field(const QString& key);  // a registered field (it must be there)
    // The run's label, which a preset fills (see applyPreset), in a form at the top: the form,
    // for the lab's rows beside it.
    QFormLayout* addLabelRow(QVBoxLayout* outer, const QString& placeholder);
    QLineEdit* addText(QFormLayout* form, const QString& key, const QString& label,
                       const QString& value, const QString& tip = {});
    QSpinBox* addSpin(QFormLayout* form, const QString& key, const QString& label, int lo, int hi,
                      int value, const QString& tip = {});
    QComboBox* addCombo(QFormLayout* form, const QString& key, const QString& label,
                        const QList<Choice>& choices, const QString& value,
                        const QString& tip = {});
    QCheckBox* addCheck(QFormLayout* form, const QString& key, const QString& text, bool value,
                        const QString& tip = {});
    // A row of check boxes (`perRow` a line, 0: one line); its state is the ticked data.
    QGroupBox* addChecks(QFormLayout* form, const QString& key, const QString& label,
                         const QList<Choice>& choices, const QStringList& ticked, int perRow = 0);
    QCheckBox* checkBox(const QString& key, const QString& data) const;
    QStringList ticked(const QString& key) const;
    // The device chooser every lab has (see makeDeviceCombo), as the field "device".
    QComboBox* addDevice(QFormLayout* form, const QString& label);
    // Whose code runs (fields "sources", "code", "python").
    CodeChoice* addCode(QVBoxLayout* outer, bool both,
                        CodeChoice::Purpose purpose = CodeChoice::Purpose::Model);
    // The point's other dimensions (ui/common/dimensionfields.h), a field each by its key.
    void addDimensions(const DimensionFields& dims);
    QString labelText() const;
    // The values of `key` the state asked for that are no longer ticked (the machine cannot
    // run them), each "fp16 left out: why" with the box's tooltip (after its first line when
    // `afterHint`: the box's hint, then the reason).
    QStringList leftOut(const QJsonObject& state, const QString& key, bool afterHint) const;
    // After setState() read the fields: the lab's own defaults and notes.
    virtual void stateLoaded(const QJsonObject& state, QStringList* notes);
    // What Run will do, in one line (summary() says the problems instead while there are any).
    virtual QString runSummary() const = 0;
    // A job of lab `lab` on `device` with the panel's label; the lab sets its spec and run.
    LabJob newJob(const char* lab, const std::string& device, int points) const;
    // A field changed: what the machine allows, then the problems (not while the panel sets
    // its own fields).
    void fieldChanged();

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
    std::vector<Field> registry_;
    QHash<QString, QList<QPair<QString, QCheckBox*>>> checkRows_;  // in the row's order
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
