// Every step of a run as it arrives, warm-up included: the table under the step chart and
// the source of the step and memory charts. Rows are appended in batches.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <vector>

#include "benchmark/benchmark.h"

namespace ts::ui {

class StepModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Point,
        Step,
        Phase,
        Forward,
        Backward,
        Optimizer,
        Total,
        Loss,
        Allocated,
        Reserved,
        Peak,
        ColumnCount
    };
    // The raw number behind a cell (ms, bytes), for charts and sorting.
    static constexpr int ValueRole = Qt::UserRole + 1;

    explicit StepModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void clear();
    void appendSteps(int point, const QList<StepSample>& steps);
    // Whether `point` records device memory (CUDA); a CPU point's memory cells read "n/a".
    void setMeasuresMemory(int point, bool measures);
    bool measuresMemory(int point) const;

    // Typed access for the charts, which read many rows at once.
    const StepSample& sample(int row) const { return rows_[row].sample; }
    int pointOf(int row) const { return rows_[row].point; }
    // First row and row count of a point's steps (rows of a point are contiguous).
    std::pair<int, int> rowsOfPoint(int point) const;
    int lastPoint() const { return rows_.empty() ? -1 : rows_.back().point; }

private:
    struct Row {
        int point;
        StepSample sample;
    };
    std::vector<Row> rows_;
    std::vector<int> noMemoryPoints_;  // points without device memory figures (CPU)
};

}  // namespace ts::ui
