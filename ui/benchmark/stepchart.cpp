#include "ui/benchmark/stepchart.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/stepmodel.h"
#include "ui/common/chartinteraction.h"
#include "ui/common/decimate.h"
#include "ui/common/dimensions.h"
#include "ui/common/pointformat.h"

namespace ts::ui {

// A "nice" tick interval giving about `ticks` ticks over `range`.
static double niceInterval(double range, int ticks) {
    if (range <= 0) return 1;
    const double raw = range / ticks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) return std::max(1.0, m * mag);
    return std::max(1.0, 10 * mag);
}

StepChart::StepChart(StepModel* steps, ResultModel* results, QWidget* parent)
    : ChartPane(parent), steps_(steps), results_(results) {
    QChart* c = chart();
    warmTop_ = new QLineSeries(this);
    warmBottom_ = new QLineSeries(this);
    warmup_ = new QAreaSeries(warmTop_, warmBottom_);
    warmup_->setName(tr("warm-up"));
    forward_ = new QLineSeries;
    forward_->setName(tr("forward"));
    backward_ = new QLineSeries;
    backward_->setName(tr("backward"));
    optimizer_ = new QLineSeries;
    optimizer_->setName(tr("optimizer"));
    total_ = new QLineSeries;
    total_->setName(tr("total"));
    c->addSeries(warmup_);
    for (QLineSeries* s : {forward_, backward_, optimizer_, total_}) {
        s->setPointsVisible(true);
        c->addSeries(s);
    }
    x_ = new QValueAxis;
    x_->setTitleText(tr("step"));
    x_->setLabelFormat(QStringLiteral("%d"));
    x_->setTickType(QValueAxis::TicksDynamic);
    y_ = new QValueAxis;
    y_->setTitleText(tr("time (ms)"));
    y_->setLabelFormat(QStringLiteral("%.5g"));
    c->addAxis(x_, Qt::AlignBottom);
    c->addAxis(y_, Qt::AlignLeft);
    for (QAbstractSeries* s : c->series()) {
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    restyle();
    interaction()->setValueText([](const QPointF& v) {
        return tr("step %1\n%2 ms")
            .arg(std::lround(v.x()))
            .arg(ChartInteraction::formatValue(v.y()));
    });
    connect(steps, &QAbstractItemModel::rowsInserted, this, [this] { requestRedraw(); });
    connect(steps, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    connect(results, &QAbstractItemModel::dataChanged, this, [this] { requestRedraw(); });
    connect(results, &QAbstractItemModel::modelReset, this, [this] { requestRedraw(); });
    redraw();
}

void StepChart::setPoint(int point) {
    point_ = point;
    requestRedraw();
}

void StepChart::setRunPointCount(int count) {
    runPoints_ = count;
    requestRedraw();
}

void StepChart::setOverlay(bool on) {
    overlay_ = on;
    requestRedraw();
}

void StepChart::paintPoint(int point, QPainter& painter, const QRectF& target) {
    const int wasPoint = point_;
    const bool wasOverlay = overlay_;
    point_ = point;
    overlay_ = false;
    requestRedraw();
    paintChart(painter, target);  // draws the pending change first
    point_ = wasPoint;
    overlay_ = wasOverlay;
    requestRedraw();
    flushRedraw();
}

int StepChart::plottedSteps() const { return static_cast<int>(total_->count()); }

QString StepChart::chartTitle() const {
    return overlay_ ? tr("Step timings, every point") : pointTitle(shown_);
}

void StepChart::restyle() {
    applyChartStyle(chart(), style());
    const QList<QLineSeries*> lines = {forward_, backward_, optimizer_, total_};
    for (int i = 0; i < lines.size(); ++i) {
        QPen pen(style().seriesColor(i));
        pen.setWidthF(i == 3 ? style().lineWidth * 1.3 : style().lineWidth);
        lines[i]->setPen(pen);
        lines[i]->setMarkerSize(style().markerSize);
        lines[i]->setColor(style().seriesColor(i));
    }
    for (int i = 0; i < overlayLines_.size(); ++i) {
        QPen pen(style().seriesColor(i));
        pen.setWidthF(style().lineWidth);
        overlayLines_[i]->setPen(pen);
        overlayLines_[i]->setColor(style().seriesColor(i));
        overlayLines_[i]->setMarkerSize(style().markerSize);
    }
    warmup_->setBrush(style().warmup);
    warmup_->setPen(Qt::NoPen);
    warmup_->setBorderColor(Qt::transparent);
}

namespace {
// Why a point has no steps to draw: an empty chart says so instead of staying blank.
QString noStepsReason(const ResultModel::Entry& e) {
    if (!e.finished) return QObject::tr("(no step finished yet)");
    if (e.result.status == Status::Ok) return QObject::tr("(no steps)");
    const QString why = QString::fromStdString(e.result.error).left(160);
    return QObject::tr("(%1, no steps measured%2)")
        .arg(QString::fromUtf8(toString(e.result.status).data(),
                               static_cast<qsizetype>(toString(e.result.status).size())),
             why.isEmpty() ? QString() : QStringLiteral(": ") + why);
}
}  // namespace

// "point 2 of 3: small · ctx 256 · bs 4 · fp32 · naive · train · warm-up 5 · steps 10 · cuda":
// the index of the run's total, with every value that can set points apart (describeConfig).
QString StepChart::pointTitle(int point) const {
    QString title = tr("Step timings");
    if (!results_ || point < 0 || point >= results_->rowCount()) return title;
    const PointConfig& c = results_->entries()[static_cast<size_t>(point)].result.config;
    const int total = std::max(runPoints_, results_->rowCount());
    return title + tr(" — point %1 of %2: %3").arg(point + 1).arg(total).arg(describeConfig(c));
}

void StepChart::redraw() {
    if (!steps_) return;
    if (overlay_) {
        drawOverlay();
    } else {
        for (QLineSeries* s : overlayLines_) s->setVisible(false);
        drawPoint(point_ >= 0 ? point_
                              : (results_ && results_->rowCount() > 0 ? results_->rowCount() - 1
                                                                      : steps_->lastPoint()));
    }
}

void StepChart::drawPoint(int point) {
    shown_ = point;
    const auto [first, count] = point >= 0 ? steps_->rowsOfPoint(point) : std::pair<int, int>{0, 0};
    QList<QPointF> f, b, o, t;
    f.reserve(count);
    b.reserve(count);
    o.reserve(count);
    t.reserve(count);
    int warm = 0;
    double ymax = 0;
    bool anyBackward = false, anyOptimizer = false;
    for (int r = first; r < first + count; ++r) {
        const StepSample& s = steps_->sample(r);
        const double x = s.index;
        f << QPointF(x, s.forward_ms);
        b << QPointF(x, s.backward_ms);
        o << QPointF(x, s.optimizer_ms);
        t << QPointF(x, s.total_ms);
        anyBackward |= s.backward_ms > 0;
        anyOptimizer |= s.optimizer_ms > 0;
        if (s.warmup) ++warm;
        ymax = std::max({ymax, s.total_ms, s.forward_ms + s.backward_ms + s.optimizer_ms});
    }
    constexpr int kMaxPoints = 2000;  // more would only slow Qt Charts down; spikes are kept
    forward_->replace(decimateMinMax(f, kMaxPoints));
    backward_->replace(decimateMinMax(b, kMaxPoints));
    optimizer_->replace(decimateMinMax(o, kMaxPoints));
    total_->replace(decimateMinMax(t, kMaxPoints));
    // Markers help to count a few steps; on thousands they only cost (Qt Charts lays out
    // each one).
    for (QLineSeries* line : {forward_, backward_, optimizer_, total_})
        line->setPointsVisible(count <= 200);
    forward_->setVisible(true);
    total_->setVisible(true);
    // Phases a mode does not have (backward in forward mode) stay out of the legend.
    backward_->setVisible(anyBackward || count == 0);
    optimizer_->setVisible(anyOptimizer || count == 0);
    for (QLineSeries* s : {forward_, backward_, optimizer_, total_})
        for (QLegendMarker* m : chart()->legend()->markers(s)) m->setVisible(s->isVisible());

    shadedWarmup_ = warm;
    shownSteps_ = count;
    setRanges(count, ymax);
    const double w1 = warm - 0.5;
    warmTop_->replace({QPointF(x_->min(), y_->max()), QPointF(w1, y_->max())});
    warmBottom_->replace({QPointF(x_->min(), 0), QPointF(w1, 0)});
    warmup_->setVisible(warm > 0);
    for (QLegendMarker* m : chart()->legend()->markers(warmup_)) m->setVisible(warm > 0);

    QString title = pointTitle(point);
    if (count == 0 && (!results_ || point < 0 || point >= results_->rowCount()))
        title += tr(" — press Run");
    else if (count == 0)
        title += '\n' + noStepsReason(results_->entries()[static_cast<size_t>(point)]);
    chart()->setTitle(title);
}

void StepChart::drawOverlay() {
    const int points = std::max(results_ ? results_->rowCount() : 0, steps_->lastPoint() + 1);
    // A line per point reads for a few points; a big sweep overlays its first ones.
    constexpr int kMaxOverlaid = 24;
    const int overlaid = std::min(points, kMaxOverlaid);
    while (overlayLines_.size() < overlaid) {
        auto* s = new QLineSeries;
        chart()->addSeries(s);
        s->attachAxis(x_);
        s->attachAxis(y_);
        overlayLines_ << s;
    }
    for (QLineSeries* s : {forward_, backward_, optimizer_, total_}) {
        s->clear();
        s->setVisible(false);
    }
    warmup_->setVisible(false);
    shadedWarmup_ = 0;
    int longest = 0;
    double ymax = 0;
    for (int p = 0; p < overlayLines_.size(); ++p) {
        QLineSeries* line = overlayLines_[p];
        const auto [first, count] = steps_->rowsOfPoint(p);
        QList<QPointF> t;
        t.reserve(count);
        for (int r = first; r < first + count; ++r) {
            const StepSample& s = steps_->sample(r);
            t << QPointF(s.index, s.total_ms);
            ymax = std::max(ymax, s.total_ms);
        }
        longest = std::max(longest, count);
        line->replace(decimateMinMax(t, 2000));
        line->setPointsVisible(count <= 200);
        line->setVisible(p < overlaid);
        const PointConfig* c = results_ && p < results_->rowCount()
                                   ? &results_->entries()[static_cast<size_t>(p)].result.config
                                   : nullptr;
        line->setName(c ? tr("%1: %2").arg(p + 1).arg(describeDifference(*c))
                        : tr("point %1").arg(p + 1));
    }
    restyle();
    shown_ = -1;
    shownSteps_ = longest;
    setRanges(longest, ymax);
    chart()->setTitle(overlaid < points
                          ? tr("Step timings, total per step of the first %1 of %2 points")
                                .arg(overlaid)
                                .arg(points)
                          : tr("Step timings, total per step of all %1 points").arg(points));
}

// The values of a point that other points of the run may differ in, for an overlay's legend.
QString StepChart::describeDifference(const PointConfig& c) const {
    std::vector<Dimension> dims = varyingDimensions(results_->configs());
    if (dims.empty()) dims = {Dimension::Size};
    return labelOver(c, dims);
}

void StepChart::setRanges(int steps, double ymax) {
    const double top = ymax > 0 ? ymax * 1.12 : 1.0;
    const double n = std::max(1, steps);
    // The last step's marker sits inside the plot: a margin of half a step, or 2 % of the
    // axis when steps are too close for half a step to hold a marker.
    const double pad = std::max(0.5, 0.02 * n);
    // Interval before range: the old interval over the new range could mean thousands of
    // ticks, each a graphics item Qt Charts creates and destroys.
    x_->setTickAnchor(0);
    x_->setTickInterval(niceInterval(n, 10));
    x_->setRange(-pad, n - 1 + pad);
    y_->setRange(0, top);
    y_->applyNiceNumbers();  // round ticks (0, 10, 20 …), not 12.2, 24.5 …
}

}  // namespace ts::ui
