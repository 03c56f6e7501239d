#include "ui/benchmark/comparemodel.h"

#include <QBrush>
#include <QColor>
#include <QHash>

#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/common/pointformat.h"

namespace ts::ui {

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

int CompareModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    const QString m = metricName(metric_);
    switch (section) {
        case Configuration:
            return tr("Configuration");
        case TimeA:
            return tr("Run %1 %2 ms").arg(a_.info.id).arg(m);
        case TimeB:
            return tr("Run %1 %2 ms").arg(b_.info.id).arg(m);
        case Difference:
            return tr("Δ ms (B − A)");
        case Ratio:
            return tr("Ratio B / A");
    }
    return {};
}

static bool usable(const BenchResult* r, Metric m) {
    return r && r->status == Status::Ok && metricStats(*r, m).count > 0;
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    const bool okA = usable(r.a, metric_), okB = usable(r.b, metric_);
    const double ta = okA ? metricStats(*r.a, metric_).mean : 0;
    const double tb = okB ? metricStats(*r.b, metric_).mean : 0;
    const int col = index.column();
    if (role == Qt::TextAlignmentRole)
        return col == Configuration ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                    : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::BackgroundRole && col == Ratio && okA && okB && ta > 0) {
        const double ratio = tb / ta;
        if (ratio < 0.95) return QBrush(QColor(0x2e, 0x7d, 0x32, 50));
        if (ratio > 1.05) return QBrush(QColor(0xef, 0x6c, 0x00, 50));
        return {};
    }
    auto side = [&](const BenchResult* p, bool ok, double t) -> QVariant {
        if (role == ValueRole) return ok ? QVariant(t) : QVariant();
        if (!p) return tr("—");
        if (!ok) return qstr(toString(p->status));
        return formatMs(t);
    };
    if (role != Qt::DisplayRole && role != ValueRole) return {};
    switch (col) {
        case Configuration:
            return r.label;
        case TimeA:
            return side(r.a, okA, ta);
        case TimeB:
            return side(r.b, okB, tb);
        case Difference:
            if (!okA || !okB) return role == ValueRole ? QVariant() : QVariant(tr("—"));
            return role == ValueRole ? QVariant(tb - ta)
                                     : QVariant((tb >= ta ? "+" : "") + formatMs(tb - ta));
        case Ratio:
            if (!okA || !okB || ta <= 0) return role == ValueRole ? QVariant() : QVariant(tr("—"));
            return role == ValueRole
                       ? QVariant(tb / ta)
                       : QVariant(QString::number(tb / ta, 'f', 3) + QStringLiteral("×"));
    }
    return {};
}

void CompareModel::setRuns(Side a, Side b) {
    a_ = std::move(a);
    b_ = std::move(b);
    hasRuns_ = true;
    rebuild();
}

void CompareModel::clear() {
    a_ = {};
    b_ = {};
    hasRuns_ = false;
    rebuild();
}

void CompareModel::setMetric(Metric m) {
    metric_ = m;
    rebuild();
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

void CompareModel::rebuild() {
    beginResetModel();
    rows_.clear();
    std::vector<PointConfig> all;
    for (const auto& p : a_.points) all.push_back(p.config);
    for (const auto& p : b_.points) all.push_back(p.config);
    const std::vector<Dimension> varying = varyingDimensions(all);
    QHash<QString, int> rowOf;
    auto add = [&](const BenchResult& p, bool isA) {
        const QString key = pointKey(p.config);
        int row = rowOf.value(key, -1);
        if (row < 0) {
            row = static_cast<int>(rows_.size());
            rowOf.insert(key, row);
            rows_.push_back(
                {varying.empty() ? describeConfig(p.config) : labelOver(p.config, varying)});
        }
        (isA ? rows_[static_cast<size_t>(row)].a : rows_[static_cast<size_t>(row)].b) = &p;
    };
    for (const auto& p : a_.points) add(p, true);
    for (const auto& p : b_.points) add(p, false);
    endResetModel();
}

QList<QStringList> CompareModel::environmentDifferences() const {
    QList<QStringList> out;
    if (a_.points.empty() || b_.points.empty()) return out;
    const Environment& ea = a_.points.front().environment;
    const Environment& eb = b_.points.front().environment;
    auto cmp = [&](const char* field, const std::string& x, const std::string& y) {
        if (x != y) out << QStringList{QLatin1String(field), qstr(x), qstr(y)};
    };
    cmp("Device", ea.device_name, eb.device_name);
    cmp("Driver", ea.driver_version, eb.driver_version);
    cmp("CUDA", ea.cuda_version, eb.cuda_version);
    cmp("LibTorch", ea.torch_version, eb.torch_version);
    cmp("CPU", ea.cpu, eb.cpu);
    cmp("Host", ea.hostname, eb.hostname);
    cmp("Commit", ea.git_commit, eb.git_commit);
    cmp("Date", ea.date, eb.date);
    return out;
}

}  // namespace ts::ui
