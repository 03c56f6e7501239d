// The end-to-end benchmark's panel: model sizes (presets and custom dimensions), context
// lengths, batch sizes, modes, precisions, attention backends, device, parallel strategy,
// warm-up and measured steps. Lists of values make a sweep. Options this machine cannot run
// are disabled with the engine's reason as tooltip; invalid values are flagged in place.
#pragma once

#include <QHash>
#include <QMap>
#include <QPointer>
#include <memory>

#include "benchmark/benchmark.h"
#include "ui/common/dimensionfields.h"
#include "ui/common/labpanel.h"
#include "ui/common/pointform.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QGroupBox;

namespace ts::ui {

class BenchPanel : public LabPanel {
    Q_OBJECT
public:
    // A stored run's spec JSON (what makeJob's spec_json holds) as one line for History, and
    // as this panel's state (label left out) that asks for the same run again.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit BenchPanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;

    // The points the current fields expand to (empty when a field does not parse).
    std::vector<PointConfig> points() const { return points_; }

private:
    QString runSummary() const override;
    void revalidate() override;
    void updateAvailability() override;
    void stateLoaded(const QJsonObject& state, QStringList* notes) override;
    QList<QWidget*> widgetsForMessage(const QString& message) const;
    PointConfig baseConfig() const;
    QString sizeId(int row) const;  // "tiny", ..., "custom"
    QStringList checkedSizes() const;

    QListWidget* sizes_;
    CustomModelFields custom_;
    QLineEdit *context_, *batch_, *warmup_;
    QSpinBox* steps_;
    QMap<Mode, QCheckBox*> modes_;
    QMap<Precision, QCheckBox*> precisions_;
    QMap<AttentionImpl, QCheckBox*> attentions_;
    QMap<ExecMode, QCheckBox*> execs_;
    CodeChoice* code_;  // TrainScope's model, the user's code, or both (a sweep dimension)
    QComboBox* strategy_;
    QGroupBox *modeBox_, *precisionBox_, *attentionBox_, *execModeBox_, *compileModeBox_;
    // The point's dimensions without a field of their own here (checkpointing, and any added
    // later): a line each, a comma list sweeps it.
    std::unique_ptr<DimensionFields> dims_;

    std::vector<PointConfig> points_;
    std::vector<int64_t> batches_;
    SweepSpec spec_;
};

}  // namespace ts::ui
