// The run history: every stored run, filterable by its configuration; open one into the
// views, replay it, load its configuration into the lab's panel or run it again, pick two
// and compare them, or pick two or more and overlay them on one chart.
#pragma once

#include <QWidget>

#include "ui/shell/historytable.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QMenu;
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
    // The run kinds (lab ids) the window can show (others cannot be opened), those whose runs
    // can be replayed (their steps were recorded) and those whose runs compare, each with the
    // reason shown where a selected run's kind cannot.
    void setOpenableKinds(const QStringList& kinds);
    void setReplayableKinds(const QStringList& kinds, const QString& reason);
    void setComparableKinds(const QStringList& kinds, const QString& reason);
    QTableView* view() const { return view_; }
    QLineEdit* filter() const { return filter_; }
    RunFilterProxy* proxy() const { return proxy_; }
    SortArrowHeader* header() const { return header_; }
    // The actions of the selected run (the context menu's and the buttons').
    QMenu* contextMenu() const { return menu_; }

Q_SIGNALS:
    void openRequested(qint64 run);
    void replayRequested(qint64 run);
    void compareRequested(qint64 a, qint64 b);
    void overlayRequested(const QList<qint64>& runs);
    void deleteRequested(qint64 run);
    // Put the run's configuration into its lab's panel; and start it.
    void loadConfigurationRequested(qint64 run);
    void runAgainRequested(qint64 run);
    void refreshRequested();

private:
    void updateButtons();
    QString kindOf(qint64 id) const;
    RunListModel* runs_;
    QStringList openable_, replayable_, comparable_;
    QString replayReason_, compareReason_;
    RunFilterProxy* proxy_;
    SortArrowHeader* header_;
    QMenu* menu_;
    QTableView* view_;
    QLineEdit* filter_;
    QLabel* message_;
    QLabel* noMatch_;  // the filter keeps no run: says so, and what it searched
    void updateNoMatch();
    QPushButton *open_, *replay_, *compare_, *overlay_, *load_, *again_, *delete_, *refresh_;
    bool busy_ = false;
};

}  // namespace ts::ui
