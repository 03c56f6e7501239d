#include "ui/planner/plannermodel.h"

#include <QBrush>
#include <QColor>

#include "core/table.h"
#include "planner/planner_report.h"
#include "ui/common/format.h"
#include "ui/common/roles.h"

namespace ts::ui {

void registerPlannerMetaTypes() { qRegisterMetaType<PlannerReport>(); }

void PlannerTableModel::setReport(const std::optional<PlannerReport>& report) {
    beginResetModel();
    report_ = report;
    endResetModel();
}

int PlannerTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !report_ ? 0 : static_cast<int>(report_->plans.size());
}

int PlannerTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlannerTableModel::headerData(int section, Qt::Orientation o, int role) const {
    // The CSV's names, with the raw values' units (see kCsvHeaderRole).
    if (o == Qt::Horizontal && role == kCsvHeaderRole) {
        static const char* csv[] = {
            "strategy",      "x",          "y",          "fwd_flops",
            "fwd_compute_s", "fwd_comm_s", "bwd_flops",  "bwd_compute_s",
            "bwd_comm_s",    "step_s",     "comm_bound", "memory_per_device_bytes"};
        return section >= 0 && section < ColumnCount ? QString::fromLatin1(csv[section])
                                                     : QVariant();
    }
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"strategy",        "X",           "Y",
                                  "fwd FLOPs",       "fwd compute", "fwd comm",
                                  "bwd FLOPs",       "bwd compute", "bwd comm",
                                  "step (L layers)", "bound",       "memory per device"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

QVariant PlannerTableModel::data(const QModelIndex& index, int role) const {
    if (!report_ || !index.isValid() || index.row() >= rowCount()) return {};
    const StrategyPlan& p = report_->plans[static_cast<size_t>(index.row())];
    const int c = index.column();
    if (role == kValueRole) {  // the numbers behind the cells, for the exports
        switch (c) {
            case XCol:
                return QVariant::fromValue(p.x);
            case YCol:
                return QVariant::fromValue(p.y);
            case FwdFlops:
                return p.forward.flops;
            case FwdCompute:
                return p.forward.compute_s;
            case FwdComm:
                return p.forward.comm_s;
            case BwdFlops:
                return p.backward.flops;
            case BwdCompute:
                return p.backward.compute_s;
            case BwdComm:
                return p.backward.comm_s;
            case Step:
                return p.step_s;
            case Bound:
                return p.comm_bound;
            case Memory:
                return p.memoryBytes();
            default:
                return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (c) {
            case StrategyCol:
                return qstr(strategyTitle(p.strategy));
            case XCol:
                return QVariant::fromValue(p.x);
            case YCol:
                return QVariant::fromValue(p.y);
            case FwdFlops:
                return QString::number(p.forward.flops, 'g', 4);
            case FwdCompute:
                return qstr(formatSeconds(p.forward.compute_s));
            case FwdComm:
                return qstr(formatSeconds(p.forward.comm_s));
            case BwdFlops:
                return QString::number(p.backward.flops, 'g', 4);
            case BwdCompute:
                return qstr(formatSeconds(p.backward.compute_s));
            case BwdComm:
                return qstr(formatSeconds(p.backward.comm_s));
            case Step:
                return qstr(formatSeconds(p.step_s));
            case Bound:
                return p.comm_bound ? tr("communication") : tr("compute");
            case Memory:
                return qstr(formatBytes(static_cast<int64_t>(p.memoryBytes())));
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (c) {
            case FwdFlops:
                return qstr(p.forward.flops_formula);
            case BwdFlops:
                return qstr(p.backward.flops_formula);
            case FwdComm:
                return qstr(p.forward.comm_formula);
            case BwdComm:
                return qstr(p.backward.comm_formula);
            case FwdCompute:
            case BwdCompute:
                return tr("FLOPs / C");
            case Step:
                return tr("L · (max(forward compute, comm) + max(backward compute, comm))");
            case Memory:
                return qstr(p.memory_formula);
            case Bound: {
                QStringList lines;
                for (const PlannerLimit& l : p.limits)
                    lines << QStringLiteral("%1: %2 = %3")
                                 .arg(qstr(l.what), qstr(l.formula))
                                 .arg(l.value, 0, 'g', 4);
                return lines.join(QLatin1Char('\n'));
            }
            default:
                return {};
        }
    }
    if (role == Qt::TextAlignmentRole)
        return c == StrategyCol || c == Bound ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                              : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && c == Bound && p.comm_bound)
        return QBrush(QColor(0xd3, 0x2f, 0x2f));
    return {};
}

}  // namespace ts::ui
