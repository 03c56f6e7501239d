// The attention benchmark's results: one row per cell (implementation × problem) with its
// correctness check, the times of each pass, TFLOP/s and memory; and, for the chart, time
// against sequence length, one series per implementation (and per other varying value).
#pragma once

#include <QAbstractTableModel>
#include <QMetaType>
#include <QPointer>
#include <vector>

#include "attention/attention_lab.h"
#include "ui/common/seriesmodel.h"

Q_DECLARE_METATYPE(ts::AttentionCell)

namespace ts::ui {

class AttentionModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Impl,
        Batch,
        Heads,
        Seq,
        HeadDim,
        Dtype,
        Causal,
        Status,
        ErrOut,
        ErrGrad,
        Tolerance,
        Forward,
        Backward,
        ForwardBackward,
        ForwardTflops,
        BackwardTflops,
        MemBeforeBackward,
        PeakMemory,
        ColumnCount
    };
    static constexpr int ValueRole = Qt::UserRole + 1;

    explicit AttentionModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void clear();
    void addCell(const AttentionCell& cell);
    // Whether the run records device memory (CUDA); on the CPU the memory cells read "n/a".
    void setMeasuresMemory(bool measures);
    const std::vector<AttentionCell>& cells() const { return cells_; }

private:
    std::vector<AttentionCell> cells_;
    bool measuresMemory_ = true;
};

// Time of one pass against sequence length.
class AttentionSeriesModel : public SeriesModel {
    Q_OBJECT
public:
    explicit AttentionSeriesModel(AttentionModel* cells, QObject* parent = nullptr);
    void setPass(AttentionPass p);
    AttentionPass pass() const { return pass_; }

    QString chartTitle() const override;
    QString xTitle() const override { return tr("sequence length"); }
    QString yAxisTitle() const override;
    int xLogBase() const override { return 2; }

private:
    void rebuild();
    QPointer<AttentionModel> cells_;
    AttentionPass pass_ = AttentionPass::Forward;
};

double passMs(const AttentionCell& c, AttentionPass p);

}  // namespace ts::ui
