#include "ui/precision/precisionchart.h"

#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/common/chartinteraction.h"
#include "ui/common/decimate.h"

namespace ts::ui {

namespace {
constexpr int kMaxPoints = 3000;  // per line: Qt Charts slows down well beyond
}

PrecisionChart::PrecisionChart(const QString& fileStem, QWidget* parent)
    : ChartPane(parent), stem_(fileStem) {
    interaction()->setValueText([](const QPointF& v) {
        return tr("step %1\n%2").arg(std::lround(v.x())).arg(ChartInteraction::formatValue(v.y()));
    });
    redraw();
}

void PrecisionChart::setLines(const QList<Line>& lines) {
    lines_ = lines;
    requestRedraw();
}

void PrecisionChart::setTitles(const QString& title, const QString& xTitle, const QString& yTitle) {
    title_ = title;
    xTitle_ = xTitle;
    yTitle_ = yTitle;
    requestRedraw();
}

void PrecisionChart::setLogY(bool on) {
    logY_ = on;
    requestRedraw();
}

int PrecisionChart::seriesCount() const { return static_cast<int>(chart()->series().size()); }

int PrecisionChart::plottedPoints(const QString& series) const {
    for (QAbstractSeries* s : chart()->series())
        if (s->name() == series)
            if (auto* xy = qobject_cast<QXYSeries*>(s)) return static_cast<int>(xy->count());
    return 0;
}

void PrecisionChart::redraw() {
    QChart* c = chart();
    c->removeAllSeries();
    for (QAbstractAxis* a : c->axes()) {
        c->removeAxis(a);
        delete a;
    }
    c->setTitle(title_);
    auto* x = new QValueAxis;
    x->setTitleText(xTitle_);
    x->setLabelFormat(QStringLiteral("%d"));
    QAbstractAxis* y = nullptr;
    if (logY_) {
        auto* ly = new QLogValueAxis;
        ly->setBase(10);
        ly->setLabelFormat(QStringLiteral("%g"));
        ly->setMinorTickCount(-1);
        y = ly;
    } else {
        auto* ly = new QValueAxis;
        ly->setLabelFormat(QStringLiteral("%.4g"));
        y = ly;
    }
    y->setTitleText(yTitle_);
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    double xmin = 1, xmax = 10, ymin = std::numeric_limits<double>::max(),
           ymax = std::numeric_limits<double>::lowest();
    bool any = false;
    for (const Line& line : lines_) {
        QList<QPointF> pts;
        pts.reserve(line.points.size());
        for (const QPointF& p : line.points)
            if (std::isfinite(p.y()) && (!logY_ || p.y() > 0)) pts << p;
        if (!line.markers) pts = decimateMinMax(pts, kMaxPoints);
        QXYSeries* s = line.markers ? static_cast<QXYSeries*>(new QScatterSeries) : new QLineSeries;
        s->setName(line.name);
        s->replace(pts);
        c->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
        for (const QPointF& p : pts) {
            if (!any) xmin = xmax = p.x();
            any = true;
            xmin = std::min(xmin, p.x());
            xmax = std::max(xmax, p.x());
            ymin = std::min(ymin, p.y());
            ymax = std::max(ymax, p.y());
        }
    }
    if (!any) {
        ymin = logY_ ? 1e-8 : 0;
        ymax = 1;
    }
    if (xmax <= xmin) xmax = xmin + 1;
    x->setRange(xmin, xmax);
    if (logY_) {
        // A labelled tick per power of the base: over many decades, a base of 100 or more
        // keeps the labels apart (Qt Charts elides labels that would overlap).
        const double dlo = std::floor(std::log10(ymin)),
                     dhi = std::max(dlo + 1, std::ceil(std::log10(ymax)));
        const int step = std::max(1, static_cast<int>(std::ceil((dhi - dlo) / 5.0)));
        const double lo = std::pow(10.0, std::floor(dlo / step) * step);
        const double hi = std::pow(10.0, std::ceil(dhi / step) * step);
        static_cast<QLogValueAxis*>(y)->setBase(std::pow(10.0, step));
        y->setRange(lo, hi);
    } else {
        // Counts and losses start at zero; a difference may go below.
        double lo = ymin >= 0 ? 0.0 : ymin, hi = ymax;
        if (hi <= lo) hi = lo + 1;  // all zeros (no underflow): a flat line at the bottom
        const double pad = (hi - lo) * 0.05;
        y->setRange(ymin >= 0 ? lo : lo - pad, hi + pad);
        static_cast<QValueAxis*>(y)->applyNiceNumbers();
    }
    restyle();
}

void PrecisionChart::restyle() {
    applyChartStyle(chart(), style());
    for (QAbstractAxis* a : chart()->axes()) applyAxisStyle(a, style());
    const auto series = chart()->series();
    for (int i = 0; i < series.size() && i < lines_.size(); ++i) {
        auto* s = qobject_cast<QXYSeries*>(series[i]);
        if (!s) continue;
        const QColor colour = style().seriesColor(lines_[i].colour);
        if (auto* sc = qobject_cast<QScatterSeries*>(s)) {
            sc->setColor(colour);
            sc->setBorderColor(style().foreground);
            sc->setMarkerSize(style().markerSize + 3);
            sc->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
        } else {
            QPen pen(colour);
            pen.setWidthF(style().lineWidth);
            s->setPen(pen);
        }
    }
}

}  // namespace ts::ui
