// The benchmark lab's results: Steps (one point's chart over every step's table), Sweep,
// Speedup, Results, Memory and Compare. It owns the run document (the item models), the
// replayer and the comparison; live runs, stored runs and replays all fill the same models.
#pragma once

#include "benchmark/comparemodel.h"
#include "benchmark/replayer.h"
#include "benchmark/rundocument.h"
#include "common/labview.h"

class QCheckBox;
class QComboBox;

namespace ts::ui {

class CompareWidget;
class DataTableView;
class MemoryChart;
class StepChart;
class SweepChart;

class BenchView : public LabView {
    Q_OBJECT
public:
    explicit BenchView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    QString replayUnavailable() const override { return {}; }
    void replay(const StoredRun& run, double speed) override;
    bool isReplaying() const override { return replayer_.isActive(); }
    void stopReplay() override { replayer_.stop(); }
    bool compare(const StoredRun& a, const StoredRun& b, QString* error) override;
    void applyPresetView(const QJsonObject& view) override;
    ExportContext exportContext(int pane) const override;
    QList<ReportPart> reportParts() const override;
    QString runTitle() const override { return doc_.title(); }
    qint64 storeRunId() const override { return doc_.storeRunId(); }

    RunDocument* document() { return &doc_; }
    CompareModel* compareModel() { return &compare_; }
    StepChart* stepChart() const { return stepChart_; }
    SweepChart* sweepChart() const { return sweepChart_; }
    MemoryChart* memoryChart() const { return memoryChart_; }
    DataTableView* resultTable() const { return resultTable_; }
    DataTableView* speedupTable() const { return speedupTable_; }
    DataTableView* stepTable() const { return stepTable_; }

private:
    void connectReplayer();
    void refillPointCombo();
    void refillSpeedupControls();
    ExportContext compareContext() const;

    RunDocument doc_;
    Replayer replayer_;
    CompareModel compare_;
    int comparePane_ = -1;

    StepChart* stepChart_ = nullptr;
    QComboBox* pointCombo_ = nullptr;
    DataTableView* stepTable_ = nullptr;
    SweepChart* sweepChart_ = nullptr;
    QComboBox* sweepX_ = nullptr;
    QComboBox* sweepMetric_ = nullptr;
    QCheckBox* sweepLogY_ = nullptr;
    DataTableView* speedupTable_ = nullptr;
    QComboBox* speedupDim_ = nullptr;
    QComboBox* speedupBaseline_ = nullptr;
    QComboBox* speedupMetric_ = nullptr;
    DataTableView* resultTable_ = nullptr;
    MemoryChart* memoryChart_ = nullptr;
    CompareWidget* compareWidget_ = nullptr;
};

}  // namespace ts::ui
