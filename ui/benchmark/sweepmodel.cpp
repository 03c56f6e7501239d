#include "ui/benchmark/sweepmodel.h"

#include <algorithm>

#include "ui/benchmark/resultmodel.h"
#include "ui/common/format.h"

namespace ts::ui {

SweepModel::SweepModel(ResultModel* source, QObject* parent)
    : SeriesModel(parent), source_(source) {
    connect(source, &QAbstractItemModel::modelReset, this, &SweepModel::rebuild);
    connect(source, &QAbstractItemModel::rowsInserted, this, &SweepModel::rebuild);
    connect(source, &QAbstractItemModel::rowsRemoved, this, &SweepModel::rebuild);
    connect(source, &QAbstractItemModel::dataChanged, this, &SweepModel::rebuild);
    rebuild();
}

const std::vector<Dimension>& SweepModel::xDimensions() {
    static const std::vector<Dimension> dims = [] {
        // The shapes first, then every other dimension a sweep varies, as the point's table
        // has them (a new one included); not the mode (a step of each mode is another
        // measurement, compared row by row) nor the device.
        std::vector<Dimension> out = {Dimension::Size, Dimension::Context, Dimension::Batch,
                                      Dimension::Warmup};
        for (const auto& d : pointDimensions())
            if (!d.list_key.empty() && d.id() != Dimension::Mode && d.id() != Dimension::Device &&
                std::find(out.begin(), out.end(), d.id()) == out.end())
                out.push_back(d.id());
        return out;
    }();
    return dims;
}

void SweepModel::setXDimension(Dimension d) {
    wanted_ = d;
    rebuild();
}

void SweepModel::setMetric(Metric m) {
    metric_ = m;
    rebuild();
}

QString SweepModel::xTitle() const {
    return x_ == Dimension::Size ? tr("parameters") : dimensionName(x_);
}

QString SweepModel::xAxisTitle() const {
    return x_ == Dimension::Size ? tr("parameters (millions)") : dimensionName(x_);
}

QString SweepModel::yAxisTitle() const {
    // Short enough for a 1280×720 window's chart (about 230 px high), where a longer title is
    // elided; the chart's title says it is the time per step.
    return tr("%1 (ms), mean ± std").arg(metricName(metric_));
}

QString SweepModel::chartTitle() const {
    if (rows_.empty()) return tr("Sweep — finished points appear here");
    QString t = tr("Sweep: %1 time against %2").arg(metricName(metric_), xTitle());
    if (missing_ > 0) t += tr(" (%n point(s) OOM or failed, not shown)", "", missing_);
    return t;
}

QVariant SweepModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o == Qt::Horizontal && role == Qt::DisplayRole) {
        if (section == XLabel) return dimensionName(x_);
        if (section == Mean) return tr("%1 mean ms").arg(metricName(metric_));
        if (section == Std) return tr("%1 std ms").arg(metricName(metric_));
    }
    return SeriesModel::headerData(section, o, role);
}

void SweepModel::rebuild() {
    beginResetModel();
    rows_.clear();
    series_.clear();
    missing_ = 0;
    const std::vector<PointConfig> configs =
        source_ ? source_->configs() : std::vector<PointConfig>{};
    const std::vector<Dimension> varying = varyingDimensions(configs);
    auto varies = [&](Dimension d) {
        return std::find(varying.begin(), varying.end(), d) != varying.end();
    };
    x_ = wanted_;
    if (!varies(x_)) {
        for (Dimension d : {Dimension::Size, Dimension::Context, Dimension::Batch})
            if (varies(d)) {
                x_ = d;
                break;
            }
    }
    std::vector<Dimension> others;
    for (Dimension d : varying)
        if (d != x_) others.push_back(d);
    categories_ = isNumericDimension(x_) ? QStringList() : dimensionValues(configs, x_);
    if (source_) {
        for (size_t index = 0; index < source_->entries().size(); ++index) {
            const auto& e = source_->entries()[index];
            if (!e.finished) continue;
            const Stats& s = metricStats(e.result, metric_);
            if (e.result.status != Status::Ok || s.count == 0) {
                ++missing_;
                continue;
            }
            Row r;
            r.series = others.empty() ? metricName(metric_) : labelOver(e.result.config, others);
            r.xLabel = dimensionValue(x_, e.result.config);
            r.x = categories_.isEmpty() ? dimensionNumber(x_, e.result.config)
                                        : categories_.indexOf(r.xLabel);
            r.mean = s.mean;
            r.std = s.std;
            if (!series_.contains(r.series)) series_ << r.series;
            r.source = static_cast<int>(index);
            rows_.push_back(std::move(r));
        }
    }
    sortRows();
    endResetModel();
}

}  // namespace ts::ui
