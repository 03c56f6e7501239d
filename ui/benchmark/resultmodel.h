// One row per sweep point: its configuration, then its statistics once it has finished.
// A point appears when it starts ("running") and fills in when it ends, so the table
// grows point by point during a sweep. Each phase has its mean and its sample standard
// deviation; a phase the mode does not run, and memory on the CPU, read "n/a".
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "benchmark/benchmark.h"

namespace ts::ui {

class ResultModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Point,
        Size,
        Params,
        Context,
        Batch,
        Precision,
        Attention,
        Mode,
        Exec,
        Checkpoint,  // activation checkpointing (see Note [activation checkpointing])
        Device,
        Warmup,
        Steps,
        Status,
        Forward,
        ForwardStd,
        Backward,
        BackwardStd,
        Optimizer,
        OptimizerStd,
        Total,
        TotalStd,
        TotalCv,
        Tflops,
        PeakShare,
        PeakMemory,
        Compile,
        ColumnCount
    };
    static constexpr int ValueRole = Qt::UserRole + 1;   // raw number behind a cell
    static constexpr int StatusRole = Qt::UserRole + 2;  // "running", "ok", "OOM", ...

    struct Entry {
        BenchResult result;  // config always set; the rest once finished
        bool finished = false;
    };

    explicit ResultModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void clear();
    void setRunning(int index, const PointConfig& config);
    void setResult(int index, const BenchResult& result);
    void setResults(const std::vector<BenchResult>& results);  // a stored run, at once

    const std::vector<Entry>& entries() const { return entries_; }
    std::vector<BenchResult> finishedResults() const;
    std::vector<PointConfig> configs() const;

private:
    void ensureRows(int count);
    std::vector<Entry> entries_;
};

}  // namespace ts::ui
