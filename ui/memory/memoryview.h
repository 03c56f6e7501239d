// The memory lab's results: the active-memory timeline with phase bands, the categories
// stacked, the largest allocations (select one: its lifetime lights up on the timeline), the
// peak by category against the analytic model with the peak table over the run's points, the
// OOM frontier with the allocation that failed (its step can be shown in every pane), and two
// stored runs compared phase by phase. A run of several points shows one at a time (the
// point chooser); Save Snapshot writes the shown trace as the pickle memory_viz reads.
#pragma once

#include <vector>

#include "memory/memory.h"
#include "ui/common/labview.h"

class QComboBox;
class QLabel;
class QPushButton;
class QStandardItemModel;

Q_DECLARE_METATYPE(ts::MemoryResult)

namespace ts::ui {

class MemoryTimelineChart;
class MemoryCategoryChart;
class FrontierChart;
class MemoryCompareChart;

class MemoryView : public LabView {
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    // What History's Overlay Selected draws of a stored run (ui/common/overlay.h).
    static RunOverlay overlayOf(const StoredRun& run);
    QString compareUnavailable() const override { return {}; }
    // A preset's view: "tab", and "failed_step": true to show the next frontier's failed step
    // when it arrives.
    void applyPresetView(const QJsonObject& view) override;
    // Shows run `a` in the panes and both, point 0 of each, in the Compare pane.
    bool compare(const StoredRun& a, const StoredRun& b, QString* error) override;
    // A memory_viz snapshot (See Note [importing a snapshot]): stored, then shown.
    QStringList importPatterns() const override {
        return {QStringLiteral("*.pickle"), QStringLiteral("*.pkl")};
    }
    bool importFile(const QString& path, const QString& storePath, QString* error) override;
    ExportContext exportContext(int pane) const override;
    QList<ReportPart> reportParts() const override;

    // Shows point `index` of the run (0-based).
    void showPoint(int index);
    // Shows the step of point `index`'s frontier that ran out of memory, up to the failure
    // (false when that point has none).
    bool showFailedStep(int index);
    // The shown trace as the snapshot pickle of torch.cuda._memory_viz; false with `error`.
    bool saveSnapshot(const QString& path, QString* error) const;
    // Compares point `a` of the first compared run with point `b` of the second.
    void comparePoints(int a, int b);
    const MemoryResult* shownResult() const;
    int pointCount() const { return static_cast<int>(results_.size()); }
    const MemoryAnalysis& analysis() const { return analysis_; }
    MemoryTimelineChart* timeline() const { return timeline_; }
    MemoryCategoryChart* categories() const { return categories_; }
    FrontierChart* frontier() const { return frontier_; }
    MemoryCompareChart* comparisonChart() const { return compareChart_; }
    QStandardItemModel* comparisonModel() const { return compare_; }
    QLabel* failureText() const { return failureText_; }
    QStandardItemModel* allocationModel() const { return allocations_; }
    QStandardItemModel* peakModel() const { return peak_; }
    QStandardItemModel* pointModel() const { return points_; }
    DataTableView* allocationTable() const { return allocationTable_; }
    // The largest allocations listed (at most this many rows).
    static constexpr int kAllocationRows = 500;

private:
    void begin(const QString& label, const std::string& spec_json);
    void addResult(const MemoryResult& r);
    void fillPointTable();
    void show(const MemoryResult& r, int chooserCode);
    void showPoints(const StoredRun& run, const std::vector<MemoryResult>& results);
    void showFrontierOf(const MemoryResult& r);

    std::vector<MemoryResult> results_;
    // The steps that ran out of memory at each point's frontier (as results of their own),
    // listed in the chooser after the point; code in the chooser: -1 - index here.
    std::vector<MemoryResult> failures_;
    std::vector<int> failureOf_;  // per point: its index in failures_, or -1
    int shown_ = -1;              // the point shown (or whose failed step is shown)
    int shownFailure_ = -1;       // the failed step shown (index in failures_), or -1
    bool failedStepOnArrival_ = false;
    std::vector<MemoryResult> compareA_, compareB_;
    QString compareTitle_;
    MemoryAnalysis analysis_;
    MemoryTimelineChart* timeline_;
    MemoryCategoryChart* categories_;
    FrontierChart* frontier_;
    MemoryCompareChart* compareChart_;
    QStandardItemModel *allocations_, *peak_, *points_, *compare_;
    DataTableView *allocationTable_, *peakTable_, *pointTable_, *compareTable_;
    QComboBox *point_, *compareAPoint_, *compareBPoint_;
    QLabel *peakText_, *timelineText_, *failureText_, *compareText_;
    QPushButton *showFailure_, *saveSnapshot_;
};

}  // namespace ts::ui
