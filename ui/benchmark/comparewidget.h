// Two runs side by side: the environment differences, then the matched points with the
// times, the difference and the ratio.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;

namespace ts::ui {

class CompareModel;
class DataTableView;

class CompareWidget : public QWidget {
    Q_OBJECT
public:
    explicit CompareWidget(CompareModel* model, QWidget* parent = nullptr);
    DataTableView* table() const { return table_; }

private:
    void refresh();
    CompareModel* model_;
    QLabel* header_;
    QComboBox* metric_;
    DataTableView* table_;
};

}  // namespace ts::ui
