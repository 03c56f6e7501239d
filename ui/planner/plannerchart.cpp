#include "ui/planner/plannerchart.h"

#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <algorithm>
#include <cmath>

#include "planner/planner_report.h"
#include "ui/common/chartinteraction.h"
#include "ui/common/format.h"

namespace ts::ui {

namespace {

QLogValueAxis* plannerLogAxis(const QString& title, double lo, double hi) {
    auto* a = new QLogValueAxis;
    a->setBase(10);
    a->setLabelFormat(QStringLiteral("%g"));
    a->setMinorTickCount(-1);
    a->setTitleText(title);
    const double dlo = std::floor(std::log10(lo)),
                 dhi = std::max(dlo + 1, std::ceil(std::log10(hi)));
    a->setRange(std::pow(10.0, dlo), std::pow(10.0, dhi));
    return a;
}

}  // namespace

PlannerChart::PlannerChart(QWidget* parent) : ChartPane(parent) {
    interaction()->setValueText([](const QPointF& v) {
        return tr("x %1\n%2").arg(v.x(), 0, 'g', 4).arg(qstr(formatSeconds(v.y())));
    });
    redraw();
}

void PlannerChart::setCurve(const std::optional<PlannerCurve>& curve) {
    curve_ = curve;
    requestRedraw();
}

QString PlannerChart::chartTitle() const {
    if (!curve_) return tr("Compute against communication (run the planner)");
    QString t = tr("%1, %2 pass of one layer: compute vs communication")
                    .arg(qstr(strategyTitle(curve_->strategy)), qstr(curve_->pass));
    if (curve_->crossover)
        t += tr("; they cross at %1").arg(*curve_->crossover, 0, 'g', 4);
    else
        t += tr("; they do not cross here");
    return t;
}

int PlannerChart::seriesCount() const { return static_cast<int>(chart()->series().size()); }

int PlannerChart::plottedPoints(const QString& series) const {
    for (QAbstractSeries* s : chart()->series())
        if (s->name() == series)
            if (auto* xy = qobject_cast<QXYSeries*>(s)) return static_cast<int>(xy->count());
    return 0;
}

void PlannerChart::redraw() {
    QChart* c = chart();
    c->removeAllSeries();
    for (QAbstractAxis* a : c->axes()) {
        c->removeAxis(a);
        delete a;
    }
    c->setTitle(chartTitle());
    double xlo = 1, xhi = 10, ylo = 1e-6, yhi = 1e-3;
    QList<QXYSeries*> series;
    if (curve_ && !curve_->x.empty()) {
        auto* compute = new QLineSeries;
        compute->setName(tr("compute"));
        auto* comm = new QLineSeries;
        comm->setName(tr("communication"));
        ylo = std::numeric_limits<double>::max();
        yhi = 0;
        for (size_t i = 0; i < curve_->x.size(); ++i) {
            const double x = curve_->x[i];
            compute->append(x, curve_->compute_s[i]);
            if (curve_->comm_s[i] > 0) comm->append(x, curve_->comm_s[i]);
            for (double y : {curve_->compute_s[i], curve_->comm_s[i]})
                if (y > 0) {
                    ylo = std::min(ylo, y);
                    yhi = std::max(yhi, y);
                }
        }
        xlo = curve_->x.front();
        xhi = curve_->x.back();
        series << compute << comm;
        auto* here = new QScatterSeries;
        here->setName(tr("these inputs"));
        here->append(curve_->current_x, curve_->current_compute_s);
        if (curve_->current_comm_s > 0) here->append(curve_->current_x, curve_->current_comm_s);
        series << here;
        if (curve_->crossover) {
            auto* cross = new QScatterSeries;
            cross->setName(tr("crossover"));
            cross->append(*curve_->crossover, curve_->crossover_s);
            series << cross;
        }
        if (yhi <= 0) yhi = 1;
        if (ylo >= yhi) ylo = yhi / 10;
    }
    auto* x = plannerLogAxis(curve_ ? qstr(curve_->x_label) : tr("tokens per device"), xlo, xhi);
    auto* y = plannerLogAxis(tr("seconds"), ylo, yhi);
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    for (QXYSeries* s : series) {
        c->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
    }
    restyle();
}

void PlannerChart::restyle() {
    applyChartStyle(chart(), style());
    for (QAbstractAxis* a : chart()->axes()) applyAxisStyle(a, style());
    int i = 0;
    for (QAbstractSeries* s : chart()->series()) {
        const QColor colour = style().seriesColor(i++);
        if (auto* sc = qobject_cast<QScatterSeries*>(s)) {
            sc->setColor(colour);
            sc->setBorderColor(style().foreground);
            sc->setMarkerSize(style().markerSize + 4);
        } else if (auto* l = qobject_cast<QLineSeries*>(s)) {
            QPen pen(colour);
            pen.setWidthF(style().lineWidth);
            l->setPen(pen);
        }
    }
}

}  // namespace ts::ui
