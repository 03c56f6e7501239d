#include "ui/benchmark/comparechart.h"

#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QPainter>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/benchmark/comparemodel.h"
#include "ui/common/chartinteraction.h"
#include "ui/common/format.h"

namespace ts::ui {

namespace {
constexpr qreal kBarWidth = 0.7;  // of a category: the two bars together

// Where side `side`'s bar of category `row` stands (its centre), as Qt Charts lays out grouped
// bars: the group is kBarWidth wide, centred on the category, each bar half of it.
double barCentre(int row, int side) { return row - kBarWidth / 2 + (side + 0.5) * kBarWidth / 2; }
}  // namespace

// Qt Charts has neither error bars nor text at a data point: this item, a child of the chart,
// draws each bar's error bar and the text over each group from data coordinates (so they follow
// zoom, resize and exports), and the hint in the middle of an empty chart.
class CompareMarks : public QGraphicsItem {
public:
    struct Whisker {
        double x, lo, hi;
    };
    struct Mark {
        double x, y;  // the group's centre, above its highest error bar
        QString text;
        bool strong;  // a difference beyond the noise: bold, in the foreground colour
    };
    CompareMarks(QChart* chart, QAbstractSeries* series)
        : QGraphicsItem(chart), chart_(chart), series_(series) {
        setZValue(50);
    }
    void set(QList<Whisker> whiskers, QList<Mark> marks, QString hint) {
        prepareGeometryChange();
        whiskers_ = std::move(whiskers);
        marks_ = std::move(marks);
        hint_ = std::move(hint);
        update();
    }
    void setStyle(const ChartStyle& s) {
        style_ = s;
        update();
    }
    const QList<Mark>& marks() const { return marks_; }
    const QString& hint() const { return hint_; }
    QRectF boundingRect() const override { return chart_->rect(); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        p->save();
        p->setRenderHint(QPainter::Antialiasing);
        if (!hint_.isEmpty()) {
            p->setPen(style_.muted);
            p->setFont(style_.labelFont);
            const QRectF area = chart_->plotArea().adjusted(12, 12, -12, -12);
            p->drawText(area, Qt::AlignCenter | Qt::TextWordWrap, hint_);
            p->restore();
            return;
        }
        p->setClipRect(chart_->plotArea());
        QPen pen(style_.foreground);
        pen.setWidthF(style_.presentation ? 2.0 : 1.2);
        p->setPen(pen);
        const qreal cap = style_.presentation ? 6 : 4;
        for (const Whisker& w : whiskers_) {
            if (!(w.hi > w.lo)) continue;
            const QPointF top = chart_->mapToPosition(QPointF(w.x, w.hi), series_);
            const QPointF bottom = chart_->mapToPosition(QPointF(w.x, w.lo), series_);
            p->drawLine(top, bottom);
            p->drawLine(top - QPointF(cap, 0), top + QPointF(cap, 0));
            p->drawLine(bottom - QPointF(cap, 0), bottom + QPointF(cap, 0));
        }
        for (const Mark& m : marks_) {
            QFont f = style_.labelFont;
            f.setBold(m.strong);
            p->setFont(f);
            p->setPen(m.strong ? style_.foreground : style_.muted);
            const QPointF at = chart_->mapToPosition(QPointF(m.x, m.y), series_);
            const QFontMetricsF fm(f);
            const qreal w = fm.horizontalAdvance(m.text);
            p->drawText(QPointF(at.x() - w / 2, at.y() - fm.descent() - 4), m.text);
        }
        p->restore();
    }

private:
    QChart* chart_;
    QAbstractSeries* series_;
    QList<Whisker> whiskers_;
    QList<Mark> marks_;
    QString hint_;
    ChartStyle style_;
};

CompareChart::CompareChart(CompareModel* model, QWidget* parent)
    : ChartPane(parent), model_(model) {
    bars_ = new QBarSeries;
    bars_->setBarWidth(kBarWidth);
    for (int side = 0; side < 2; ++side) bars_->append(new QBarSet(side ? tr("B") : tr("A")));
    chart()->addSeries(bars_);
    x_ = new QBarCategoryAxis;
    y_ = new QValueAxis;
    y_->setLabelFormat(QStringLiteral("%.4g"));
    chart()->addAxis(x_, Qt::AlignBottom);
    chart()->addAxis(y_, Qt::AlignLeft);
    bars_->attachAxis(x_);
    bars_->attachAxis(y_);
    marks_ = new CompareMarks(chart(), bars_);
    connect(chart(), &QChart::plotAreaChanged, this, [this] { marks_->update(); });
    interaction()->setHitText([this](const ChartInteraction::Hit& hit) {
        const int row = static_cast<int>(std::lround(hit.value.x()));
        const int side = hit.series == bars_->barSets()[1]->label() ? 1 : 0;
        return barText(row, side);
    });
    connect(model, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    restyle();
    redraw();
}

QString CompareChart::chartTitle() const {
    if (!model_ || !model_->hasRuns()) return tr("Comparison");
    return tr("Run %1 (A) against run %2 (B): %3 time per step, mean ± std")
        .arg(model_->sideA().info.id)
        .arg(model_->sideB().info.id)
        .arg(metricName(model_->metric()));
}

QString CompareChart::chartFileStem() const {
    if (!model_ || !model_->hasRuns()) return QStringLiteral("compare");
    return QStringLiteral("compare-run%1-vs-run%2")
        .arg(model_->sideA().info.id)
        .arg(model_->sideB().info.id);
}

QStringList CompareChart::categories() const { return x_->categories(); }

QList<double> CompareChart::means(int side) const {
    QList<double> out;
    if (side < 0 || side > 1) return out;
    const QBarSet* s = bars_->barSets()[side];
    for (int i = 0; i < s->count(); ++i) out << s->at(i);
    return out;
}

QList<double> CompareChart::spreads(int side) const {
    return side < 0 || side > 1 ? QList<double>() : spreads_[side];
}

QList<int> CompareChart::paleRows() const {
    QList<int> rows = bars_->barSets()[0]->selectedBars();
    for (int r : bars_->barSets()[1]->selectedBars())
        if (!rows.contains(r)) rows << r;
    std::sort(rows.begin(), rows.end());
    return rows;
}

QList<int> CompareChart::unmatchedRows() const {
    QList<int> rows;
    if (!model_) return rows;
    for (int r = 0; r < model_->rowCount(); ++r)
        if (!model_->rowValues(r).compared()) rows << r;
    return rows;
}

QStringList CompareChart::marks() const {
    QStringList out;
    for (const auto& m : marks_->marks()) out << m.text;
    return out;
}

QString CompareChart::hint() const { return marks_->hint(); }

bool CompareChart::axesVisible() const { return x_->isVisible() && y_->isVisible(); }

QColor CompareChart::barColor(int side, int row) const {
    if (side < 0 || side > 1) return {};
    QBarSet* s = bars_->barSets()[side];
    return s->isBarSelected(row) ? s->selectedColor() : s->color();
}

// A pale bar keeps its side's colour, a third of it over the background (as the speedup
// chart's uncertain ratios): A and B stay apart, and the legend's colour is still the bar's.
QColor CompareChart::paleColor(int side) const {
    const QColor c = style().seriesColor(side), bg = style().background;
    auto mix = [](int a, int b) { return (a + 2 * b) / 3; };
    return QColor(mix(c.red(), bg.red()), mix(c.green(), bg.green()), mix(c.blue(), bg.blue()));
}

QString CompareChart::barText(int row, int side) const {
    if (!model_ || row < 0 || row >= model_->rowCount() || side < 0 || side > 1) return {};
    const CompareModel::RowValues v = model_->rowValues(row);
    const qint64 id = side ? model_->sideB().info.id : model_->sideA().info.id;
    QString text = tr("%1: run %2 · %3").arg(side ? tr("B") : tr("A")).arg(id).arg(v.label);
    const bool has = side ? v.hasB : v.hasA;
    const bool ok = side ? v.okB : v.okA;
    const Stats& s = side ? v.b : v.a;
    if (!has)
        return text + QLatin1Char('\n') + tr("run %1 has no point of this configuration").arg(id);
    if (!ok) return text + QLatin1Char('\n') + v.verdict;
    text += QLatin1Char('\n') + (s.count > 1
                                     ? tr("%1 ± %2 ms (%3 steps, spread %4%)")
                                           .arg(formatMs(s.mean), formatMs(s.std))
                                           .arg(s.count)
                                           .arg(100 * s.cv, 0, 'f', 0)
                                     : tr("%1 ms (%2 step)").arg(formatMs(s.mean)).arg(s.count));
    if (v.compared())
        text += QLatin1Char('\n') +
                tr("B / A %1× — %2").arg(QString::number(v.ratio, 'f', 3), v.verdict);
    else
        text += QLatin1Char('\n') + v.verdict;
    return text;
}

void CompareChart::restyle() {
    applyChartStyle(chart(), style());
    const QList<QBarSet*> sets = bars_->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        sets[i]->setColor(style().seriesColor(i));
        sets[i]->setBorderColor(style().background);
        sets[i]->setSelectedColor(paleColor(i));
    }
    marks_->setStyle(style());
}

void CompareChart::redraw() {
    if (!model_) return;
    const QList<QBarSet*> sets = bars_->barSets();
    const bool runs = model_->hasRuns();
    const int rows = model_->rowCount();
    sets[0]->setLabel(runs ? tr("A: run %1").arg(model_->sideA().info.id) : tr("A"));
    sets[1]->setLabel(runs ? tr("B: run %1").arg(model_->sideB().info.id) : tr("B"));
    QList<qreal> values[2];
    QList<int> pale;
    QList<CompareMarks::Whisker> whiskers;
    QList<CompareMarks::Mark> marks;
    QStringList categories;
    double top = 0;
    for (int side = 0; side < 2; ++side) spreads_[side].clear();
    for (int r = 0; r < rows; ++r) {
        const CompareModel::RowValues v = model_->rowValues(r);
        categories << v.label;
        double groupTop = 0;
        for (int side = 0; side < 2; ++side) {
            const bool ok = side ? v.okB : v.okA;
            const Stats& s = side ? v.b : v.a;
            values[side] << (ok ? s.mean : 0.0);
            const double err = ok && s.count > 1 ? s.std : 0.0;
            spreads_[side] << err;
            if (err > 0)
                whiskers << CompareMarks::Whisker{barCentre(r, side), std::max(0.0, s.mean - err),
                                                  s.mean + err};
            if (ok) groupTop = std::max(groupTop, s.mean + err);
        }
        using O = CompareModel::Outcome;
        QString mark;
        bool strong = false;
        switch (v.outcome) {
            case O::Faster:
            case O::Slower:
                mark = QString::number(v.ratio, 'f', 2) + QStringLiteral("×");
                strong = true;
                break;
            case O::WithinNoise:
                mark = tr("%1× ≈ noise").arg(QString::number(v.ratio, 'f', 2));
                pale << r;
                break;
            case O::TooFewSteps:
                mark = tr("%1× (too few steps)").arg(QString::number(v.ratio, 'f', 2));
                pale << r;
                break;
            default:
                mark = v.verdict;  // "only in run 5", "not compared: run 3 OOM"
        }
        marks << CompareMarks::Mark{static_cast<double>(r), groupTop, mark, strong};
        top = std::max(top, groupTop);
    }
    // Replace in place: the sets keep their colours and legend entries.
    for (int side = 0; side < 2; ++side) {
        sets[side]->deselectAllBars();
        sets[side]->remove(0, sets[side]->count());
        sets[side]->append(values[side]);
        sets[side]->selectBars(pale);
    }
    x_->setCategories(categories);
    // Room over the highest error bar for the ratio written there.
    y_->setRange(0, top > 0 ? top * 1.2 : 1);
    y_->applyNiceNumbers();
    // Short: in a 1280×720 window the plot is a few lines high (the title says the rest).
    y_->setTitleText(tr("ms"));
    QString hint;
    if (!runs)
        hint =
            tr("Select two runs in the History pane and press Compare: each configuration's "
               "time in run A beside run B, with its spread, appears here.");
    else if (rows == 0)
        hint = tr("Neither run has a point to compare.");
    const bool empty = !hint.isEmpty();
    x_->setVisible(!empty);
    y_->setVisible(!empty);
    bars_->setVisible(!empty);
    chart()->legend()->setVisible(!empty);
    marks_->set(whiskers, marks, hint);
    chart()->setTitle(chartTitle());
    restyle();
}

}  // namespace ts::ui
