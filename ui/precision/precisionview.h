// The precision lab's results, one pane per experiment: the accumulation (|running error| per
// sum on a log axis, and the table of final values, errors, ulps, rounding and stall steps),
// the autocast inspector (a tree of modules, ops and gradients with their dtypes tinted), the
// training numerics (loss curves per precision and their difference to fp32) and the fp16
// loss scale (with skipped steps marked, and underflow counts). A run fills the panes of its
// experiment; the others say which experiment would fill them.
#pragma once

#include "precision/precision.h"
#include "ui/common/labview.h"

class QLabel;
class QTreeView;

namespace ts::ui {

class AccumulationModel;
class AutocastTableModel;
class AutocastTreeModel;
class PrecisionChart;
class TrainSummaryModel;

class PrecisionView : public LabView {
    Q_OBJECT
public:
    explicit PrecisionView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    QList<ReportPart> reportParts() const override;

    void clear() { begin({}, {}); }
    // "accumulate", "autocast", "train": the shown run's experiment; empty before any.
    QString study() const { return study_; }
    AccumulationModel* accumulationModel() const { return accumulation_; }
    PrecisionChart* accumulationChart() const { return accChart_; }
    AutocastTreeModel* autocastTree() const { return tree_; }
    AutocastTableModel* autocastTable() const { return castTable_; }
    QTreeView* autocastTreeView() const { return treeView_; }
    TrainSummaryModel* trainModel() const { return train_; }
    PrecisionChart* lossChart() const { return lossChart_; }
    PrecisionChart* lossDiffChart() const { return diffChart_; }
    PrecisionChart* lossScaleChart() const { return scaleChart_; }
    PrecisionChart* underflowChart() const { return underflowChart_; }
    // The note a pane shows while the shown run does not fill it (empty when it does).
    QString emptyNote(const QString& paneKey) const;

private:
    void begin(const QString& label, const std::string& spec_json);
    void addResult(const QVariant& item);
    void refreshAccumulation();
    void refreshAutocast();
    void refreshTraining();
    void refreshNotes();

    AccumulationModel* accumulation_;
    AutocastTableModel* castTable_;
    AutocastTreeModel* tree_;
    TrainSummaryModel* train_;
    PrecisionChart *accChart_, *lossChart_, *diffChart_, *scaleChart_, *underflowChart_;
    QTreeView* treeView_;
    QLabel *accNote_, *castNote_, *trainNote_, *scaleNote_, *castSummary_;
    QString study_;
};

}  // namespace ts::ui
