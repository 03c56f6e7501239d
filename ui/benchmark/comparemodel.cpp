#include "ui/benchmark/comparemodel.h"

#include <QBrush>
#include <QColor>
#include <QHash>
#include <cmath>

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
        case Verdict:
            return tr("Verdict");
    }
    return {};
}

static bool usable(const BenchResult* r, Metric m) {
    return r && r->status == Status::Ok && metricStats(*r, m).count > 0;
}

// Note [a difference within the noise]: each side's time is the mean of its measured steps; a
// ratio of 8.3x between two runs whose steps spread by 33% may be noise. A difference counts when
// it exceeds two standard errors of the difference of the means, 2·sqrt(sA²/nA + sB²/nB) (a
// Welch-style bound, about 95% for normal steps); otherwise the ratio is not highlighted and the
// verdict says "within noise" with both spreads. Too few steps (n < 2) have no spread: the
// verdict says so.
bool CompareModel::significant(int row) const {
    const Row& r = rows_[static_cast<size_t>(row)];
    if (!usable(r.a, metric_) || !usable(r.b, metric_)) return false;
    const Stats sa = metricStats(*r.a, metric_), sb = metricStats(*r.b, metric_);
    if (sa.count < 2 || sb.count < 2) return false;
    const double se = std::sqrt(sa.std * sa.std / sa.count + sb.std * sb.std / sb.count);
    return std::abs(sb.mean - sa.mean) > 2 * se;
}

CompareModel::RowValues CompareModel::rowValues(int row) const {
    RowValues v;
    if (row < 0 || row >= static_cast<int>(rows_.size())) return v;
    const Row& r = rows_[static_cast<size_t>(row)];
    const qint64 idA = a_.info.id, idB = b_.info.id;
    v.label = r.label;
    v.hasA = r.a != nullptr;
    v.hasB = r.b != nullptr;
    v.okA = usable(r.a, metric_);
    v.okB = usable(r.b, metric_);
    if (v.okA) v.a = metricStats(*r.a, metric_);
    if (v.okB) v.b = metricStats(*r.b, metric_);
    if (v.okA && v.okB && v.a.mean > 0) v.ratio = v.b.mean / v.a.mean;
    if (!r.a) {
        v.outcome = Outcome::OnlyInB;
        v.verdict = tr("only in run %1").arg(idB);
    } else if (!r.b) {
        v.outcome = Outcome::OnlyInA;
        v.verdict = tr("only in run %1").arg(idA);
    } else if (!v.okA || !v.okB) {
        v.outcome = Outcome::NotCompared;
        v.verdict = tr("not compared: run %1 %2")
                        .arg(!v.okA ? idA : idB)
                        .arg(qstr(toString((!v.okA ? r.a : r.b)->status)));
    } else if (v.a.count < 2 || v.b.count < 2) {
        v.outcome = Outcome::TooFewSteps;
        v.verdict = tr("too few steps to tell");
    } else if (!significant(row)) {
        const auto cv = [](const Stats& x) {
            return QString::number(100 * x.cv, 'f', 0) + QLatin1Char('%');
        };
        v.outcome = Outcome::WithinNoise;
        v.verdict = tr("within noise (spread A %1, B %2)").arg(cv(v.a), cv(v.b));
    } else {
        v.outcome = v.b.mean < v.a.mean ? Outcome::Faster : Outcome::Slower;
        v.verdict = v.b.mean < v.a.mean ? tr("B faster") : tr("B slower");
    }
    return v;
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = rows_[static_cast<size_t>(index.row())];
    const RowValues v = rowValues(index.row());
    const bool okA = v.okA, okB = v.okB;
    const double ta = v.a.mean, tb = v.b.mean;
    const int col = index.column();
    if (role == Qt::TextAlignmentRole)
        return col == Configuration ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                    : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::BackgroundRole && (col == Ratio || col == Verdict) && okA && okB && ta > 0 &&
        significant(index.row())) {
        const double ratio = tb / ta;
        if (ratio < 0.95) return QBrush(QColor(0x2e, 0x7d, 0x32, 50));
        if (ratio > 1.05) return QBrush(QColor(0xef, 0x6c, 0x00, 50));
        return {};
    }
    const qint64 idA = a_.info.id, idB = b_.info.id;
    if (role == Qt::ToolTipRole) {
        // Every empty cell says why it is empty (issue 29 item 10: "— with no reason").
        if ((col == TimeA && !r.a) || (col == TimeB && !r.b))
            return tr("Run %1 has no point of this configuration").arg(col == TimeA ? idA : idB);
        if ((col == TimeA && !okA) || (col == TimeB && !okB)) {
            const BenchResult* p = col == TimeA ? r.a : r.b;
            return tr("Run %1: %2%3")
                .arg(col == TimeA ? idA : idB)
                .arg(qstr(toString(p->status)))
                .arg(p->error.empty() ? QString() : QStringLiteral(" — ") + qstr(p->error));
        }
        if ((col == Difference || col == Ratio) && !v.compared()) return v.verdict;
        return {};
    }
    auto side = [&](const BenchResult* p, bool ok, double t) -> QVariant {
        if (role == ValueRole) return ok ? QVariant(t) : QVariant();
        if (!p) return tr("—");
        if (!ok) return qstr(toString(p->status));
        const Stats st = metricStats(*p, metric_);
        return st.count > 1 ? formatMs(t) + QStringLiteral(" ± ") + formatMs(st.std) : formatMs(t);
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
        case Verdict:
            return role == ValueRole ? QVariant() : QVariant(v.verdict);
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
