// The attention lab's results: time against sequence length per implementation, and every
// cell with its correctness check, times, TFLOP/s and memory.
#pragma once

#include "ui/common/labview.h"

class QComboBox;

namespace ts::ui {

class AttentionModel;
class AttentionSeriesModel;
class SweepChart;

class AttentionView : public LabView {
    Q_OBJECT
public:
    explicit AttentionView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    // What History's Overlay Selected draws of a stored run (ui/common/overlay.h).
    static RunOverlay overlayOf(const StoredRun& run);
    QList<ReportPart> reportParts() const override;

    void clear() { begin({}, {}); }
    AttentionModel* model() const { return model_; }
    AttentionSeriesModel* seriesModel() const { return series_; }
    SweepChart* sweepChart() const { return chart_; }
    DataTableView* table() const { return table_; }

private:
    void begin(const QString& label, const std::string& spec_json);

    AttentionModel* model_;
    AttentionSeriesModel* series_;
    SweepChart* chart_;
    DataTableView* table_;
    QComboBox* pass_;
};

}  // namespace ts::ui
