#include "ui/common/chartinteraction.h"

#include <QApplication>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QMouseEvent>
#include <QRubberBand>
#include <QToolTip>
#include <QWheelEvent>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>
#include <algorithm>
#include <cmath>

namespace ts::ui {

namespace {

double distance(const QPointF& a, const QPointF& b) {
    return std::hypot(a.x() - b.x(), a.y() - b.y());
}

// The range of a numeric axis; none for category axes.
std::optional<QPointF> rangeOf(QAbstractAxis* a) {
    if (auto* v = qobject_cast<QValueAxis*>(a)) return QPointF(v->min(), v->max());
    if (auto* l = qobject_cast<QLogValueAxis*>(a)) return QPointF(l->min(), l->max());
    return std::nullopt;
}

void setRange(QAbstractAxis* a, const QPointF& r) {
    if (rangeOf(a)) a->setRange(r.x(), r.y());
}

QString categoryOf(QAbstractBarSeries* s, int index) {
    for (QAbstractAxis* a : s->attachedAxes())
        if (auto* c = qobject_cast<QBarCategoryAxis*>(a))
            if (index < c->count()) return c->at(index);
    return QString::number(index + 1);
}

}  // namespace

ChartInteraction::ChartInteraction(QChartView* view, std::function<void()> redraw)
    : QObject(view), view_(view), chart_(view->chart()), redraw_(std::move(redraw)) {
    view_->viewport()->setMouseTracking(true);
    view_->viewport()->installEventFilter(this);
}

QString ChartInteraction::formatValue(double v) {
    if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) return QString::number(v, 'g', 4);
    return QString::number(v, 'g', std::abs(v) >= 1000 ? 7 : 4);
}

QPointF ChartInteraction::toChart(const QPoint& viewportPos) const {
    return chart_->mapFromScene(view_->mapToScene(viewportPos));
}

std::optional<ChartInteraction::Hit> ChartInteraction::nearestPoint(const QPointF& chartPos,
                                                                    qreal radius) const {
    std::optional<Hit> best;
    double bestDistance = radius;
    auto consider = [&](const QString& series, const QString& x, double y, const QPointF& pos,
                        const QPointF& value) {
        const double d = distance(pos, chartPos);
        if (d <= bestDistance) {
            bestDistance = d;
            best = Hit{series, x, y, pos, value};
        }
    };
    for (QAbstractSeries* s : chart_->series()) {
        if (!s->isVisible()) continue;
        if (auto* xy = qobject_cast<QXYSeries*>(s)) {
            const QList<QPointF> points = xy->points();
            for (const QPointF& p : points)
                consider(xy->name(), formatValue(p.x()), p.y(), chart_->mapToPosition(p, xy), p);
        } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(s)) {
            // The top of each bar: stacked bars pile up, grouped bars sit side by side.
            const bool stacked = qobject_cast<QStackedBarSeries*>(bars) != nullptr;
            const QList<QBarSet*> sets = bars->barSets();
            const qreal width = bars->barWidth();
            for (int j = 0; j < sets.size(); ++j)
                for (int i = 0; i < sets[j]->count(); ++i) {
                    double top = sets[j]->at(i);
                    if (stacked)
                        for (int k = 0; k < j; ++k) top += sets[k]->at(i);
                    const double x = stacked ? i : i - width / 2 + (j + 0.5) * width / sets.size();
                    const QPointF at(x, stacked ? top - sets[j]->at(i) / 2 : top);
                    consider(sets[j]->label(), categoryOf(bars, i), sets[j]->at(i),
                             chart_->mapToPosition(at, bars), QPointF(i, sets[j]->at(i)));
                }
        }
    }
    return best;
}

QString ChartInteraction::hitText(const Hit& hit) const {
    if (hitText_)
        if (QString text = hitText_(hit); !text.isEmpty()) return text;
    if (valueText_) return hit.series + QLatin1Char('\n') + valueText_(hit.value);
    return QStringLiteral("%1\nx: %2\ny: %3").arg(hit.series, hit.x, formatValue(hit.y));
}

void ChartInteraction::zoomAt(const QPointF& chartPos, qreal factor) {
    const QRectF area = chart_->plotArea();
    if (!area.contains(chartPos) || factor <= 0) return;
    // The point under the cursor stays where it is.
    const QPointF c = chartPos;
    const QRectF rect(c.x() - (c.x() - area.left()) / factor, c.y() - (c.y() - area.top()) / factor,
                      area.width() / factor, area.height() / factor);
    zoomInto(rect);
}

void ChartInteraction::zoomInto(const QRectF& chartRect) {
    if (chartRect.width() < 2 || chartRect.height() < 2) return;
    chart_->zoomIn(chartRect);
    saveRanges();
}

void ChartInteraction::pan(const QPointF& pixels) {
    chart_->scroll(pixels.x(), pixels.y());
    saveRanges();
}

void ChartInteraction::saveRanges() {
    ranges_.clear();
    for (QAbstractAxis* a : chart_->axes())
        if (auto r = rangeOf(a)) ranges_.insert(static_cast<int>(a->alignment()), *r);
    if (!zoomed_) {
        zoomed_ = true;
        Q_EMIT zoomChanged(true);
    }
    niceTicks();
}

void ChartInteraction::restoreZoom() {
    if (!zoomed_) return;
    for (QAbstractAxis* a : chart_->axes()) {
        const auto it = ranges_.constFind(static_cast<int>(a->alignment()));
        if (it != ranges_.constEnd()) setRange(a, *it);
    }
    niceTicks();
}

// A zoomed or panned range starts and ends anywhere (96.954 to 404.15), and an axis's fixed
// tick count divides it into as odd steps. While zoomed, each value axis ticks at a round step
// (1, 2, 2.5 or 5 × 10^k, about five ticks) anchored at a multiple of it: 100, 150, 200 …; the
// range itself stays where the user put it.
void ChartInteraction::niceTicks() {
    for (QAbstractAxis* a : chart_->axes()) {
        auto* v = qobject_cast<QValueAxis*>(a);
        if (!v || !(v->max() > v->min())) continue;
        if (std::none_of(ownTicks_.begin(), ownTicks_.end(),
                         [v](const auto& own) { return own.first == v; }))
            ownTicks_.append(
                {v, {v->tickType(), v->tickInterval(), v->tickAnchor(), v->tickCount()}});
        const double raw = (v->max() - v->min()) / 5.0;
        const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
        const double r = raw / magnitude;
        // An axis of whole numbers (steps, "%d") keeps whole steps: 1, 2, 5 × 10^k.
        const QString format = v->labelFormat();
        const bool whole = format.contains(QLatin1String("d")) ||
                           format.contains(QLatin1String("i")) ||
                           format.contains(QLatin1String(".0f"));
        double mantissa = 10;
        for (double m : {1.0, 2.0, 2.5, 5.0})
            if (r <= m && !(whole && m == 2.5)) {
                mantissa = m;
                break;
            }
        double step = mantissa * magnitude;
        if (whole) step = std::max(1.0, std::round(step));
        v->setTickType(QValueAxis::TicksDynamic);
        v->setTickInterval(step);
        v->setTickAnchor(std::ceil(v->min() / step) * step);
    }
}

void ChartInteraction::resetZoom() {
    const bool was = zoomed_;
    zoomed_ = false;
    ranges_.clear();
    for (const auto& [axis, own] : ownTicks_) {
        if (!axis) continue;
        axis->setTickType(own.type);
        axis->setTickInterval(own.interval);
        axis->setTickAnchor(own.anchor);
        axis->setTickCount(own.count);
    }
    ownTicks_.clear();
    chart_->zoomReset();
    if (redraw_) redraw_();
    if (was) Q_EMIT zoomChanged(false);
}

void ChartInteraction::ensureCrosshair() {
    if (hLine_) return;
    hLine_ = new QGraphicsLineItem(chart_);
    vLine_ = new QGraphicsLineItem(chart_);
    label_ = new QGraphicsSimpleTextItem(chart_);
    for (QGraphicsItem* i :
         {static_cast<QGraphicsItem*>(hLine_), static_cast<QGraphicsItem*>(vLine_),
          static_cast<QGraphicsItem*>(label_)}) {
        i->setZValue(100);
        i->setVisible(false);
    }
}

void ChartInteraction::showCrosshair(const QPointF& chartPos) {
    ensureCrosshair();
    const QRectF area = chart_->plotArea();
    if (!area.contains(chartPos)) {
        hideCrosshair();
        return;
    }
    QPen pen(chart_->titleBrush().color());
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(0.8);
    hLine_->setPen(pen);
    vLine_->setPen(pen);
    hLine_->setLine(area.left(), chartPos.y(), area.right(), chartPos.y());
    vLine_->setLine(chartPos.x(), area.top(), chartPos.x(), area.bottom());
    const QPointF v = chart_->mapToValue(chartPos);
    label_->setText(valueText_
                        ? valueText_(v).replace(QLatin1Char('\n'), QStringLiteral(", "))
                        : QStringLiteral("%1, %2").arg(formatValue(v.x()), formatValue(v.y())));
    label_->setBrush(chart_->titleBrush());
    label_->setPos(chartPos + QPointF(6, -label_->boundingRect().height() - 4));
    for (QGraphicsItem* i :
         {static_cast<QGraphicsItem*>(hLine_), static_cast<QGraphicsItem*>(vLine_),
          static_cast<QGraphicsItem*>(label_)})
        i->setVisible(true);
}

void ChartInteraction::hideCrosshair() {
    if (!hLine_) return;
    hLine_->setVisible(false);
    vLine_->setVisible(false);
    label_->setVisible(false);
}

bool ChartInteraction::crosshairVisible() const { return hLine_ && hLine_->isVisible(); }

QString ChartInteraction::crosshairText() const { return label_ ? label_->text() : QString(); }

bool ChartInteraction::eventFilter(QObject* watched, QEvent* event) {
    if (watched != view_->viewport()) return false;
    switch (event->type()) {
        case QEvent::Wheel: {
            auto* e = static_cast<QWheelEvent*>(event);
            const qreal steps = e->angleDelta().y() / 120.0;
            if (steps != 0) zoomAt(toChart(e->position().toPoint()), std::pow(1.25, steps));
            return true;
        }
        case QEvent::MouseButtonPress: {
            auto* e = static_cast<QMouseEvent*>(event);
            if (e->button() != Qt::LeftButton) return false;
            pressPos_ = lastPos_ = e->pos();
            banding_ = e->modifiers() & Qt::ControlModifier;
            panning_ = !banding_;
            if (banding_) {
                if (!band_) band_ = new QRubberBand(QRubberBand::Rectangle, view_->viewport());
                band_->setGeometry(QRect(pressPos_, QSize()));
                band_->show();
            }
            return true;
        }
        case QEvent::MouseMove: {
            auto* e = static_cast<QMouseEvent*>(event);
            const QPointF pos = toChart(e->pos());
            if (banding_) {
                band_->setGeometry(QRect(pressPos_, e->pos()).normalized());
            } else if (panning_ && (zoomed_ || (e->pos() - pressPos_).manhattanLength() >=
                                                   QApplication::startDragDistance())) {
                // A click is no drag: the view keeps following the data until the mouse
                // really moves.
                const QPoint d = e->pos() - lastPos_;
                pan(QPointF(-d.x(), d.y()));
                lastPos_ = e->pos();
            }
            showCrosshair(pos);
            if (const auto hit = nearestPoint(pos))
                QToolTip::showText(e->globalPosition().toPoint(), hitText(*hit), view_->viewport());
            else
                QToolTip::hideText();
            return false;
        }
        case QEvent::MouseButtonRelease: {
            auto* e = static_cast<QMouseEvent*>(event);
            if (banding_) {
                band_->hide();
                const QRect r = QRect(pressPos_, e->pos()).normalized();
                zoomInto(QRectF(toChart(r.topLeft()), toChart(r.bottomRight()))
                             .intersected(chart_->plotArea()));
            }
            banding_ = panning_ = false;
            return e->button() == Qt::LeftButton;
        }
        case QEvent::MouseButtonDblClick:
            if (static_cast<QMouseEvent*>(event)->button() != Qt::LeftButton) return false;
            resetZoom();
            return true;
        case QEvent::Leave:
            hideCrosshair();
            return false;
        default:
            return false;
    }
}

}  // namespace ts::ui
