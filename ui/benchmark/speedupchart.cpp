#include "ui/benchmark/speedupchart.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

#include "ui/benchmark/speedupmodel.h"

namespace ts::ui {

SpeedupChart::SpeedupChart(SpeedupModel* model, QWidget* parent)
    : ChartPane(parent), model_(model) {
    bars_ = new QBarSeries;
    one_ = new QLineSeries;
    one_->setName(tr("1× = baseline"));
    chart()->addSeries(bars_);
    chart()->addSeries(one_);
    x_ = new QBarCategoryAxis;
    y_ = new QValueAxis;
    y_->setLabelFormat(QStringLiteral("%.3g"));
    // Each bar says its ratio (the table beside it has the spread).
    bars_->setLabelsVisible(true);
    bars_->setLabelsFormat(QStringLiteral("@value×"));
    bars_->setLabelsPrecision(3);
    bars_->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    chart()->addAxis(x_, Qt::AlignBottom);
    chart()->addAxis(y_, Qt::AlignLeft);
    for (QAbstractSeries* s :
         {static_cast<QAbstractSeries*>(bars_), static_cast<QAbstractSeries*>(one_)}) {
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    connect(model, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    redraw();
}

QString SpeedupChart::chartTitle() const {
    if (!model_ || model_->values().size() < 2) return tr("Speedup");
    return tr("Speedup against %1 (%2 time)").arg(model_->baseline(), metricName(model_->metric()));
}

int SpeedupChart::barSetCount() const { return static_cast<int>(bars_->count()); }

QStringList SpeedupChart::categories() const { return x_->categories(); }

QList<double> SpeedupChart::values(int set) const {
    QList<double> out;
    if (set < 0 || set >= bars_->count()) return out;
    const QBarSet* s = bars_->barSets()[set];
    for (int i = 0; i < s->count(); ++i) out << s->at(i);
    return out;
}

QList<int> SpeedupChart::uncertainBars(int set) const {
    if (set < 0 || set >= bars_->count()) return {};
    QList<int> bars = bars_->barSets()[set]->selectedBars();
    std::sort(bars.begin(), bars.end());
    return bars;
}

// An uncertain ratio keeps its series' colour, pale (a third of it over the background): the
// series stay apart where several are uncertain, and the legend's colour is still the bar's.
QColor SpeedupChart::uncertainColor(int set) const {
    const QColor c = style().seriesColor(set + 1), bg = style().background;
    auto mix = [](int a, int b) { return (a + 2 * b) / 3; };
    return QColor(mix(c.red(), bg.red()), mix(c.green(), bg.green()), mix(c.blue(), bg.blue()));
}

QColor SpeedupChart::barColor(int set, int bar) const {
    if (set < 0 || set >= bars_->count()) return {};
    QBarSet* s = bars_->barSets()[set];
    return s->isBarSelected(bar) ? s->selectedColor() : s->color();
}

void SpeedupChart::restyle() {
    applyChartStyle(chart(), style());
    const QList<QBarSet*> sets = bars_->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        sets[i]->setColor(style().seriesColor(i + 1));
        sets[i]->setBorderColor(style().background);
        sets[i]->setSelectedColor(uncertainColor(i));
        sets[i]->setLabelColor(style().foreground);
    }
    QPen pen(style().foreground);
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(style().lineWidth * 0.6);
    one_->setPen(pen);
}

void SpeedupChart::redraw() {
    if (!model_) return;
    bars_->clear();
    const QStringList rows = model_->rowLabels();
    double top = 1;
    for (const QString& value : model_->values()) {
        if (value == model_->baseline()) continue;
        auto* set = new QBarSet(tr("%1 vs %2").arg(value, model_->baseline()));
        QList<int> uncertain;
        for (int r = 0; r < rows.size(); ++r) {
            const SpeedupModel::Ratio ratio = model_->ratio(r, value);
            *set << (ratio.present ? ratio.value : 0.0);
            if (ratio.present && ratio.uncertain) uncertain << r;
            top = std::max(top, ratio.value);
        }
        bars_->append(set);
        set->setSelectedColor(uncertainColor(static_cast<int>(bars_->count()) - 1));
        set->selectBars(uncertain);
    }
    x_->setCategories(rows);
    one_->replace({QPointF(-0.5, 1), QPointF(std::max<qsizetype>(1, rows.size()) - 0.5, 1)});
    y_->setTitleText(tr("speedup (×); pale: uncertain"));
    y_->setRange(0, top * 1.1);
    y_->applyNiceNumbers();
    restyle();
    chart()->setTitle(bars_->count() == 0
                          ? tr("Speedup — no second value to compare against a baseline")
                          : chartTitle());
}

}  // namespace ts::ui
