// The planner lab's panel: C, W, the batch, the model's dimensions (or a preset), the degrees
// and the bytes per element, checked by the engine's own validation. Compute plans from the
// fields alone (no GPU needed); Measure first measures this machine's C and W in the worker.
#pragma once

#include "planner/planner.h"
#include "ui/common/labpanel.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace ts::ui {

class PlannerPanel : public LabPanel {
    Q_OBJECT
public:
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit PlannerPanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;

    // The inputs the fields make (valid only when problems() is empty; C and W are stand-ins
    // of 0 while Measure fills them).
    const PlannerInputs& inputs() const { return inputs_; }
    bool measures() const;
    QPushButton* computeButton() const { return compute_; }
    QPushButton* measureButton() const { return measureButton_; }

private:
    QString runSummary() const override;
    void revalidate() override;
    void updateAvailability() override;
    void request(bool measure);

    QLineEdit *flops_, *bandwidth_, *batch_, *commBytes_, *paramBytes_, *gradBytes_, *optBytes_;
    QComboBox* model_;
    QSpinBox *dModel_, *dFf_, *layers_, *context_, *dp_, *tp_;
    QCheckBox *overlap_, *measure_;
    QPushButton *compute_, *measureButton_;
    PlannerInputs inputs_;
};

}  // namespace ts::ui
