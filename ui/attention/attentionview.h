// The attention benchmark's own tab: time against sequence length per implementation, and
// every cell with its correctness check, times, TFLOP/s and memory.
#pragma once

#include "common/experimentpanel.h"

class QComboBox;

namespace ts::ui {

class AttentionModel;
class AttentionSeriesModel;
class SweepChart;

class AttentionView : public ExperimentView {
    Q_OBJECT
public:
    explicit AttentionView(QWidget* parent = nullptr);

    QString title() const override { return tr("&Attention"); }
    void clear() override;
    void addItem(const QVariant& item) override;
    ExportableChart* chart() override;
    DataTableView* table() override { return table_; }

    AttentionModel* model() const { return model_; }
    AttentionSeriesModel* seriesModel() const { return series_; }
    SweepChart* sweepChart() const { return chart_; }

private:
    AttentionModel* model_;
    AttentionSeriesModel* series_;
    SweepChart* chart_;
    DataTableView* table_;
    QComboBox* pass_;
};

}  // namespace ts::ui
