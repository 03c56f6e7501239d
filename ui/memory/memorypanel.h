// The memory lab's panel: one benchmark point (whose code: TrainScope's model or the user's;
// size, context, batch, precision, attention, mode, device), warm-up and recorded steps, and the
// OOM frontier to search (none, context, batch). Its results go to its own view (MemoryView).
#pragma once

#include <memory>

#include "memory/memory.h"
#include "ui/common/labpanel.h"
#include "ui/common/pointform.h"

class QComboBox;
class QSpinBox;

namespace ts::ui {

class MemoryPanel : public LabPanel {
    Q_OBJECT
public:
    // A stored run's spec JSON as one line for History, and as this panel's state.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit MemoryPanel(QWidget* parent = nullptr);
    ~MemoryPanel() override;

    std::optional<LabJob> makeJob() const override;

    MemorySpec spec() const { return spec_; }

private:
    QString runSummary() const override;
    void revalidate() override;
    // Precisions and attentions this machine cannot run are named by revalidate()'s problems
    // (checkPointRunnable), which keeps every choice visible.
    void updateAvailability() override {}

    CodeChoice* code_;  // TrainScope's model or the user's code (one of them: one point)
    // The point, with its other dimensions (checkpointing): one value each.
    std::unique_ptr<PointForm> point_;
    QComboBox* frontier_;
    QSpinBox *warmup_, *steps_;
    MemorySpec spec_;
};

}  // namespace ts::ui
