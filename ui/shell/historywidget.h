// The run history: every stored run, filterable; open one into the views, replay it, or
// pick two and compare them.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace ts::ui {

class RunListModel;

class HistoryWidget : public QWidget {
    Q_OBJECT
public:
    explicit HistoryWidget(RunListModel* runs, QWidget* parent = nullptr);

    QList<qint64> selectedRuns() const;
    void selectRuns(const QList<qint64>& ids);
    void setBusy(bool running);  // opening and replaying wait for a live run to end
    void setMessage(const QString& text);
    // The run kinds (lab ids) the window can show (others cannot be opened), and those whose
    // runs can be replayed and compared (their steps were recorded, their points compare).
    void setOpenableKinds(const QStringList& kinds);
    void setReplayableKinds(const QStringList& kinds);
    static QString replayReason();
    QTableView* view() const { return view_; }
    QLineEdit* filter() const { return filter_; }
    QSortFilterProxyModel* proxy() const { return proxy_; }

Q_SIGNALS:
    void openRequested(qint64 run);
    void replayRequested(qint64 run);
    void compareRequested(qint64 a, qint64 b);
    void deleteRequested(qint64 run);
    void refreshRequested();

private:
    void updateButtons();
    QString kindOf(qint64 id) const;
    RunListModel* runs_;
    QStringList openable_, replayable_;
    QSortFilterProxyModel* proxy_;
    QTableView* view_;
    QLineEdit* filter_;
    QLabel* message_;
    QPushButton *open_, *replay_, *compare_, *delete_, *refresh_;
    bool busy_ = false;
};

}  // namespace ts::ui
