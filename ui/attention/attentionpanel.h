// The attention benchmark's panel: implementations, sequence lengths, head dims, dtypes,
// causal or not, batch and head counts, passes, warm-up and steps, device; the course's two
// set-ups as presets. Its cells go to its own view (AttentionView).
#pragma once

#include <QHash>
#include <QMap>

#include "attention/attention_lab.h"
#include "ui/common/labpanel.h"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ts::ui {

class AttentionPanel : public LabPanel {
    Q_OBJECT
public:
    // A stored run's spec JSON (what makeJob's spec_json holds) as one line for History, and
    // as this panel's state (label left out) that asks for the same run again.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit AttentionPanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;

    // The spec the fields make (valid only when problems() is empty).
    AttentionBenchSpec spec() const { return spec_; }
    int cellCount() const { return cells_; }

private:
    void applyPreset(const QString& name);
    QString runSummary() const override;
    void revalidate() override;
    void updateAvailability() override;
    void stateLoaded(const QJsonObject& state, QStringList* notes) override;

    QComboBox* preset_;
    QLineEdit *seq_, *headDims_, *batches_, *heads_;
    QMap<AttentionImpl, QCheckBox*> impls_;
    QMap<Precision, QCheckBox*> dtypes_;
    QCheckBox *causal_, *full_, *check_;
    QCheckBox* compiled_;  // torch.compile of the naive attention, in Python
    CodeChoice* code_;     // the user's attention (see Note [attention in Python])
    QMap<AttentionPass, QCheckBox*> passes_;
    QSpinBox *warmup_, *steps_;
    QGroupBox *implBox_, *dtypeBox_, *causalBox_, *passBox_;

    AttentionBenchSpec spec_;
    int cells_ = 0;
};

}  // namespace ts::ui
