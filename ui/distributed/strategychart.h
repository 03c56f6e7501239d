// The DDP strategies compared as a chart (QCustomPlot): one stacked bar per point, its step
// split into compute, exposed communication and optimizer (the mean over the measured steps),
// the whole step's mean ± std as an error bar on top, each rank's memory (its peak, or its
// tensors on the CPU) as a marker on a second axis, and the run's one-GPU step as a dashed
// line over each bar of the same work (see Note [a strategy's step against one GPU]). Hovering
// a bar shows the point's values. Views strategyBars() (strategysummary.h).
#pragma once

#include <QStringList>
#include <vector>

#include "ui/common/qcpchart.h"
#include "ui/distributed/strategysummary.h"

class QCPBars;
class QCPErrorBars;
class QCPGraph;
class QCPItemText;

namespace ts::ui {

class StrategyChart : public QcpChart {
    Q_OBJECT
public:
    enum Segment { Compute, Communication, Optimizer, Other, SegmentCount };
    explicit StrategyChart(QWidget* parent = nullptr);
    void setBars(const std::vector<StrategyBar>& bars);

    // What is drawn, for tests: one entry per bar, in order, read back from the plot's data.
    int barCount() const { return static_cast<int>(bars_.size()); }
    QStringList categories() const;
    QList<double> segment(Segment s) const;             // ms; 0 for a point without measured steps
    QList<double> stepMeans() const;                    // the error bars' centres (ms)
    QList<double> stepErrors() const;                   // their half heights: the step's std (ms)
    QList<double> memory() const;                       // the markers, in the memory axis's unit
    QString memoryUnit() const { return memoryUnit_; }  // "MiB", "GiB"
    // The one-GPU line over each bar (ms); negative where the bar has none.
    QList<double> baselines() const;
    // What the chart shows and what it cannot (a sentence or two, under the chart).
    QString explanation() const { return explanation_; }
    // The point under the pointer: its step, its parts, the overhead over one GPU, its memory.
    QString hoverText(const QPointF& pos) const override;
    QString barText(int i) const;

private:
    std::vector<StrategyBar> bars_;
    QCPBars* segments_[SegmentCount];
    QCPGraph* step_;
    QCPErrorBars* errors_;
    QCPGraph* baseline_;
    QCPGraph* memory_;
    std::vector<QCPItemText*> notes_;  // "failed on rank 1" over a point without bars
    QString memoryUnit_ = QStringLiteral("MiB");
    double memoryScale_ = 1024.0 * 1024.0;
    QString explanation_;
};

}  // namespace ts::ui
