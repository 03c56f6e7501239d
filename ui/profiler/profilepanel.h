// The profiler lab's panel: one benchmark point (model size, context, batch, mode,
// precision, attention, device, warm-up) and how many steps run under the profiler. Options
// this machine cannot run are disabled with the engine's reason; invalid values are flagged.
#pragma once

#include <QHash>

#include "profiler/profiler.h"
#include "ui/common/labpanel.h"

class QComboBox;
class QGroupBox;
class QLineEdit;
class QSpinBox;

namespace ts::ui {

class CodeChoice;

class ProfilePanel : public LabPanel {
    Q_OBJECT
public:
    // A stored run's spec JSON (profileSpecJson) as one line for History, and as this panel's
    // state that asks for the same profile again.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    // A training point handed over by another lab (LabEntry::stateFromPoint): profiled with
    // the panel's own number of profiled steps.
    static QJsonObject stateFromPoint(const QJsonObject& point);
    explicit ProfilePanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;
    QString summary() const override;
    QJsonObject state() const override;
    void setState(const QJsonObject& state, QStringList* notes = nullptr) override;

    // The profile the fields make (valid only when problems() is empty).
    ProfileSpec spec() const { return spec_; }

private:
    void build();
    void revalidate() override;
    void updateAvailability() override;
    QWidget* fieldForMessage(const QString& message) const;

    QLineEdit* label_;
    QComboBox *size_, *mode_, *precision_, *attention_;
    QSpinBox *vocab_, *dModel_, *dFf_, *layers_, *heads_;
    QSpinBox *context_, *batch_, *warmup_, *steps_;
    QGroupBox* customBox_;
    CodeChoice* code_;  // TrainScope's model or the user's code (one of them: one point)
    ProfileSpec spec_;
};

}  // namespace ts::ui
