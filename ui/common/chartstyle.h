// Colours and fonts of the charts, from the current theme, and the pieces every chart
// shares: a redraw throttle (at most 20 redraws a second) and painting a Qt Charts chart
// laid out for an export size.
#pragma once

#include <QColor>
#include <QElapsedTimer>
#include <QFont>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <functional>

class QChart;
class QAbstractAxis;
class QWidget;
class QPainter;
class QRectF;

namespace ts::ui {

struct ChartStyle {
    bool dark = false;
    bool presentation = false;
    QColor background, plotBackground, foreground, grid, muted, warmup;
    QList<QColor> series;
    qreal lineWidth = 2;
    qreal markerSize = 7;
    QFont titleFont, labelFont, legendFont;

    QColor seriesColor(int i) const { return series[i % series.size()]; }
};

ChartStyle currentChartStyle();
void applyChartStyle(QChart* chart, const ChartStyle& s);
void applyAxisStyle(QAbstractAxis* axis, const ChartStyle& s);
// Paints `chart` into `target`, laid out for that size, then restores it.
void paintChartInto(QChart* chart, QPainter& painter, const QRectF& target);

// Coalesces redraw requests: `request()` any number of times, the callback runs at most once
// per interval (50 ms = 20 Hz). A request after a quiet interval redraws at once; one during
// the interval is deferred to its end. The data's arrival drives the redraws, so they keep
// coming even when a stream of posted events delays timers (GLib runs timers at idle
// priority after a timer dispatch); the timer only flushes the last, trailing change.
// A chart that is not on screen (a tab behind another) need not redraw at all: with
// deferWhileHidden its requests wait until it is shown, which redraws once.
class RedrawThrottle : public QObject {
public:
    RedrawThrottle(std::function<void()> redraw, QObject* parent, int intervalMs = 50);
    void request();
    void flush();  // redraw now if one is pending, shown or not (exports, tests)
    int redraws() const { return redraws_; }
    // Requests made while `widget` is hidden only mark the redraw pending; showing the widget
    // redraws. See Note [hidden charts wait].
    void deferWhileHidden(QWidget* widget);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool hidden() const;

    std::function<void()> redraw_;
    QTimer timer_{this};  // a child: a profile names it by its chart
    QPointer<QWidget> gate_;
    QElapsedTimer sinceRedraw_;
    int intervalMs_;
    bool pending_ = false;
    int redraws_ = 0;
};

}  // namespace ts::ui
