// The speedup table as bars: one group per row of the table, one bar per compared value
// (its ratio to the baseline, written on it), a line at 1× for the baseline. An uncertain ratio
// (noisy sides, or an interval that includes 1) is drawn in a pale tint of its series' colour.
// Views the speedup model.
#pragma once

#include <QColor>
#include <QPointer>
#include <QStringList>

#include "ui/common/chartpane.h"

class QBarCategoryAxis;
class QBarSeries;
class QLineSeries;
class QValueAxis;

namespace ts::ui {

class SpeedupModel;

class SpeedupChart : public ChartPane {
    Q_OBJECT
public:
    explicit SpeedupChart(SpeedupModel* model, QWidget* parent = nullptr);

    QString chartTitle() const override;
    QString chartFileStem() const override { return QStringLiteral("speedup"); }

    // What is drawn, for tests.
    int barSetCount() const;
    QStringList categories() const;
    QList<double> values(int set) const;
    QList<int> uncertainBars(int set) const;
    QColor barColor(int set, int bar) const;  // as drawn: an uncertain bar pale

private:
    QColor uncertainColor(int set) const;
    void redraw() override;
    void restyle() override;

    QPointer<SpeedupModel> model_;
    QBarSeries* bars_;
    QLineSeries* one_;
    QBarCategoryAxis* x_;
    QValueAxis* y_;
};

}  // namespace ts::ui
