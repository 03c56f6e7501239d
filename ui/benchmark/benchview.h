// The benchmark lab's results: Steps (one point's chart, or every point overlaid, over every
// step's table), Sweep, Speedup (table and bars), Breakdown (forward / backward / optimizer
// per point), Results, Memory and Compare (two runs' bars above their table). It owns the run
// document (the item models), the replayer and the comparison; live runs, stored runs and replays
// all fill the same models.
#pragma once

#include <memory>
#include <vector>

#include "ui/benchmark/comparemodel.h"
#include "ui/benchmark/replayer.h"
#include "ui/benchmark/rundocument.h"
#include "ui/common/labview.h"

class QAction;
class QCheckBox;
class QComboBox;

namespace ts::ui {

class BreakdownChart;
class CompareChart;
class CompareWidget;
class SpeedupChart;
class StepChartAtPoint;
class DataTableView;
class MemoryChart;
class StepChart;
class SweepChart;

class BenchView : public LabView {
    Q_OBJECT
public:
    explicit BenchView(QWidget* parent = nullptr);
    ~BenchView() override;

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    // What History's Overlay Selected draws of a stored run (ui/common/overlay.h).
    static RunOverlay overlayOf(const StoredRun& run);
    QString replayUnavailable() const override { return {}; }
    QString compareUnavailable() const override { return {}; }
    void replay(const StoredRun& run, double speed) override;
    bool isReplaying() const override { return replayer_.isActive(); }
    void stopReplay() override { replayer_.stop(); }
    bool compare(const StoredRun& a, const StoredRun& b, QString* error) override;
    void applyPresetView(const QJsonObject& view) override;
    ExportContext exportContext(int pane) const override;
    QList<ReportPart> reportParts() const override;
    // While the Compare pane shows a comparison, the title and export names are the
    // comparison's; the other panes still show (and name) the run.
    QString runTitle() const override;
    qint64 storeRunId() const override;
    bool showsComparison() const;

    RunDocument* document() { return &doc_; }
    CompareModel* compareModel() { return &compare_; }
    CompareChart* compareChart() const;
    StepChart* stepChart() const { return stepChart_; }
    SweepChart* sweepChart() const { return sweepChart_; }
    MemoryChart* memoryChart() const { return memoryChart_; }
    BreakdownChart* breakdownChart() const { return breakdownChart_; }
    SpeedupChart* speedupChart() const { return speedupChart_; }
    QCheckBox* overlayCheck() const { return overlay_; }
    QCheckBox* logTimeCheck() const { return sweepLogY_; }
    QComboBox* sweepXCombo() const { return sweepX_; }
    DataTableView* resultTable() const { return resultTable_; }
    DataTableView* speedupTable() const { return speedupTable_; }
    DataTableView* stepTable() const { return stepTable_; }
    // Asks the window to profile point `row` of the results (openPointInLab); false when there is
    // no such point.
    bool profilePoint(int row);
    QAction* profilePointAction() const { return profileAct_; }
    // The same for the sweep's point nearest to `chartPos` (the sweep chart's coordinates),
    // as its context menu's "Profile This Point" does; false when no point is near.
    bool profileSweepPointAt(const QPointF& chartPos);

private:
    void connectReplayer();
    void refillPointCombo();
    void refillSpeedupControls();
    void resetViewSettings();
    void endComparison();
    ExportContext compareContext() const;

    RunDocument doc_;
    Replayer replayer_;
    CompareModel compare_;
    int comparePane_ = -1;
    bool comparing_ = false;
    mutable std::vector<std::unique_ptr<StepChartAtPoint>> pointCharts_;  // the report's

    StepChart* stepChart_ = nullptr;
    QComboBox* pointCombo_ = nullptr;
    QCheckBox* overlay_ = nullptr;
    DataTableView* stepTable_ = nullptr;
    SweepChart* sweepChart_ = nullptr;
    QComboBox* sweepX_ = nullptr;
    QComboBox* sweepMetric_ = nullptr;
    QCheckBox* sweepLogY_ = nullptr;
    DataTableView* speedupTable_ = nullptr;
    SpeedupChart* speedupChart_ = nullptr;
    BreakdownChart* breakdownChart_ = nullptr;
    QComboBox* speedupDim_ = nullptr;
    QComboBox* speedupBaseline_ = nullptr;
    QComboBox* speedupMetric_ = nullptr;
    DataTableView* resultTable_ = nullptr;
    QAction* profileAct_ = nullptr;
    MemoryChart* memoryChart_ = nullptr;
    CompareWidget* compareWidget_ = nullptr;
};

}  // namespace ts::ui
