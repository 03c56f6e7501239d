// The distributed lab's charts (QCustomPlot): the ranks' lanes (each step's forward, backward,
// wait for the gradients and optimizer as bars on a time axis, one row a rank, and a thin lane
// under it with the communication: the part hidden behind backward translucent over backward,
// the part waited for solid after it; under that, for bucketed DDP, one bar per bucket's
// all-reduce from its launch to its end), the all-reduce's bus bandwidth against size (log axis, a
// series per world size and dtype), and each rank's memory of a DDP point (parameters,
// gradients, optimizer state, communication buffers, stacked). Each only views value types.
#pragma once

#include <QWidget>
#include <vector>

#include "distributed/distributed.h"
#include "ui/common/qcpchart.h"

class QCustomPlot;
class QCPItemText;

namespace ts::ui {

class SpanPlottable;

class LanesChart : public QcpChart {
    Q_OBJECT
public:
    // GatherWait (fully sharded): compute standing still for weights not yet gathered. Bucket:
    // one bucket's all-reduce, launch to end (overlap, bucketed: see Note [per-bucket timing]).
    enum Kind {
        Forward,
        Backward,
        CommWait,
        Optimizer,
        Communication,
        Hidden,
        GatherWait,
        Bucket,
        KindCount
    };
    explicit LanesChart(QWidget* parent = nullptr);
    // The steps of one DDP point (every rank's, warm-up included, in any order).
    void setSteps(const std::vector<DdpStepRow>& steps, int world_size,
                  const std::string& strategy);
    void clear(const QString& note);
    int laneCount() const { return ranks_; }
    int barCount(Kind kind) const;
    // The bars of `kind` on rank `rank`'s lanes: [start, end] in ms.
    std::vector<std::pair<double, double>> bars(Kind kind, int rank) const;
    // What the lanes show and what they cannot (a sentence or two, under the chart).
    QString explanation() const { return explanation_; }
    // The bar under the pointer: its rank, kind, start, end and length.
    QString hoverText(const QPointF& pos) const override;
    // A rank's lane label: "rank 1", and its node where the steps name one (a run that torchrun or
    // srun started: "rank 1 · node 1 (gpu-b)").
    QString rankLabel(int rank) const;

private:
    SpanPlottable* spans_[KindCount];
    int ranks_ = 0;
    std::vector<std::string> nodes_;  // per rank, from its steps; empty: a local run
    QString explanation_;
};

// busbw against size; a series per (world size, dtype, backend).
class AllreduceChart : public QcpChart {
    Q_OBJECT
public:
    explicit AllreduceChart(QWidget* parent = nullptr);
    void setRows(const std::vector<dist::AllreduceRow>& rows);
    int seriesCount() const;
};

// One rank's memory of one point, for the stacked bars.
struct RankMemoryBar {
    QString point;  // the group's label
    int group = 0;  // bars of one group stand together
    int rank = 0;
    int64_t parameters = 0, gradients = 0, optimizer_state = 0, comm_buffers = 0;
};

class RankMemoryChart : public QcpChart {
    Q_OBJECT
public:
    explicit RankMemoryChart(QWidget* parent = nullptr);
    void setBars(const std::vector<RankMemoryBar>& bars);
    int barCount() const { return bars_; }
    // The stacked total (MiB) of bar `i`, in the order given.
    double barTotal(int i) const;

private:
    std::vector<QCPItemText*> labels_;
    std::vector<double> keys_;
    int bars_ = 0;
};

}  // namespace ts::ui
