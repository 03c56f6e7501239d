// The precision lab's charts: lines against steps, one per variant or precision, on a linear
// or a log y axis, with optional marked points (a scaler's skipped steps). The view hands it
// plain lines; it keeps at most a few thousand points a line (min/max thinning).
#pragma once

#include <QList>
#include <QPointF>
#include <QString>

#include "ui/common/chartpane.h"

namespace ts::ui {

class PrecisionChart : public ChartPane {
    Q_OBJECT
public:
    struct Line {
        QString name;
        QList<QPointF> points;
        int colour = 0;        // index into the theme's series colours
        bool markers = false;  // points only (scatter), drawn over the lines
    };

    PrecisionChart(const QString& fileStem, QWidget* parent = nullptr);

    // Replaces every line. On a log axis, points with y <= 0 are left out (say so in the title).
    void setLines(const QList<Line>& lines);
    void setTitles(const QString& title, const QString& xTitle, const QString& yTitle);
    void setLogY(bool on);
    bool logY() const { return logY_; }
    const QList<Line>& lines() const { return lines_; }

    QString chartTitle() const override { return title_; }
    QString chartFileStem() const override { return stem_; }
    // What the chart draws (after flushRedraw()): series and their points.
    int seriesCount() const;
    int plottedPoints(const QString& series) const;

protected:
    void redraw() override;
    void restyle() override;

private:
    QList<Line> lines_;
    QString title_, xTitle_, yTitle_, stem_;
    bool logY_ = false;
};

}  // namespace ts::ui
