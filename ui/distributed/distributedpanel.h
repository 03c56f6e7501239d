// The distributed lab's panel: the backend (gloo, or nccl with a GPU a rank), the world size,
// the experiment (the all-reduce benchmark, DDP, or DDP with and without a sharded optimizer)
// and its fields: sizes, dtypes, iterations for the all-reduce (optionally at every even world
// size up to the chosen one, a point each); model, context, batch per rank,
// precisions, strategies, bucket sizes, sharding, steps for DDP. Run launches the ranks as
// trainscope-cli workers (runDistributed); its results go to DistributedView.
#pragma once

#include <QMap>

#include "distributed/distributed.h"
#include "ui/common/labpanel.h"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLineEdit;
class QSpinBox;

namespace ts::ui {

class DistributedPanel : public LabPanel {
    Q_OBJECT
public:
    // A stored run's spec JSON as one line for History, and as this panel's state.
    static QString describeSpec(const QJsonObject& spec);
    static QJsonObject stateFromSpec(const QJsonObject& spec);
    explicit DistributedPanel(QWidget* parent = nullptr);

    std::optional<LabJob> makeJob() const override;

    // The spec Run would start (valid or not).
    const DistributedSpec& spec() const { return spec_; }
    // The workers' executable: TRAINSCOPE_WORKER when set, else trainscope-cli beside this
    // program; a test sets its own.
    QString workerPath() const;
    void setWorkerPath(const QString& path) { workerPath_ = path; }
    // GPUs the capability probe found (the NCCL world's limit).
    int gpuCount() const;

private:
    QString runSummary() const override;
    void revalidate() override;
    void updateAvailability() override;
    QString experiment() const;

    QLineEdit *sizes_, *buckets_;
    QComboBox *backend_, *experiment_, *model_, *sharding_, *paramDtype_, *checkpoint_,
        *attention_ = nullptr, *exec_ = nullptr;
    QSpinBox *prefetch_ = nullptr, *vocab_ = nullptr;
    QCheckBox *fusedLoss_ = nullptr, *fusedKernels_ = nullptr, *keepAttention_ = nullptr,
              *compile_ = nullptr;
    QSpinBox *world_, *arWarmup_, *arIters_, *context_, *batch_, *warmup_, *steps_;
    QGroupBox *allreduceBox_, *ddpBox_, *dtypeRow_, *precisionRow_, *strategyRow_;
    QCheckBox* arSweepWorld_;
    CodeChoice* code_ = nullptr;  // the user's DDP classes (see Note [your DDP classes])
    DistributedSpec spec_;
    QString workerPath_;
};

}  // namespace ts::ui
