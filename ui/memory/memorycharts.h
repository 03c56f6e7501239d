// The memory lab's charts, with QCustomPlot (a million trace events stay smooth: adaptive
// sampling): the active-memory timeline (allocated, reserved and the driver's used memory
// against the trace's events, phase bands behind, one allocation's lifetime highlighted on
// request), the categories stacked over the same events, and the OOM frontier's probes.
// Each only views a MemoryResult; none holds LibTorch.
#pragma once

#include <QWidget>

#include "memory/memory.h"
#include "ui/common/qcpchart.h"

class QCustomPlot;
class QCPAbstractItem;
class QCPItemRect;
class QCPItemText;

namespace ts::ui {

class MemoryTimelineChart : public QcpChart {
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

class MemoryCategoryChart : public QcpChart {
    Q_OBJECT
public:
    explicit MemoryCategoryChart(QWidget* parent = nullptr);
    void setResult(const MemoryResult& r, const MemoryAnalysis& a);
};

// Two runs phase by phase: for each phase's highest moment (and the step's peak) a bar for A
// and one for B, stacked by category.
class MemoryCompareChart : public QcpChart {
    Q_OBJECT
public:
    explicit MemoryCompareChart(QWidget* parent = nullptr);
    void setComparison(const std::vector<PhaseComparisonRow>& rows);
    void clear(const QString& note);
    // The bars' stacked value for run `b` (0: A, 1: B) at phase slot `slot`, for tests.
    double barTotal(int slot, int b) const;
};

class FrontierChart : public QcpChart {
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
