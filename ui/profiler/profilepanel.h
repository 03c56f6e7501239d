// The profiler lab's panel: one benchmark point (model size, context, batch, mode,
// precision, attention, device, warm-up) and how many steps run under the profiler. Options
// this machine cannot run are disabled with the engine's reason; invalid values are flagged.
#pragma once

#include <memory>

#include "profiler/profiler.h"
#include "ui/common/labpanel.h"
#include "ui/common/pointform.h"

class QCheckBox;
class QSpinBox;

namespace ts::ui {

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
    ~ProfilePanel() override;

    std::optional<LabJob> makeJob() const override;

    // The profile the fields make (valid only when problems() is empty).
    ProfileSpec spec() const { return spec_; }

private:
    QString runSummary() const override;
    void revalidate() override;
    void updateAvailability() override;

    std::unique_ptr<PointForm> point_;
    QSpinBox *warmup_, *steps_;
    QCheckBox* compiled_;  // the step replayed as CUDA graphs (See Note [a graph's kernels named by
                           // its capture])
    CodeChoice* code_;     // TrainScope's model or the user's code (one of them: one point)
    ProfileSpec spec_;
};

}  // namespace ts::ui
