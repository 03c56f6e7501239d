// Two runs side by side: points matched by configuration, each run's time with its spread, the
// difference, the ratio and a verdict that calls a difference within the steps' noise so; plus
// the environment fields in which the runs differ.
// See Note [a difference within the noise] in comparemodel.cpp.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <vector>

#include "core/store.h"
#include "ui/benchmark/speedupmodel.h"

namespace ts::ui {

class CompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Configuration, TimeA, TimeB, Difference, Ratio, Verdict, ColumnCount };
    static constexpr int ValueRole = Qt::UserRole + 1;

    struct Side {
        RunInfo info;
        std::vector<BenchResult> points;
    };

    explicit CompareModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void setRuns(Side a, Side b);
    void clear();
    void setMetric(Metric m);
    Metric metric() const { return metric_; }
    bool hasRuns() const { return hasRuns_; }
    const Side& sideA() const { return a_; }
    const Side& sideB() const { return b_; }

    // The row's B − A is larger than its noise: two standard errors of the difference.
    bool significant(int row) const;

    // What a row compares, as the table and the chart show it: each side's statistics of the
    // metric, the ratio and the verdict, and why a side or the ratio is missing.
    enum class Outcome { Faster, Slower, WithinNoise, TooFewSteps, OnlyInA, OnlyInB, NotCompared };
    struct RowValues {
        QString label;
        bool hasA = false, hasB = false;  // the run has a point of this configuration
        bool okA = false, okB = false;    // ... that finished with measured steps
        Stats a, b;                       // the metric's, over the measured steps (empty unless ok)
        double ratio = 0;                 // B / A; 0 when not both are ok
        Outcome outcome = Outcome::NotCompared;
        QString verdict;  // the Verdict column: "B faster", "within noise (…)", "only in run 3"
        bool compared() const { return okA && okB && ratio > 0; }
    };
    RowValues rowValues(int row) const;
    // Environment fields that differ: {field, value in A, value in B}.
    QList<QStringList> environmentDifferences() const;

private:
    void rebuild();
    struct Row {
        QString label;
        const BenchResult* a = nullptr;
        const BenchResult* b = nullptr;
    };
    Side a_, b_;
    bool hasRuns_ = false;
    Metric metric_ = Metric::Total;
    std::vector<Row> rows_;
};

}  // namespace ts::ui
