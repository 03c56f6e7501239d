// Two runs side by side: the environment differences, then the matched points as a chart (A
// beside B with their spreads, the ratio over each) above the table of times, difference,
// ratio and verdict.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;

namespace ts::ui {

class CompareChart;
class CompareModel;
class DataTableView;

class CompareWidget : public QWidget {
    Q_OBJECT
public:
    explicit CompareWidget(CompareModel* model, QWidget* parent = nullptr);
    DataTableView* table() const { return table_; }
    CompareChart* chart() const { return chart_; }

private:
    void refresh();
    CompareModel* model_;
    QLabel* header_;
    QComboBox* metric_;
    CompareChart* chart_;
    DataTableView* table_;
};

}  // namespace ts::ui
