// The memory lab's panel: one benchmark point (whose code: TrainScope's model or the user's;
// size, context, batch, precision, attention, mode, device), warm-up and recorded steps, and the
// OOM frontier to search (none, context, batch). Its results go to its own view (MemoryView).
#pragma once

#include <memory>

#include "memory/memory.h"
#include "ui/common/dimensionfields.h"
#include "ui/common/labpanel.h"

class QComboBox;
namespace ts::ui {
class CodeChoice;
}
class QLineEdit;
class QSpinBox;

namespace ts::ui {

class MemoryPanel : public LabPanel {
    Q_OBJECT
public:
    // A stored run's spec JSON as one line for History, and as this panel's state.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit MemoryPanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;
    QString summary() const override;
    QJsonObject state() const override;
    void setState(const QJsonObject& state, QStringList* notes = nullptr) override;

    MemorySpec spec() const { return spec_; }

private:
    void build();
    void revalidate() override;
    void updateAvailability() override;

    QLineEdit* label_;
    CodeChoice* code_;  // TrainScope's model or the user's code (one of them: one point)
    QComboBox *size_, *precision_, *attention_, *mode_, *frontier_;
    QSpinBox *context_, *batch_, *warmup_, *steps_;
    // The point's dimensions without a field of their own here (checkpointing): one value each.
    std::unique_ptr<DimensionFields> dims_;
    MemorySpec spec_;
};

}  // namespace ts::ui
