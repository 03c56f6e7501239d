// The precision lab's panel: one of three experiments (the accumulation of a small addend in
// low precision, the autocast inspector, training numerics with loss scaling) with the fields
// its engine spec takes, checked by the engine's own validation. Its results go to
// PrecisionView.
#pragma once

#include <QMap>

#include "precision/precision.h"
#include "ui/common/labpanel.h"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLineEdit;
class QSpinBox;
class QStackedWidget;

namespace ts::ui {

class PrecisionPanel : public LabPanel {
    Q_OBJECT
public:
    enum class Study { Accumulate, Autocast, Train };
    static QString studyKey(Study s);  // "accumulate", "autocast", "train"

    // A stored run's spec JSON as one line for History, and as this panel's state.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit PrecisionPanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;

    Study study() const;
    // The specs the fields make (valid only when problems() is empty).
    const AccumulationSpec& accumulationSpec() const { return accumulation_; }
    const AutocastSpec& autocastSpec() const { return autocast_; }
    const TrainNumericsSpec& trainSpec() const { return train_; }

private:
    QString runSummary() const override;
    void revalidate() override;
    void updateAvailability() override;
    void stateLoaded(const QJsonObject& state, QStringList* notes) override;

    QComboBox* study_;
    QStackedWidget* pages_;
    QLineEdit *addend_, *count_, *lr_, *initScale_, *steps_;
    QCheckBox *accFp16_, *accBf16_, *checkTorch_;
    QComboBox *model_, *castDtype_;
    QSpinBox *inFeatures_, *outFeatures_, *batch_, *context_, *trainBatch_;
    QMap<Precision, QCheckBox*> trainPrecisions_;
    QGroupBox *accFormats_, *trainPrecisionBox_;

    AccumulationSpec accumulation_;
    AutocastSpec autocast_;
    TrainNumericsSpec train_;
};

}  // namespace ts::ui
