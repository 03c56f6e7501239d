#include "shell/historywidget.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "shell/runlistmodel.h"

namespace ts::ui {

HistoryWidget::HistoryWidget(RunListModel* runs, QWidget* parent) : QWidget(parent), runs_(runs) {
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(runs);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setFilterKeyColumn(-1);
    proxy_->setSortRole(Qt::DisplayRole);
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText(tr("Filter: label, device, date…"));
    filter_->setClearButtonEnabled(true);
    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    view_ = new QTableView(this);
    view_->setObjectName(QStringLiteral("historyView"));
    view_->setModel(proxy_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(RunListModel::Id, Qt::DescendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->verticalHeader()->setVisible(false);
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->setAlternatingRowColors(true);
    view_->setWordWrap(false);
    view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 8);
    view_->setToolTip(tr("Double-click opens a run; select two to compare"));
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->setVisible(false);

    open_ = new QPushButton(tr("&Open"), this);
    replay_ = new QPushButton(tr("Re&play"), this);
    compare_ = new QPushButton(tr("Co&mpare"), this);
    delete_ = new QPushButton(tr("Delete"), this);
    refresh_ = new QPushButton(tr("Refresh"), this);
    open_->setToolTip(tr("Show the selected run in the views"));
    replay_->setToolTip(tr("Play the selected run step by step, as it was recorded (no GPU needed)"));
    compare_->setToolTip(tr("Compare two selected runs side by side"));
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {open_, replay_, compare_, delete_}) buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(refresh_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(filter_);
    layout->addWidget(view_, 1);
    layout->addWidget(message_);
    layout->addLayout(buttons);

    auto first = [this] { return selectedRuns().value(0, 0); };
    connect(open_, &QPushButton::clicked, this, [this, first] { Q_EMIT openRequested(first()); });
    connect(replay_, &QPushButton::clicked, this, [this, first] { Q_EMIT replayRequested(first()); });
    connect(compare_, &QPushButton::clicked, this, [this] {
        const auto ids = selectedRuns();
        if (ids.size() == 2) Q_EMIT compareRequested(std::min(ids[0], ids[1]), std::max(ids[0], ids[1]));
    });
    connect(delete_, &QPushButton::clicked, this, [this, first] {
        const qint64 id = first();
        if (QMessageBox::question(this, tr("Delete Run"), tr("Delete run %1 and its points from the store?").arg(id)) ==
            QMessageBox::Yes)
            Q_EMIT deleteRequested(id);
    });
    connect(refresh_, &QPushButton::clicked, this, &HistoryWidget::refreshRequested);
    connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& idx) {
        const qint64 id = idx.data(RunListModel::RunIdRole).toLongLong();
        if (!busy_ && openable_.contains(kindOf(id))) Q_EMIT openRequested(id);
    });
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &HistoryWidget::updateButtons);
    connect(proxy_, &QAbstractItemModel::modelReset, this, &HistoryWidget::updateButtons);
    updateButtons();
}

QList<qint64> HistoryWidget::selectedRuns() const {
    QList<qint64> ids;
    for (const QModelIndex& idx : view_->selectionModel()->selectedRows())
        ids << idx.data(RunListModel::RunIdRole).toLongLong();
    return ids;
}

void HistoryWidget::selectRuns(const QList<qint64>& ids) {
    view_->clearSelection();
    for (qint64 id : ids) {
        const int row = runs_->rowOf(id);
        if (row < 0) continue;
        const QModelIndex idx = proxy_->mapFromSource(runs_->index(row, 0));
        view_->selectionModel()->select(idx, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
    updateButtons();
}

void HistoryWidget::setBusy(bool running) {
    busy_ = running;
    updateButtons();
}

void HistoryWidget::setMessage(const QString& text) {
    message_->setText(text);
    message_->setVisible(!text.isEmpty());
}

void HistoryWidget::setOpenableKinds(const QStringList& kinds) {
    openable_ = kinds;
    updateButtons();
}

void HistoryWidget::setReplayableKinds(const QStringList& kinds) {
    replayable_ = kinds;
    updateButtons();
}

QString HistoryWidget::replayReason() {
    return tr("Replay and Compare work on benchmark runs only: other runs have no recorded steps "
              "or comparable points; open them instead");
}

QString HistoryWidget::kindOf(qint64 id) const {
    const RunInfo* r = runs_->runById(id);
    return r ? QString::fromStdString(r->lab) : QString();
}

void HistoryWidget::updateButtons() {
    const QList<qint64> ids = selectedRuns();
    const int n = static_cast<int>(ids.size());
    bool allBench = true;  // every selected run replayable and comparable
    for (qint64 id : ids) allBench &= replayable_.contains(kindOf(id));
    const QString kind = n == 1 ? kindOf(ids.front()) : QString();
    const bool openable = n == 1 && openable_.contains(kind);
    const QString wait = tr("Wait for the run to finish, or stop it");
    open_->setEnabled(openable && !busy_);
    replay_->setEnabled(n == 1 && allBench && !busy_);
    compare_->setEnabled(n == 2 && allBench);
    delete_->setEnabled(n == 1 && !busy_);
    open_->setToolTip(busy_ ? wait
                      : n == 1 && !openable ? tr("Runs of kind '%1' cannot be shown in this window").arg(kind)
                                            : tr("Show the selected run in the views"));
    replay_->setToolTip(busy_ ? wait
                        : !allBench ? replayReason()
                                    : tr("Play the selected run step by step, as it was recorded (no GPU needed)"));
    compare_->setToolTip(n != 2     ? tr("Select exactly two runs to compare")
                         : allBench ? tr("Compare the two selected runs")
                                    : replayReason());
}

}  // namespace ts::ui
