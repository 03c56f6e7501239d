#include "ui/attention/attentionmodel.h"

#include <QBrush>
#include <QColor>
#include <QStringList>

#include "ui/common/format.h"
#include "ui/common/roles.h"

namespace ts::ui {

double passMs(const AttentionCell& c, AttentionPass p) {
    switch (p) {
        case AttentionPass::Forward:
            return c.forward_ms;
        case AttentionPass::Backward:
            return c.backward_ms;
        case AttentionPass::ForwardBackward:
            return c.forward_backward_ms;
    }
    return 0;
}

AttentionModel::AttentionModel(QObject* parent) : QAbstractTableModel(parent) {
    qRegisterMetaType<AttentionCell>();
}

int AttentionModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(cells_.size());
}

int AttentionModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AttentionModel::headerData(int section, Qt::Orientation o, int role) const {
    // The CSV's names where the raw value is bytes, not MiB (see kCsvHeaderRole).
    if (o == Qt::Horizontal && role == kCsvHeaderRole) {
        if (section == MemBeforeBackward) return QStringLiteral("memory_before_backward_bytes");
        if (section == PeakMemory) return QStringLiteral("peak_memory_bytes");
        return {};
    }
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Impl:
            return tr("Implementation");
        case Batch:
            return tr("Batch");
        case Heads:
            return tr("Heads");
        case Seq:
            return tr("Seq");
        case HeadDim:
            return tr("Head dim");
        case Dtype:
            return tr("Dtype");
        case Causal:
            return tr("Causal");
        case Status:
            return tr("Status");
        case ErrOut:
            return tr("Error out");
        case ErrGrad:
            return tr("Error grad");
        case Tolerance:
            return tr("Tolerance");
        case Forward:
            return tr("Forward ms");
        case Backward:
            return tr("Backward ms");
        case ForwardBackward:
            return tr("Fwd+bwd ms");
        case ForwardTflops:
            return tr("Forward TFLOP/s");
        case BackwardTflops:
            return tr("Backward TFLOP/s");
        case MemBeforeBackward:
            return tr("Before backward MiB");
        case PeakMemory:
            return tr("Peak MiB");
    }
    return {};
}

QVariant AttentionModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AttentionCell& c = cells_[static_cast<size_t>(index.row())];
    const int col = index.column();
    const bool ok = c.status == Status::Ok;
    if (role == Qt::ToolTipRole) {
        // A failure with the user's traceback where their code raised; a measured cell's spread.
        if (!ok) {
            QString tip = qstr(c.error);
            if (!c.traceback.empty()) tip += QStringLiteral("\n\n") + qstr(c.traceback);
            return tip.isEmpty() ? QVariant() : QVariant(tip);
        }
        QStringList lines;
        auto spread = [&](const QString& what, double median, double mean, double sd) {
            if (median > 0 && mean > 0)
                lines << tr("%1: median %2 ms, mean %3 ± %4 ms")
                             .arg(what, formatMs(median), formatMs(mean), formatMs(sd));
        };
        spread(tr("forward"), c.forward_ms, c.forward_mean_ms, c.forward_std_ms);
        spread(tr("backward"), c.backward_ms, c.backward_mean_ms, c.backward_std_ms);
        spread(tr("forward + backward"), c.forward_backward_ms, c.forward_backward_mean_ms,
               c.forward_backward_std_ms);
        if (c.first_call_ms > 0)
            lines << tr("first call (compiling in it): %1 ms").arg(formatMs(c.first_call_ms));
        return lines.isEmpty() ? QVariant() : QVariant(lines.join(QLatin1Char('\n')));
    }
    if (role == Qt::BackgroundRole && col == Status && !ok)
        return QBrush(QColor(0xd3, 0x2f, 0x2f, 60));
    if (role == Qt::TextAlignmentRole)
        return (col == Impl || col == Dtype || col == Status || col == Causal)
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != ValueRole) return {};
    const bool raw = role == ValueRole;
    auto num = [&](double v, const QString& text, bool have) -> QVariant {
        if (!have) return raw ? QVariant() : QVariant(QStringLiteral("—"));
        return raw ? QVariant(v) : QVariant(text);
    };
    switch (col) {
        case Impl:
            return qstr(implName(c));
        case Batch:
            return static_cast<qlonglong>(c.batch);
        case Heads:
            return static_cast<qlonglong>(c.heads);
        case Seq:
            return static_cast<qlonglong>(c.seq);
        case HeadDim:
            return static_cast<qlonglong>(c.head_dim);
        case Dtype:
            return qstr(toString(c.dtype));
        case Causal:
            return raw ? QVariant(c.causal) : QVariant(c.causal ? tr("yes") : tr("no"));
        case Status:
            return qstr(toString(c.status));
        case ErrOut:
            return num(c.err_out, QString::number(c.err_out, 'g', 3), c.err_out >= 0);
        case ErrGrad:
            return num(c.err_grad, QString::number(c.err_grad, 'g', 3), c.err_grad >= 0);
        case Tolerance:
            return num(c.tolerance, QString::number(c.tolerance, 'g', 3), c.tolerance > 0);
        case Forward:
            return num(c.forward_ms, formatMs(c.forward_ms), ok && c.forward_ms > 0);
        case Backward:
            return num(c.backward_ms, formatMs(c.backward_ms), ok && c.backward_ms > 0);
        case ForwardBackward:
            return num(c.forward_backward_ms, formatMs(c.forward_backward_ms),
                       ok && c.forward_backward_ms > 0);
        case ForwardTflops:
            return num(c.forward_tflops, QString::number(c.forward_tflops, 'f', 2),
                       ok && c.forward_tflops > 0);
        case BackwardTflops:
            return num(c.backward_tflops, QString::number(c.backward_tflops, 'f', 2),
                       ok && c.backward_tflops > 0);
        case MemBeforeBackward:
            if (!measuresMemory_) return raw ? QVariant() : QVariant(QStringLiteral("n/a"));
            return raw ? QVariant(static_cast<qlonglong>(c.memory_before_backward))
                       : QVariant(formatMiB(c.memory_before_backward));
        case PeakMemory:
            if (!measuresMemory_) return raw ? QVariant() : QVariant(QStringLiteral("n/a"));
            return raw ? QVariant(static_cast<qlonglong>(c.peak_memory))
                       : QVariant(formatMiB(c.peak_memory));
    }
    return {};
}

void AttentionModel::clear() {
    beginResetModel();
    cells_.clear();
    endResetModel();
}

void AttentionModel::setMeasuresMemory(bool measures) {
    if (measures == measuresMemory_) return;
    beginResetModel();
    measuresMemory_ = measures;
    endResetModel();
}

void AttentionModel::addCell(const AttentionCell& cell) {
    const int row = static_cast<int>(cells_.size());
    beginInsertRows({}, row, row);
    cells_.push_back(cell);
    endInsertRows();
}

AttentionSeriesModel::AttentionSeriesModel(AttentionModel* cells, QObject* parent)
    : SeriesModel(parent), cells_(cells) {
    connect(cells, &QAbstractItemModel::modelReset, this, &AttentionSeriesModel::rebuild);
    connect(cells, &QAbstractItemModel::rowsInserted, this, &AttentionSeriesModel::rebuild);
    rebuild();
}

void AttentionSeriesModel::setPass(AttentionPass p) {
    pass_ = p;
    rebuild();
}

QString AttentionSeriesModel::chartTitle() const {
    if (rows_.empty()) return tr("Attention — measured cells appear here");
    QString t = tr("Attention: %1 time against sequence length").arg(qstr(toString(pass_)));
    if (missing_ > 0) t += tr(" (%n cell(s) OOM, failed or unsupported, not shown)", "", missing_);
    return t;
}

QString AttentionSeriesModel::yAxisTitle() const {
    return tr("%1 ms (median)").arg(qstr(toString(pass_)));
}

void AttentionSeriesModel::rebuild() {
    beginResetModel();
    rows_.clear();
    series_.clear();
    missing_ = 0;
    if (cells_) {
        const auto& cells = cells_->cells();
        // A series per implementation, and per any other value that varies.
        auto varies = [&](auto get) {
            for (const auto& c : cells)
                if (get(c) != get(cells.front())) return true;
            return false;
        };
        const bool dV = varies([](const AttentionCell& c) { return c.head_dim; });
        const bool tV = varies([](const AttentionCell& c) { return c.dtype; });
        const bool cV = varies([](const AttentionCell& c) { return c.causal; });
        const bool bV = varies([](const AttentionCell& c) { return c.batch * 100000 + c.heads; });
        for (const auto& c : cells) {
            const double ms = passMs(c, pass_);
            if (c.status != Status::Ok || !(ms > 0)) {
                ++missing_;
                continue;
            }
            QStringList name{qstr(implName(c))};
            if (dV) name << QStringLiteral("d%1").arg(c.head_dim);
            if (tV) name << qstr(toString(c.dtype));
            if (cV) name << (c.causal ? tr("causal") : tr("full"));
            if (bV) name << QStringLiteral("b%1 h%2").arg(c.batch).arg(c.heads);
            Row r;
            r.series = name.join(QStringLiteral(" · "));
            r.x = static_cast<double>(c.seq);
            r.xLabel = QString::number(c.seq);
            r.mean = ms;
            r.std = 0;  // the engine reports medians only
            if (!series_.contains(r.series)) series_ << r.series;
            rows_.push_back(std::move(r));
        }
    }
    sortRows();
    endResetModel();
}

}  // namespace ts::ui
