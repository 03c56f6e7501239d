#include "ui/benchmark/breakdownchart.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

#include "ui/benchmark/resultmodel.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"

namespace ts::ui {

BreakdownChart::BreakdownChart(ResultModel* results, QWidget* parent)
    : ChartPane(parent), results_(results) {
    series_ = new QStackedBarSeries;
    for (const QString& name : {tr("forward"), tr("backward"), tr("optimizer")}) {
        auto* set = new QBarSet(name);
        sets_ << set;
        series_->append(set);
    }
    chart()->addSeries(series_);
    x_ = new QBarCategoryAxis;
    x_->setTitleText(tr("point"));
    y_ = new QValueAxis;
    y_->setTitleText(tr("time per step (ms), mean of the measured steps"));
    y_->setLabelFormat(QStringLiteral("%.5g"));
    chart()->addAxis(x_, Qt::AlignBottom);
    chart()->addAxis(y_, Qt::AlignLeft);
    series_->attachAxis(x_);
    series_->attachAxis(y_);
    restyle();
    connect(results, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    connect(results, &QAbstractItemModel::rowsInserted, this, [this] { requestRedraw(); });
    connect(results, &QAbstractItemModel::dataChanged, this, [this] { requestRedraw(); });
    redraw();
}

QStringList BreakdownChart::categories() const { return x_->categories(); }

QList<double> BreakdownChart::phaseValues(int phase) const {
    QList<double> out;
    if (phase < 0 || phase >= sets_.size()) return out;
    for (int i = 0; i < sets_[phase]->count(); ++i) out << sets_[phase]->at(i);
    return out;
}

void BreakdownChart::restyle() {
    applyChartStyle(chart(), style());
    for (int i = 0; i < sets_.size(); ++i) {
        sets_[i]->setColor(style().seriesColor(i));
        sets_[i]->setBorderColor(style().background);
        sets_[i]->setLabelColor(style().foreground);
    }
}

void BreakdownChart::redraw() {
    if (!results_) return;
    const std::vector<PointConfig> configs = results_->configs();
    std::vector<Dimension> varying = varyingDimensions(configs);
    QStringList categories;
    QList<QList<qreal>> values(sets_.size());
    double top = 0;
    const auto& entries = results_->entries();
    for (size_t i = 0; i < entries.size(); ++i) {
        const auto& e = entries[i];
        const BenchResult& r = e.result;
        QString label = QStringLiteral("%1: %2").arg(i + 1).arg(labelOver(r.config, varying));
        const bool ok = e.finished && r.status == Status::Ok && r.total.count > 0;
        if (!ok)
            label +=
                QStringLiteral(" (%1)").arg(e.finished ? qstr(toString(r.status)) : tr("running"));
        categories << label;
        // A phase the mode skips has no time: 0 stacks nothing.
        const double phases[] = {r.forward.mean,
                                 r.config.mode != Mode::Forward ? r.backward.mean : 0.0,
                                 r.config.mode == Mode::Train ? r.optimizer.mean : 0.0};
        double sum = 0;
        for (int p = 0; p < sets_.size(); ++p) {
            values[p] << (ok ? phases[p] : 0.0);
            sum += ok ? phases[p] : 0.0;
        }
        top = std::max(top, sum);
    }
    // Replace in place: the sets keep their colours and legend entries.
    for (int p = 0; p < sets_.size(); ++p) {
        sets_[p]->remove(0, sets_[p]->count());
        sets_[p]->append(values[p]);
    }
    x_->setCategories(categories);
    y_->setRange(0, top > 0 ? top * 1.1 : 1);
    y_->applyNiceNumbers();
    chart()->setTitle(categories.isEmpty()
                          ? tr("Where the time goes — finished points appear here")
                          : tr("Where the time goes: forward, backward and optimizer per step"));
}

}  // namespace ts::ui
