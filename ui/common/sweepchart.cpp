#include "ui/common/sweepchart.h"

#include <QGraphicsItem>
#include <QMap>
#include <QPainter>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/common/chartinteraction.h"
#include "ui/common/seriesmodel.h"

namespace ts::ui {

QList<double> logTicks(double lo, double hi, int base) {
    QList<double> ticks;
    if (!(lo > 0) || !(hi > lo)) return ticks;
    const double eps = 1e-9;
    if (base == 2) {
        const int first = static_cast<int>(std::ceil(std::log2(lo) - eps));
        const int last = static_cast<int>(std::floor(std::log2(hi) + eps));
        const int every = last - first > 12 ? 2 : 1;
        for (int k = first; k <= last; k += every) ticks << std::ldexp(1.0, k);
        return ticks;
    }
    static constexpr double kMantissas[] = {1, 2, 5};
    const int mantissas = std::log10(hi / lo) <= 3 ? 3 : 1;  // 1-2-5, or decades only
    const int first = static_cast<int>(std::floor(std::log10(lo)));
    const int last = static_cast<int>(std::ceil(std::log10(hi)));
    for (int k = first; k <= last; ++k)
        for (int m = 0; m < mantissas; ++m) {
            const double v = kMantissas[m] * std::pow(10.0, k);
            if (v >= lo * (1 - eps) && v <= hi * (1 + eps)) ticks << v;
        }
    return ticks;
}

double logTickBelow(double v, int base) {
    if (base == 2) return std::exp2(std::floor(std::log2(v) + 1e-9));
    const QList<double> below = logTicks(std::pow(10.0, std::floor(std::log10(v))), v, 10);
    return below.isEmpty() ? std::pow(10.0, std::floor(std::log10(v))) : below.back();
}

double logTickAbove(double v, int base) {
    if (base == 2) return std::exp2(std::ceil(std::log2(v) - 1e-9));
    const QList<double> above = logTicks(v, std::pow(10.0, std::ceil(std::log10(v))), 10);
    return above.isEmpty() ? std::pow(10.0, std::ceil(std::log10(v))) : above.front();
}

QString tickLabel(double v) { return QString::number(v, 'g', 6); }

double dodgeX(double x, int series, int count, double slot) {
    if (count < 2) return x;
    return x + (series - (count - 1) / 2.0) * slot;
}

// Qt Charts has no error bars: this item, a child of the chart, draws them in the plot
// area from data coordinates, so they follow zoom, resize and exports. It also writes the
// labels of points (model sizes) next to them.
class ErrorBarsItem : public QGraphicsItem {
public:
    struct Bar {
        QLineSeries* series;
        double x, lo, hi;  // drawn coordinates; lo = -inf: below any axis
        QColor color;
    };
    struct Label {
        QLineSeries* series;
        QPointF at;
        QString text;
    };
    explicit ErrorBarsItem(QChart* chart) : QGraphicsItem(chart), chart_(chart) { setZValue(50); }
    void setBars(QList<Bar> bars, QList<Label> labels, qreal width, QColor text) {
        bars_ = std::move(bars);
        labels_ = std::move(labels);
        width_ = width;
        text_ = text;
        geometryChanged();
    }
    void geometryChanged() {
        prepareGeometryChange();
        update();
    }
    int count() const { return static_cast<int>(bars_.size()); }
    int clipped(double bottom) const {
        return static_cast<int>(
            std::count_if(bars_.begin(), bars_.end(), [&](const Bar& b) { return b.lo < bottom; }));
    }
    QStringList labels() const {
        QStringList out;
        for (const Label& l : labels_) out << l.text;
        return out;
    }
    QRectF boundingRect() const override { return chart_->plotArea().adjusted(-2, -2, 2, 2); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        p->save();
        const QRectF area = chart_->plotArea();
        p->setClipRect(area);
        p->setRenderHint(QPainter::Antialiasing);
        const qreal cap = 4 + width_;
        for (const Bar& b : bars_) {
            if (!(b.hi > b.lo) || !b.series->isVisible())
                continue;  // a series hidden by its legend
            const QPointF top = chart_->mapToPosition(QPointF(b.x, b.hi), b.series);
            const bool open =
                !std::isfinite(b.lo) ||
                chart_->mapToPosition(QPointF(b.x, b.lo), b.series).y() > area.bottom();
            const QPointF bottom = open ? QPointF(top.x(), area.bottom())
                                        : chart_->mapToPosition(QPointF(b.x, b.lo), b.series);
            QPen pen(b.color);
            pen.setWidthF(width_);
            p->setPen(pen);
            p->drawLine(top, bottom);
            p->drawLine(QPointF(top.x() - cap, top.y()), QPointF(top.x() + cap, top.y()));
            if (open) {
                // An open end: the bar goes on below the axis; a chevron says so.
                p->drawLine(QPointF(bottom.x() - cap, bottom.y() - cap), bottom);
                p->drawLine(QPointF(bottom.x() + cap, bottom.y() - cap), bottom);
            } else {
                p->drawLine(QPointF(bottom.x() - cap, bottom.y()),
                            QPointF(bottom.x() + cap, bottom.y()));
            }
        }
        p->setPen(text_);
        for (const Label& l : labels_) {
            const QPointF at = chart_->mapToPosition(l.at, l.series);
            p->drawText(at + QPointF(8, -8), l.text);
        }
        p->restore();
    }

private:
    QChart* chart_;
    QList<Bar> bars_;
    QList<Label> labels_;
    qreal width_ = 1.5;
    QColor text_;
};

SweepChart::SweepChart(SeriesModel* model, QWidget* parent, const QString& fileStem)
    : ChartPane(parent), model_(model), stem_(fileStem) {
    bars_ = new ErrorBarsItem(chart());
    connect(chart(), &QChart::plotAreaChanged, this, [this] { bars_->geometryChanged(); });
    connect(model, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    // Category axes throughout: their labelled ticks can sit anywhere, which log scales
    // (log10 of the values) and categories need; linear scales get round ticks the same way.
    for (QCategoryAxis** a : {&x_, &y_}) {
        *a = new QCategoryAxis;
        (*a)->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
        chart()->addAxis(*a, a == &x_ ? Qt::AlignBottom : Qt::AlignLeft);
    }
    interaction()->setValueText([this](const QPointF& v) {
        const QStringList cats = model_ ? model_->xCategories() : QStringList();
        const int i = static_cast<int>(std::lround(v.x()));
        const QString x = xCategorical_ ? (i >= 0 && i < cats.size() ? cats[i] : QString())
                                        : ChartInteraction::formatValue(fromAxisX(v.x()));
        return tr("x: %1\ny: %2 ms").arg(x, ChartInteraction::formatValue(fromAxisY(v.y())));
    });
    applyChartStyle(chart(), style());
    redraw();
}

void SweepChart::setLogY(bool on) {
    logY_ = on;
    requestRedraw();
}

QString SweepChart::chartTitle() const { return model_ ? model_->chartTitle() : QString(); }

int SweepChart::plottedPoints() const {
    int n = 0;
    for (auto* s : lines_) n += static_cast<int>(s->count());
    return n;
}

int SweepChart::errorBarCount() const { return bars_->count(); }

int SweepChart::clippedErrorBars() const { return bars_->clipped(y_->min()); }

QStringList SweepChart::pointLabels() const { return bars_->labels(); }

QList<QPointF> SweepChart::seriesPoints(int series) const {
    return series >= 0 && series < lines_.size() ? lines_[series]->points() : QList<QPointF>{};
}

double SweepChart::toAxisX(double x) const { return xLog_ ? std::log10(x) : x; }
double SweepChart::toAxisY(double y) const { return yIsLog_ ? std::log10(y) : y; }
double SweepChart::fromAxisX(double x) const { return xLog_ ? std::pow(10.0, x) : x; }
double SweepChart::fromAxisY(double y) const { return yIsLog_ ? std::pow(10.0, y) : y; }

double SweepChart::xAxisMin() const { return x_->min(); }
double SweepChart::xAxisMax() const { return x_->max(); }

QStringList SweepChart::xTickLabels() const { return x_->categoriesLabels(); }
QStringList SweepChart::yTickLabels() const { return y_->categoriesLabels(); }

// A log axis: linear over log10, a labelled tick (and grid line) at each of logTicks().
static void clearCategories(QCategoryAxis* axis) {
    for (const QString& label : axis->categoriesLabels()) axis->remove(label);
}

void SweepChart::setLogAxis(QCategoryAxis* axis, double lo, double hi, int base) {
    clearCategories(axis);
    axis->setStartValue(std::log10(lo));
    for (double t : logTicks(lo, hi, base)) axis->append(tickLabel(t), std::log10(t));
    axis->setRange(std::log10(lo), std::log10(hi));
}

// A linear axis: round ticks (1-2-5 × 10^k apart), the range out to the ticks around it.
void SweepChart::setLinearAxis(QCategoryAxis* axis, double lo, double hi) {
    clearCategories(axis);
    if (!(hi > lo)) hi = lo + 1;
    const double raw = (hi - lo) / 6;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * mag;
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * mag) {
            step = m * mag;
            break;
        }
    const double first = std::floor(lo / step + 1e-9) * step,
                 last = std::ceil(hi / step - 1e-9) * step;
    axis->setStartValue(first);
    for (double v = first; v <= last + step * 1e-6; v += step)
        axis->append(tickLabel(std::abs(v) < step * 1e-9 ? 0 : v), v);
    axis->setRange(first, last);
}

void SweepChart::restyle() {
    applyChartStyle(chart(), style());
    for (int i = 0; i < lines_.size(); ++i) {
        QPen pen(seriesColor(i));
        pen.setWidthF(style().lineWidth);
        lines_[i]->setPen(pen);
        lines_[i]->setColor(seriesColor(i));
        lines_[i]->setMarkerSize(style().markerSize);
    }
    requestRedraw();  // error bar colours
}

void SweepChart::redraw() {
    if (!model_) return;
    const auto& rows = model_->rows();
    const QStringList names = model_->seriesNames();
    QChart* c = chart();
    if (names != names_) {
        for (QLineSeries* s : lines_) {
            c->removeSeries(s);
            delete s;
        }
        lines_.clear();
        for (const QString& n : names) {
            auto* s = new QLineSeries;
            s->setName(n);
            s->setPointsVisible(true);
            c->addSeries(s);
            s->attachAxis(x_);
            s->attachAxis(y_);
            lines_ << s;
        }
        names_ = names;
        restyle();
    }
    const double xScale = model_->xScale();
    const int base = model_->xLogBase();
    const QStringList categories = model_->xCategories();

    // The axes' kinds: a categorical x, a log x where every x is positive and the values
    // span enough (a decade, two octaves) or the model asks for it; log y when asked.
    double xmin = INFINITY, xmax = -INFINITY;
    for (const auto& r : rows) {
        xmin = std::min(xmin, r.x * xScale);
        xmax = std::max(xmax, r.x * xScale);
    }
    const bool any = xmax >= xmin;
    xCategorical_ = !categories.isEmpty();
    xLog_ = !xCategorical_ && any && xmin > 0 &&
            (model_->alwaysLogX() || xmax / xmin >= (base == 2 ? 4 : 10));
    yIsLog_ = logY_;

    // Which series share each x: those are nudged apart by a fraction of the axis.
    QMap<double, QList<int>> seriesAt;
    for (const auto& r : rows) {
        const int i = static_cast<int>(names.indexOf(r.series));
        if (i >= 0 && !seriesAt[r.x].contains(i)) seriesAt[r.x] << i;
    }
    const double span = any ? toAxisX(std::max(xmax, xmin)) - toAxisX(xmin) : 0;
    const double slot = xCategorical_ ? 0.1 : (span > 0 ? 0.012 * span : 0.05);

    QList<QList<QPointF>> data(names.size());
    plotted_.clear();
    QList<ErrorBarsItem::Bar> bars;
    QMap<double, ErrorBarsItem::Label> labels;  // one per x, above its highest point
    double ymax = 0, ymin = INFINITY;
    for (const auto& r : rows) {
        const int i = static_cast<int>(names.indexOf(r.series));
        const double x = r.x * xScale;
        if (i < 0 || (xLog_ && !(x > 0)) || (yIsLog_ && !(r.mean > 0))) continue;
        const QList<int>& sharing = seriesAt[r.x];
        const double ax =
            dodgeX(toAxisX(x), static_cast<int>(sharing.indexOf(i)),
                   model_->dodgeSharedX() ? static_cast<int>(sharing.size()) : 1, slot);
        const double lo = r.mean - r.std;
        data[i] << QPointF(ax, toAxisY(r.mean));
        plotted_[r.series] << qMakePair(data[i].back(), r.source);
        bars << ErrorBarsItem::Bar{lines_[i], ax, (yIsLog_ && !(lo > 0)) ? -INFINITY : toAxisY(lo),
                                   toAxisY(r.mean + r.std), seriesColor(i)};
        if (model_->labelPoints() &&
            (!labels.contains(r.x) || labels[r.x].at.y() < toAxisY(r.mean)))
            labels[r.x] = ErrorBarsItem::Label{lines_[i], QPointF(ax, toAxisY(r.mean)), r.xLabel};
        ymax = std::max(ymax, r.mean + r.std);
        // The axis reaches down to a bar's end within a decade of its mean; longer bars
        // (std close to or above the mean) run off the bottom, open.
        ymin = std::min(ymin, lo >= r.mean / 10 ? lo : r.mean);
    }
    for (int i = 0; i < lines_.size(); ++i) lines_[i]->replace(data[i]);
    bars_->setBars(bars, labels.values(), style().lineWidth * 0.75, style().foreground);

    if (xCategorical_) {
        clearCategories(x_);
        x_->setStartValue(-0.5);
        for (int i = 0; i < categories.size(); ++i) x_->append(categories[i], i);
        x_->setRange(-0.5, categories.size() - 0.5);
    } else if (xLog_) {
        // From a labelled tick below the smallest x to one above the largest.
        setLogAxis(x_, logTickBelow(xmin / 1.15, base), logTickAbove(xmax * 1.15, base), base);
    } else {
        if (!any) xmin = 0, xmax = 100;
        const double pad = xmax > xmin ? 0.12 * (xmax - xmin) : std::max(0.5, 0.5 * std::abs(xmin));
        setLinearAxis(x_, xmin >= 0 ? std::max(0.0, xmin - pad) : xmin - pad, xmax + pad);
    }
    if (yIsLog_) {
        // From the 1-2-5 tick below the smallest mean to the one above the largest bar:
        // bars that reach lower run to the bottom edge, open.
        const double lo = std::isfinite(ymin) && ymin > 0 ? ymin / 1.25 : 0.1;
        const double hi = ymax > lo ? ymax * 1.1 : lo * 10;
        setLogAxis(y_, logTickBelow(lo, 10), logTickAbove(hi, 10), 10);
    } else {
        setLinearAxis(y_, 0, ymax > 0 ? ymax * 1.1 : 1);
    }
    x_->setTitleText(model_->xAxisTitle());
    y_->setTitleText(model_->yAxisTitle());
    c->setTitle(model_->chartTitle());
}

int SweepChart::sourceAt(const QPointF& chartPos) const {
    const auto hit = interaction()->nearestPoint(chartPos);
    if (!hit) return -1;
    for (const auto& [point, source] : plotted_.value(hit->series))
        if (point == hit->value) return source;
    return -1;
}

std::optional<QPointF> SweepChart::positionOf(int source) const {
    for (auto it = plotted_.begin(); it != plotted_.end(); ++it)
        for (const auto& [point, src] : it.value())
            if (src == source)
                for (QLineSeries* line : lines_)
                    if (line->name() == it.key()) return chart()->mapToPosition(point, line);
    return std::nullopt;
}

}  // namespace ts::ui
