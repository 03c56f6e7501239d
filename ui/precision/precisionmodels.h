// The precision lab's results as item models: the accumulation table (one row a sum), the
// autocast inspector as a tree of modules, ops and gradients with their dtypes (and the same
// records flat, for exports), and the training numerics' summary (one row a precision).
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QMetaType>
#include <QStandardItemModel>
#include <vector>

#include "precision/precision.h"

Q_DECLARE_METATYPE(ts::AccumulationResult)
Q_DECLARE_METATYPE(ts::AutocastReport)
Q_DECLARE_METATYPE(ts::TrainNumericsCurve)

namespace ts::ui {

// Registers the three result types; safe to call again.
void registerPrecisionMetaTypes();

// The background of a cell holding `dtype` ("fp32", "bf16", "fp16"): a translucent tint, so
// that the palette's own text colour stays readable on light and dark themes; invalid for
// anything else.
QColor dtypeTint(const QString& dtype);

class AccumulationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Variant,
        Value,
        Exact,
        Error,
        AddendStored,
        FirstRounding,
        FirstStall,
        UlpEnd,
        Torch,
        ColumnCount
    };
    static constexpr int ValueRole = Qt::UserRole + 1;

    explicit AccumulationModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void clear();
    void add(const AccumulationResult& r);
    const std::vector<AccumulationResult>& results() const { return results_; }

private:
    std::vector<AccumulationResult> results_;
};

// The autocast report's records, one row each, as the engine recorded them.
class AutocastTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Kind, Params, Input, Output, ColumnCount };
    explicit AutocastTableModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void setReport(const AutocastReport& report);
    void clear();
    const std::optional<AutocastReport>& report() const { return report_; }

private:
    std::optional<AutocastReport> report_;
};

// The same records as a tree: "forward (autocast)" holding the modules and ops in the order
// they ran, the loss, and "backward" holding the gradients grouped by their dotted names.
// A module's row also carries its parameters' gradient dtype. Dtype cells are tinted per
// dtype; an op that returns fp32 from a lower-precision input (an fp32 island of autocast's
// policy) is marked in its kind column.
class AutocastTreeModel : public QStandardItemModel {
    Q_OBJECT
public:
    // Computed: for an op, the dtype its kernel computed in (the inputs of autocast's inner
    // call, see Note [computed in] in the engine); for a module, its ops' summary.
    enum Column { Name, Kind, Params, Input, Output, Computed, Grad, ColumnCount };
    static constexpr int IslandRole = Qt::UserRole + 2;  // bool, on the Name item
    static constexpr int OpRole = Qt::UserRole + 3;      // int: the op's index in the report's ops
    static constexpr int PathRole = Qt::UserRole + 4;    // bool: a module-path row of ops (the LM)

    explicit AutocastTreeModel(QObject* parent = nullptr);
    void setReport(const AutocastReport& report);
    void clear();
    // The row of the record named `name` (a module, op or "x.weight.grad"), for tests.
    QModelIndex indexOf(const QString& name, int column = Name) const;
    // The row of report.ops[op], for tests.
    QModelIndex indexOfOp(int op, int column = Name) const;

private:
    void setHeaders();
    // The module's ops (report.opsOf) as children of its row.
    void appendOps(QStandardItem* moduleItem, const AutocastReport& report,
                   const AutocastRecord& record);
};

// One row a precision: status, first and final loss, the largest difference to the fp32
// curve, skipped steps, the loss scale at the start and the end, fp16 underflow.
class TrainSummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Precision_,
        Status_,
        FirstLoss,
        FinalLoss,
        MaxDiff,
        Skipped,
        ScaleFirst,
        ScaleLast,
        Underflow,
        ColumnCount
    };
    static constexpr int ValueRole = Qt::UserRole + 1;

    explicit TrainSummaryModel(QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    void clear();
    void add(const TrainNumericsCurve& c);
    const std::vector<TrainNumericsCurve>& curves() const { return curves_; }
    // The fp32 curve, or nullptr.
    const TrainNumericsCurve* fp32() const;
    // max |loss − fp32 loss| over the steps both have; < 0 when there is nothing to compare.
    double maxDiffToFp32(const TrainNumericsCurve& c) const;

private:
    std::vector<TrainNumericsCurve> curves_;
};

}  // namespace ts::ui
