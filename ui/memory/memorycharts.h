// The memory lab's charts, with QCustomPlot (a million trace events stay smooth: adaptive
// sampling): the active-memory timeline (allocated, reserved and the driver's used memory
// against the trace's events, phase bands behind, one allocation's lifetime highlighted on
// request), the categories stacked over the same events, and the OOM frontier's probes.
// Each only views a MemoryResult; none holds LibTorch.
#pragma once

#include <QWidget>

#include "common/chartstyle.h"
#include "common/exporter.h"
#include "memory/memory.h"

class QCustomPlot;
class QCPAbstractItem;
class QCPItemRect;
class QCPItemText;

namespace ts::ui {

// What the three charts share: the plot, its title, the export hooks, the context menu.
class MemoryPlot : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    MemoryPlot(const QString& title, const QString& stem, QWidget* parent);
    QString chartTitle() const override { return title_; }
    QString chartFileStem() const override { return stem_; }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }
    QCustomPlot* plot() const { return plot_; }
    // The graphs' data points (all graphs together), for tests.
    int plottedPoints() const;

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

protected:
    void restyle();
    void showNote(const QString& text);  // centred over an empty chart; empty text hides it

    QCustomPlot* plot_;
    ChartStyle style_;

private:
    QString title_, stem_;
    QCPItemText* note_;
};

class MemoryTimelineChart : public MemoryPlot {
    Q_OBJECT
public:
    explicit MemoryTimelineChart(QWidget* parent = nullptr);
    void setResult(const MemoryResult& r, const MemoryAnalysis& a);
    // Highlights allocation `index` of the analysis (its lifetime); -1 clears.
    void highlight(int index);
    int highlighted() const { return highlighted_; }
    int bandCount() const { return static_cast<int>(bands_.size()); }

private:
    const MemoryAnalysis* analysis_ = nullptr;
    const MemoryResult* result_ = nullptr;
    std::vector<QCPItemRect*> bands_;
    std::vector<QCPAbstractItem*> failures_;  // a line and a label at each out-of-memory
    QCPItemRect* lifetime_;
    QCPItemText* lifetimeText_;
    int highlighted_ = -1;
};

class MemoryCategoryChart : public MemoryPlot {
    Q_OBJECT
public:
    explicit MemoryCategoryChart(QWidget* parent = nullptr);
    void setResult(const MemoryResult& r, const MemoryAnalysis& a);
};

// Two runs phase by phase: for each phase's highest moment (and the step's peak) a bar for A
// and one for B, stacked by category.
class MemoryCompareChart : public MemoryPlot {
    Q_OBJECT
public:
    explicit MemoryCompareChart(QWidget* parent = nullptr);
    void setComparison(const std::vector<PhaseComparisonRow>& rows);
    void clear(const QString& note);
    // The bars' stacked value for run `b` (0: A, 1: B) at phase slot `slot`, for tests.
    double barTotal(int slot, int b) const;
};

class FrontierChart : public MemoryPlot {
    Q_OBJECT
public:
    explicit FrontierChart(QWidget* parent = nullptr);
    void setResult(const MemoryResult& r);

private:
    std::vector<QCPAbstractItem*> marks_;  // the largest-fit line and its label
};

// Points of a timeline thinned to at most `max` while keeping each bucket's largest
// allocated value (the peak is never lost); all of them when there are fewer.
std::vector<size_t> thinTimeline(const std::vector<TimelinePoint>& points, size_t max);

}  // namespace ts::ui
