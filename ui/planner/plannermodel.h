// The planner's table: one row a strategy, a layer's FLOPs, compute and communication per pass
// and the step of L layers, with each cell's formula in its tooltip; and the report's value
// type registered for the run adapter's queue.
#pragma once

#include <QAbstractTableModel>
#include <QMetaType>
#include <optional>

#include "planner/planner.h"

Q_DECLARE_METATYPE(ts::PlannerReport)

namespace ts::ui {

void registerPlannerMetaTypes();

class PlannerTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        StrategyCol,
        XCol,
        YCol,
        FwdFlops,
        FwdCompute,
        FwdComm,
        BwdFlops,
        BwdCompute,
        BwdComm,
        Step,
        Bound,
        Memory,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setReport(const std::optional<PlannerReport>& report);
    const std::optional<PlannerReport>& report() const { return report_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::optional<PlannerReport> report_;
};

}  // namespace ts::ui
