// The planner lab's results: the plan (a row a strategy, each cell's formula in its tooltip,
// the formulas and limits written out below), the crossover chart of a chosen strategy, and
// the whole report (measurement, memory, ring collectives, the model's step) as text.
#pragma once

#include <optional>

#include "planner/planner.h"
#include "ui/common/labview.h"

class QComboBox;
class QTextBrowser;

namespace ts::ui {

class PlannerChart;
class PlannerTableModel;

class PlannerView : public LabView {
    Q_OBJECT
public:
    explicit PlannerView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    bool showStored(const StoredRun& run, QString* error) override;
    QList<ReportPart> reportParts() const override;

    const std::optional<PlannerReport>& report() const;
    PlannerTableModel* table() const { return model_; }
    PlannerChart* chart() const { return chart_; }
    QComboBox* chartStrategy() const { return strategy_; }
    QTextBrowser* formulas() const { return formulas_; }
    QTextBrowser* reportText() const { return text_; }

private:
    void begin(const QString& label, const std::string& spec_json);
    void showReport(const std::optional<PlannerReport>& r);
    void refreshChart();

    PlannerTableModel* model_;
    PlannerChart* chart_;
    QComboBox* strategy_;
    QTextBrowser *formulas_, *text_;
};

}  // namespace ts::ui
