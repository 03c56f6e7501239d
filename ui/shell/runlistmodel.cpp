#include "ui/shell/runlistmodel.h"

#include <QLocale>

#include "ui/common/format.h"
#include "ui/shell/runconfig.h"

namespace ts::ui {

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunListModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case Created:
                return tr("When the run started, in local time");
            case Configuration:
                return tr("What the run measured; the filter above searches it");
            case Points:
                return tr("Points (or cells) stored");
            case Status:
                return tr(
                    "How many stored points finished ok; the others failed, ran out of memory, "
                    "were unsupported or stopped");
        }
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
        case Id:
            return tr("Run");
        case Created:
            return tr("Created");
        case Kind:
            return tr("Kind");
        case Label:
            return tr("Label");
        case Configuration:
            return tr("Configuration");
        case Device:
            return tr("Device");
        case Points:
            return tr("Points");
        case Status:
            return tr("Status");
    }
    return {};
}

QString RunListModel::localTime(const QString& isoUtc, const QDateTime& now) {
    QDateTime t = QDateTime::fromString(isoUtc, Qt::ISODate);
    if (!t.isValid()) return isoUtc;
    t = t.toLocalTime();
    const QLocale locale;
    const QString hm = locale.toString(t.time(), QStringLiteral("HH:mm"));
    const QDate today = now.toLocalTime().date();
    if (t.date() == today) return tr("Today %1").arg(hm);
    if (t.date() == today.addDays(-1)) return tr("Yesterday %1").arg(hm);
    const QString day =
        locale.toString(t.date(), t.date().year() == today.year() ? QStringLiteral("d MMM")
                                                                  : QStringLiteral("d MMM yyyy"));
    return day + QLatin1Char(' ') + hm;
}

QString RunListModel::statusText(int points, int ok) {
    if (points <= 0) return tr("no results");
    if (points == 1) return ok == 1 ? tr("ok") : tr("not ok");
    if (ok == points) return tr("all %1 ok").arg(points);
    if (ok == 0) return tr("none of %1 ok").arg(points);
    return tr("%1 of %2 ok").arg(ok).arg(points);
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const size_t row = static_cast<size_t>(index.row());
    const RunInfo& r = runs_[row];
    if (role == RunIdRole) return static_cast<qlonglong>(r.id);
    if (role == Qt::ToolTipRole) {
        if (index.column() == Created) return tr("%1 (UTC)").arg(qstr(r.created));
        return qstr(r.spec_json).left(2000);
    }
    if (role == FilterRole) {
        if (index.column() != Status) return data(index, Qt::DisplayRole);
        const bool allOk = r.finished() && r.point_count > 0 && r.ok_count == r.point_count;
        if (allOk) return QStringLiteral("ok");
        QString words = QStringLiteral("notok failed");
        if (!r.finished()) words += QStringLiteral(" interrupted unfinished");
        if (r.point_count == 0) words += QStringLiteral(" empty");
        return words;
    }
    if (role == SortRole) {
        switch (index.column()) {
            case Id:
                return static_cast<qlonglong>(r.id);
            case Created:
                return qstr(r.created);  // ISO UTC sorts as time
            case Points:
                return r.point_count;
            case Status:
                return r.point_count > 0 ? double(r.ok_count) / r.point_count : -1.0;
        }
        role = Qt::DisplayRole;
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Id:
            return static_cast<qlonglong>(r.id);
        case Created:
            return localTime(qstr(r.created));
        case Kind:
            return qstr(r.lab);
        case Label:
            return qstr(r.label);
        case Configuration:
            return summaries_[row];
        case Device:
            return qstr(r.device_name);
        case Points:
            return r.point_count;
        case Status:
            // See Note [unfinished runs].
            if (!r.finished())
                return r.planned > 0
                           ? tr("not finished: %1 of %2 points").arg(r.point_count).arg(r.planned)
                           : tr("not finished: %n point(s)", "", r.point_count);
            return statusText(r.point_count, r.ok_count);
    }
    return {};
}

void RunListModel::setRuns(std::vector<RunInfo> runs) {
    beginResetModel();
    runs_ = std::move(runs);
    summaries_.clear();
    for (const RunInfo& r : runs_) summaries_.push_back(configurationSummary(r));
    endResetModel();
}

const RunInfo* RunListModel::runById(int64_t id) const {
    const int row = rowOf(id);
    return row < 0 ? nullptr : &runs_[static_cast<size_t>(row)];
}

int RunListModel::rowOf(int64_t id) const {
    for (size_t i = 0; i < runs_.size(); ++i)
        if (runs_[i].id == id) return static_cast<int>(i);
    return -1;
}

}  // namespace ts::ui
