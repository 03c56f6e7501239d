// The speedup table: one row per configuration, one time column per value of a chosen
// dimension (precision, attention, ...), then the speedup of each value against a chosen
// baseline value (fp32 → bf16: baseline time / bf16 time). OOM and failed cells say so.
// Only the same work compares: modes (forward, forward-backward, train) do different work,
// so mode is never a speedup dimension. A ratio whose sides are noisy (coefficient of
// variation above 10 %) or whose interval (ratio × (1 ± √(cv_a² + cv_b²))) includes 1 is
// marked uncertain: grey, with ± and a tooltip that says why.
#pragma once

#include <QAbstractTableModel>
#include <QPointer>
#include <QStringList>
#include <optional>
#include <vector>

#include "benchmark/benchmark.h"
#include "ui/common/dimensions.h"

namespace ts::ui {

class ResultModel;

enum class Metric { Total, Forward, Backward, Optimizer };
QString metricName(Metric m);
const Stats& metricStats(const BenchResult& r, Metric m);

class SpeedupModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int ValueRole = Qt::UserRole + 1;      // ms or ratio; invalid if none
    static constexpr int StatusRole = Qt::UserRole + 2;     // "ok", "OOM", "failed", "missing"
    static constexpr int UncertainRole = Qt::UserRole + 3;  // speedup cells: bool
    static constexpr double kNoisyCv = 0.10;

    // Whether a dimension can be a speedup's: every one but mode.
    static bool comparesAsSpeedup(Dimension d) { return d != Dimension::Mode; }

    explicit SpeedupModel(ResultModel* source, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    // The compared dimension; when unset (or not varying, or mode) the first varying one of
    // precision, attention, warm-up, batch, context, size, device is used.
    void setDimension(std::optional<Dimension> d);
    void setBaseline(const QString& value);  // empty: the first value
    void setMetric(Metric m);

    Dimension dimension() const { return dim_; }
    QString baseline() const { return baseline_; }
    Metric metric() const { return metric_; }
    QStringList values() const { return values_; }
    std::vector<Dimension> candidates() const { return candidates_; }

    // Column of the time of `value`, of its speedup (-1 for the baseline / unknown).
    int timeColumn(const QString& value) const;
    int speedupColumn(const QString& value) const;
    // The result (row of the result model) behind cell (row, column): a value's time or its
    // speedup; -1 for the label column or an empty cell.
    int sourceAt(int row, int column) const;

    // The chart's view of the speedup columns: one label per row, and per non-baseline
    // value its ratio in each row (0: none) and whether that ratio is uncertain.
    QStringList rowLabels() const { return rowLabels_; }
    struct Ratio {
        bool present = false;
        double value = 0, spread = 0;  // ratio and its ± (relative spreads combined)
        bool uncertain = false;
        QString why;  // empty when certain
    };
    Ratio ratio(int row, const QString& value) const;

Q_SIGNALS:
    // The dimension, its values or the baseline changed (controls follow).
    void shapeChanged();

private:
    void rebuild();
    struct Cell {
        bool present = false, finished = false;
        Status status = Status::Ok;
        double mean = 0, std = 0;
        QString error;
        int source = -1;  // row of the result model
    };
    QVariant timeData(const Cell& c, int role) const;
    QVariant speedupData(const Cell& base, const Cell& c, int role) const;
    Ratio ratioOf(const Cell& base, const Cell& c) const;

    QPointer<ResultModel> source_;
    std::optional<Dimension> wanted_;
    QString wantedBaseline_;
    Dimension dim_ = Dimension::Precision;
    QString baseline_;
    Metric metric_ = Metric::Total;
    QStringList values_;
    std::vector<Dimension> candidates_;
    QStringList rowLabels_;
    std::vector<std::vector<Cell>> cells_;  // [row][value]
};

}  // namespace ts::ui
