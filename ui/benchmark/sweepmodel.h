// The sweep chart's data: time against model size, context length or batch size, one
// series per combination of the other varying values (precision, backend, ...), with the
// step spread for error bars. One row per finished point.
#pragma once

#include <QPointer>

#include "ui/benchmark/speedupmodel.h"
#include "ui/common/dimensions.h"
#include "ui/common/seriesmodel.h"

namespace ts::ui {

class ResultModel;

class SweepModel : public SeriesModel {
    Q_OBJECT
public:
    explicit SweepModel(ResultModel* source, QObject* parent = nullptr);

    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    // What x can be: size, context, batch, warm-up (numeric), then every other dimension a
    // sweep varies but the mode and the device (categorical: one slot per value), from the
    // point's table. When the wanted one does not vary, the first of size, context, batch that
    // does.
    static const std::vector<Dimension>& xDimensions();
    void setXDimension(Dimension d);
    void setMetric(Metric m);
    Dimension xDimension() const { return x_; }
    Metric metric() const { return metric_; }

    QString chartTitle() const override;
    QString xTitle() const override;
    QString xAxisTitle() const override;
    QString yAxisTitle() const override;
    double xScale() const override { return x_ == Dimension::Size ? 1e-6 : 1.0; }
    // Parameters span decades; context and batch sizes are powers of two in practice.
    int xLogBase() const override { return x_ == Dimension::Size ? 10 : 2; }
    bool alwaysLogX() const override { return x_ == Dimension::Size; }
    QStringList xCategories() const override { return categories_; }
    bool labelPoints() const override { return x_ == Dimension::Size; }

private:
    void rebuild();
    QPointer<ResultModel> source_;
    Dimension wanted_ = Dimension::Size;
    Dimension x_ = Dimension::Size;
    Metric metric_ = Metric::Total;
    QStringList categories_;  // the values of a categorical x, in sweep order
};

}  // namespace ts::ui
