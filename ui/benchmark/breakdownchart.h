// Where a step's time goes: one stacked bar per point, forward, backward and optimizer (the
// means over the measured steps). Points that did not finish well have no bar; their
// category says why. Views the result model.
#pragma once

#include <QPointer>
#include <QStringList>

#include "ui/common/chartpane.h"

class QBarCategoryAxis;
class QBarSet;
class QStackedBarSeries;
class QValueAxis;

namespace ts::ui {

class ResultModel;

class BreakdownChart : public ChartPane {
    Q_OBJECT
public:
    explicit BreakdownChart(ResultModel* results, QWidget* parent = nullptr);

    QString chartTitle() const override { return tr("Where the time goes"); }
    QString chartFileStem() const override { return QStringLiteral("breakdown"); }

    // What is drawn, for tests: one category per point, the value of each phase.
    QStringList categories() const;
    QList<double> phaseValues(int phase) const;  // 0 forward, 1 backward, 2 optimizer
    QValueAxis* valueAxis() const { return y_; }

private:
    void redraw() override;
    void restyle() override;

    QPointer<ResultModel> results_;
    QStackedBarSeries* series_;
    QList<QBarSet*> sets_;
    QBarCategoryAxis* x_;
    QValueAxis* y_;
};

}  // namespace ts::ui
