// Zoom, pan, hover values and a crosshair for a Qt Charts view: the wheel zooms around the
// cursor, Ctrl+drag zooms into a rubber band, a drag pans, a double click (or resetZoom())
// goes back to the chart's own ranges. Hovering shows a crosshair and a tooltip with the
// nearest point's series, x and y. The chart's redraws set its ranges from the data; while
// the user has zoomed, restoreZoom() puts the user's ranges back after each redraw.
#pragma once

#include <QList>
#include <QMap>
#include <QObject>
#include <QPoint>
#include <QPointF>
#include <QPointer>
#include <QString>
#include <QValueAxis>
#include <functional>
#include <optional>

class QChart;
class QChartView;
class QGraphicsLineItem;
class QGraphicsSimpleTextItem;
class QRubberBand;

namespace ts::ui {

class ChartInteraction : public QObject {
    Q_OBJECT
public:
    // `redraw` redraws the chart at its own ranges (after a reset).
    ChartInteraction(QChartView* view, std::function<void()> redraw);

    struct Hit {
        QString series;
        QString x;         // the x value as text (a category of a bar chart)
        double y = 0;      // the point's or bar's value
        QPointF position;  // in the chart's coordinates
        QPointF value;     // in the axes' coordinates (a bar: its category index and value)
    };
    // The visible data point nearest to `chartPos` (chart coordinates) within `radius`
    // pixels; none when nothing is that close.
    std::optional<Hit> nearestPoint(const QPointF& chartPos, qreal radius = 40) const;
    // "total\nx: 12\ny: 34.5": the tooltip for a hit.
    QString hitText(const Hit& hit) const;
    // How a point in the axes' coordinates reads, where they are not the data's (log10 of
    // the values): the crosshair and the tooltips use it.
    void setValueText(std::function<QString(const QPointF&)> text) { valueText_ = std::move(text); }
    // The whole tooltip of a hit, for a chart whose marks carry more than x and y (a
    // comparison's spread and ratio); empty text falls back to the default.
    void setHitText(std::function<QString(const Hit&)> text) { hitText_ = std::move(text); }

    // Zooms by `factor` (> 1 in) around `chartPos`, into a rectangle, or pans by pixels.
    void zoomAt(const QPointF& chartPos, qreal factor);
    void zoomInto(const QRectF& chartRect);
    void pan(const QPointF& pixels);
    void resetZoom();
    bool isZoomed() const { return zoomed_; }
    void restoreZoom();

    // The crosshair at `chartPos` (hidden outside the plot area) and the value it shows.
    void showCrosshair(const QPointF& chartPos);
    void hideCrosshair();
    bool crosshairVisible() const;
    QString crosshairText() const;

    // How an axis value reads on the crosshair and in tooltips ("12", "3.45").
    static QString formatValue(double v);

Q_SIGNALS:
    void zoomChanged(bool zoomed);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QPointF toChart(const QPoint& viewportPos) const;
    void saveRanges();
    void ensureCrosshair();

    QChartView* view_;
    QChart* chart_;
    std::function<void()> redraw_;
    std::function<QString(const QPointF&)> valueText_;
    std::function<QString(const Hit&)> hitText_;
    bool zoomed_ = false;
    QMap<int, QPointF> ranges_;  // by axis alignment: min, max of the user's view
    // Round ticks on a zoomed value axis (Note in niceTicks()); each axis's own ticks, restored
    // when the zoom is reset.
    void niceTicks();
    struct Ticks {
        QValueAxis::TickType type;
        qreal interval, anchor;
        int count;
    };
    QList<std::pair<QPointer<QValueAxis>, Ticks>> ownTicks_;  // (an axis may go meanwhile)
    QPoint pressPos_, lastPos_;
    bool panning_ = false, banding_ = false;
    QRubberBand* band_ = nullptr;
    QGraphicsLineItem *hLine_ = nullptr, *vLine_ = nullptr;
    QGraphicsSimpleTextItem* label_ = nullptr;
};

}  // namespace ts::ui
