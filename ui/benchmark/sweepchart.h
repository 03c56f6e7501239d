// Series with error bars: the sweep (time against model size, context length or batch size,
// one series per precision / backend / ..., ± one standard deviation of the steps), and the
// attention benchmark's times. Views any SeriesModel; log axes where the values span enough.
#pragma once

#include <QPointer>

#include "common/chartpane.h"

class QAbstractAxis;
class QLineSeries;

namespace ts::ui {

class SeriesModel;
class ErrorBarsItem;

class SweepChart : public ChartPane {
    Q_OBJECT
public:
    explicit SweepChart(SeriesModel* model, QWidget* parent = nullptr,
                        const QString& fileStem = QStringLiteral("sweep"));

    void setLogY(bool on);
    bool logY() const { return logY_; }

    QString chartTitle() const override;
    QString chartFileStem() const override { return stem_; }

    int seriesCount() const { return static_cast<int>(lines_.size()); }
    int plottedPoints() const;
    int errorBarCount() const;

private:
    void redraw() override;
    void restyle() override;
    void rebuildAxes(bool xLog, int xBase, bool yLog);

    QPointer<SeriesModel> model_;
    QString stem_;
    bool logY_ = false;
    QList<QLineSeries*> lines_;
    QStringList names_;
    QAbstractAxis* x_ = nullptr;
    QAbstractAxis* y_ = nullptr;
    int xBase_ = 0;
    bool yIsLog_ = false;
    ErrorBarsItem* bars_;
};

}  // namespace ts::ui
