// The memory lab's results: the active-memory timeline with phase bands, the categories
// stacked, the largest allocations (select one: its lifetime lights up on the timeline), the
// peak by category against the analytic model with the peak table over the run's points, and
// the OOM frontier. A run of several points shows one at a time (the point chooser).
#pragma once

#include <vector>

#include "common/labview.h"
#include "memory/memory.h"

class QComboBox;
class QLabel;
class QStandardItemModel;

Q_DECLARE_METATYPE(ts::MemoryResult)

namespace ts::ui {

class MemoryTimelineChart;
class MemoryCategoryChart;
class FrontierChart;

class MemoryView : public LabView {
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    ExportContext exportContext(int pane) const override;
    QList<ReportPart> reportParts() const override;
    QString runTitle() const override;
    qint64 storeRunId() const override { return storeRunId_; }

    // Shows point `index` of the run (0-based).
    void showPoint(int index);
    int pointCount() const { return static_cast<int>(results_.size()); }
    const MemoryAnalysis& analysis() const { return analysis_; }
    MemoryTimelineChart* timeline() const { return timeline_; }
    MemoryCategoryChart* categories() const { return categories_; }
    FrontierChart* frontier() const { return frontier_; }
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

    std::vector<MemoryResult> results_;
    int shown_ = -1;
    MemoryAnalysis analysis_;
    MemoryTimelineChart* timeline_;
    MemoryCategoryChart* categories_;
    FrontierChart* frontier_;
    QStandardItemModel *allocations_, *peak_, *points_;
    DataTableView *allocationTable_, *peakTable_, *pointTable_;
    QComboBox* point_;
    QLabel *peakText_, *timelineText_;
    QString label_;
    qint64 storeRunId_ = 0;
    Environment env_;
    QString configuration_, configurationJson_;
};

}  // namespace ts::ui
