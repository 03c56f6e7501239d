// The distributed lab's results: the ranks' lanes of a DDP point, live as each rank's steps
// arrive (overlap of communication and backward visible), a red banner naming the rank that
// failed; the all-reduce's bus bandwidth against size with its table; the strategies compared
// (a chart of each DDP point's step split into its parts, with its memory and the one-GPU step,
// above one row per point, from summarizeDdp); the bucket-size model against the bucketed
// points (ddp_buckets.h); each rank's memory, sharded beside unsharded;
// the points with their status and the run's log. A stored run reopens from History.
#pragma once

#include <vector>

#include "distributed/distributed.h"
#include "ui/common/labview.h"
#include "ui/distributed/distributeditems.h"

class QComboBox;
class QLabel;
class QPushButton;
class QPlainTextEdit;
class QStandardItemModel;

Q_DECLARE_METATYPE(ts::DistributedResult)

namespace ts::ui {

class LanesChart;
class AllreduceChart;
class RankMemoryChart;
class StrategyChart;
class BucketModelChart;
class RedrawThrottle;

class DistributedView : public LabView {
    Q_OBJECT
public:
    explicit DistributedView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    // What History's Overlay Selected draws of a stored run (ui/common/overlay.h).
    static RunOverlay overlayOf(const StoredRun& run);
    ExportContext exportContext(int pane) const override;
    QList<ReportPart> reportParts() const override;

    // Shows point `index`'s lanes (0-based); a live run follows its newest point until another
    // is chosen.
    void showPoint(int index);
    int shownPoint() const { return shown_; }
    int pointCount() const { return static_cast<int>(points_.size()); }
    const std::vector<DistributedResult>& results() const { return points_; }
    // Redraws what is pending now (tests; the lanes redraw at most 20 times a second).
    void flush();
    // The shown point's merged trace of every rank (see Note [one trace of every rank]), copied
    // to `path`; false with `error` when the point has none or it cannot be copied.
    bool saveMergedTrace(const QString& path, QString* error) const;

    LanesChart* lanes() const { return lanes_; }
    AllreduceChart* allreduceChart() const { return allreduce_; }
    RankMemoryChart* memoryChart() const { return memory_; }
    StrategyChart* strategyChart() const { return strategyChart_; }
    BucketModelChart* bucketModelChart() const { return bucketChart_; }
    QStandardItemModel* bucketModel() const { return bucketModel_; }
    QLabel* bucketText() const { return bucketText_; }
    QLabel* strategyText() const { return strategyText_; }
    QStandardItemModel* allreduceModel() const { return allreduceModel_; }
    QStandardItemModel* strategyModel() const { return strategies_; }
    QStandardItemModel* memoryModel() const { return memoryModel_; }
    QStandardItemModel* pointModel() const { return pointsModel_; }
    QLabel* banner() const { return banner_; }
    QLabel* lanesText() const { return lanesText_; }
    QPlainTextEdit* logText() const { return log_; }
    QPushButton* traceButton() const { return traceButton_; }

private:
    void begin(const QString& label, const std::string& spec_json);
    DistributedResult& pointAt(int index);
    void addLog(const QString& line);
    void redrawLanes();
    void updateBanner();
    void updateTraceButton();
    void saveMergedTraceInteractive();
    void updateChooser(int index);
    void fillAllreduce();
    void fillStrategies();
    void fillMemory();
    void fillBucketModel();
    void fillPoints();

    std::vector<DistributedResult> points_;
    std::vector<bool> finished_;
    int shown_ = -1;
    bool followLive_ = true;
    LanesChart* lanes_;
    AllreduceChart* allreduce_;
    RankMemoryChart* memory_;
    StrategyChart* strategyChart_;
    BucketModelChart* bucketChart_;
    QStandardItemModel *allreduceModel_, *strategies_, *memoryModel_, *pointsModel_, *bucketModel_;
    DataTableView *allreduceTable_, *strategyTable_, *memoryTable_, *pointTable_, *bucketTable_;
    QComboBox* point_;
    QPushButton* traceButton_;
    QLabel *banner_, *lanesText_, *strategyText_, *bucketText_;
    QPlainTextEdit* log_;
    RedrawThrottle* throttle_;
};

}  // namespace ts::ui
