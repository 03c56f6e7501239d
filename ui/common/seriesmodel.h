// Long-format chart data: one row per plotted point (series, x, mean, spread). The series
// chart views any of these; subclasses fill the rows from their own results (the benchmark
// sweep, the attention benchmark) and name the axes.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <vector>

namespace ts::ui {

class SeriesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Series, X, XLabel, Mean, Std, ColumnCount };
    static constexpr int ValueRole = Qt::UserRole + 1;

    struct Row {
        QString series;
        double x = 0;
        QString xLabel;
        double mean = 0, std = 0;
        int source = -1;  // the result (row of the result model) it plots; -1: none
    };

    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    const std::vector<Row>& rows() const { return rows_; }
    QStringList seriesNames() const { return series_; }
    // Points that have no value to plot (OOM, failed, unsupported).
    int missingPoints() const { return missing_; }

    // How the chart draws these rows.
    virtual QString chartTitle() const = 0;
    virtual QString xTitle() const = 0;  // the x column's header
    virtual QString xAxisTitle() const { return xTitle(); }
    virtual QString yAxisTitle() const = 0;
    virtual double xScale() const { return 1.0; }  // x drawn = x × scale
    virtual int xLogBase() const { return 10; }    // when the x values span enough for a log axis
    // A log x axis whatever the span (parameters: the scaling law reads on log-log).
    virtual bool alwaysLogX() const { return false; }
    // Non-empty: x is categorical, a row's x is the index of its category here.
    virtual QStringList xCategories() const { return {}; }
    // Whether each x carries its label next to its points (model sizes by name).
    virtual bool labelPoints() const { return false; }
    // Whether series that share an x are nudged apart (not where every series has every x).
    virtual bool dodgeSharedX() const { return true; }

protected:
    // Subclasses: beginResetModel(), fill these, sortRows(), endResetModel().
    void sortRows();
    std::vector<Row> rows_;
    QStringList series_;
    int missing_ = 0;
};

}  // namespace ts::ui
