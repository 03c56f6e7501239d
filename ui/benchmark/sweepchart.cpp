#include "benchmark/sweepchart.h"

#include <QGraphicsItem>
#include <QPainter>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

#include "benchmark/seriesmodel.h"

namespace ts::ui {

// Qt Charts has no error bars: this item, a child of the chart, draws them in the plot
// area from data coordinates, so they follow zoom, resize and exports.
class ErrorBarsItem : public QGraphicsItem {
public:
    struct Bar {
        QLineSeries* series;
        double x, lo, hi;
        QColor color;
    };
    explicit ErrorBarsItem(QChart* chart) : QGraphicsItem(chart), chart_(chart) { setZValue(50); }
    void setBars(QList<Bar> bars, qreal width) {
        bars_ = std::move(bars);
        width_ = width;
        geometryChanged();
    }
    void geometryChanged() {
        prepareGeometryChange();
        update();
    }
    int count() const { return static_cast<int>(bars_.size()); }
    QRectF boundingRect() const override { return chart_->plotArea().adjusted(-2, -2, 2, 2); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        p->save();
        p->setClipRect(chart_->plotArea());
        p->setRenderHint(QPainter::Antialiasing);
        const qreal cap = 4 + width_;
        for (const Bar& b : bars_) {
            if (!(b.hi > b.lo)) continue;
            const QPointF top = chart_->mapToPosition(QPointF(b.x, b.hi), b.series);
            const QPointF bottom = chart_->mapToPosition(QPointF(b.x, b.lo), b.series);
            QPen pen(b.color);
            pen.setWidthF(width_);
            p->setPen(pen);
            p->drawLine(top, bottom);
            p->drawLine(QPointF(top.x() - cap, top.y()), QPointF(top.x() + cap, top.y()));
            p->drawLine(QPointF(bottom.x() - cap, bottom.y()), QPointF(bottom.x() + cap, bottom.y()));
        }
        p->restore();
    }

private:
    QChart* chart_;
    QList<Bar> bars_;
    qreal width_ = 1.5;
};

SweepChart::SweepChart(SeriesModel* model, QWidget* parent, const QString& fileStem)
    : ChartPane(parent), model_(model), stem_(fileStem) {
    bars_ = new ErrorBarsItem(chart());
    connect(chart(), &QChart::plotAreaChanged, this, [this] { bars_->geometryChanged(); });
    connect(model, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    rebuildAxes(true, 10, false);
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

void SweepChart::rebuildAxes(bool xLog, int xBase, bool yLog) {
    QChart* c = chart();
    if (x_) {
        c->removeAxis(x_);
        delete x_;
    }
    if (y_) {
        c->removeAxis(y_);
        delete y_;
    }
    if (xLog) {
        auto* ax = new QLogValueAxis;
        ax->setBase(xBase);
        ax->setLabelFormat(xBase == 2 ? QStringLiteral("%d") : QStringLiteral("%g"));
        ax->setMinorTickCount(xBase == 10 ? 8 : 0);
        x_ = ax;
    } else {
        auto* ax = new QValueAxis;
        ax->setLabelFormat(QStringLiteral("%g"));
        x_ = ax;
    }
    if (yLog) {
        auto* ay = new QLogValueAxis;
        ay->setBase(10);
        ay->setLabelFormat(QStringLiteral("%g"));
        ay->setMinorTickCount(8);
        y_ = ay;
    } else {
        auto* ay = new QValueAxis;
        ay->setLabelFormat(QStringLiteral("%.5g"));
        y_ = ay;
    }
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    for (QLineSeries* s : lines_) {
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    xBase_ = xLog ? xBase : 0;
    yIsLog_ = yLog;
    applyChartStyle(c, style());
}

void SweepChart::restyle() {
    applyChartStyle(chart(), style());
    for (int i = 0; i < lines_.size(); ++i) {
        QPen pen(style().seriesColor(i));
        pen.setWidthF(style().lineWidth);
        lines_[i]->setPen(pen);
        lines_[i]->setColor(style().seriesColor(i));
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

    QList<QList<QPointF>> data(names.size());
    QList<ErrorBarsItem::Bar> bars;
    double xmin = INFINITY, xmax = 0, ymax = 0, ymin = INFINITY;
    for (const auto& r : rows) {
        const int i = static_cast<int>(names.indexOf(r.series));
        if (i < 0) continue;
        const double x = r.x * xScale;
        if (!(x > 0)) continue;
        data[i] << QPointF(x, r.mean);
        bars << ErrorBarsItem::Bar{lines_[i], x, std::max(r.mean - r.std, r.mean * 0.01), r.mean + r.std,
                                   style().seriesColor(i)};
        xmin = std::min(xmin, x);
        xmax = std::max(xmax, x);
        ymax = std::max(ymax, r.mean + r.std);
        ymin = std::min(ymin, std::max(r.mean - r.std, r.mean * 0.5));
    }
    if (xmax <= 0) {
        xmin = 1;
        xmax = 100;
    }
    // A log axis only labels powers of its base: worth it from about a decade (or two
    // octaves) on; closer values read better on a linear axis.
    const bool xLog = xmax / xmin >= (base == 2 ? 4 : 10);
    if (xLog != (xBase_ != 0) || (xLog && base != xBase_) || logY_ != yIsLog_) rebuildAxes(xLog, base, logY_);
    for (int i = 0; i < lines_.size(); ++i) lines_[i]->replace(data[i]);
    bars_->setBars(bars, style().lineWidth * 0.75);

    auto powerBelow = [](double v, double b) { return std::pow(b, std::floor(std::log(v) / std::log(b) + 1e-9)); };
    auto powerAbove = [](double v, double b) { return std::pow(b, std::ceil(std::log(v) / std::log(b) - 1e-9)); };
    if (xLog) {
        x_->setRange(powerBelow(xmin / 1.15, base), powerAbove(xmax * 1.15, base));
    } else {
        const double pad = xmax > xmin ? 0.12 * (xmax - xmin) : 0.5 * xmin;
        x_->setRange(std::max(0.0, xmin - pad), xmax + pad);
        static_cast<QValueAxis*>(x_)->applyNiceNumbers();
    }
    if (yIsLog_) {
        const double lo = std::isfinite(ymin) && ymin > 0 ? ymin : 0.1;
        y_->setRange(powerBelow(lo, 10), powerAbove(ymax > lo ? ymax : lo * 10, 10));
    } else {
        y_->setRange(0, ymax > 0 ? ymax * 1.1 : 1);
        static_cast<QValueAxis*>(y_)->applyNiceNumbers();
    }
    x_->setTitleText(model_->xAxisTitle());
    y_->setTitleText(model_->yAxisTitle());
    const QString title = model_->chartTitle();
    c->setTitle(title);
}

}  // namespace ts::ui
