#include "ui/shell/historywidget.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/shell/historytable.h"
#include "ui/shell/runlistmodel.h"

namespace ts::ui {

HistoryWidget::HistoryWidget(RunListModel* runs, QWidget* parent) : QWidget(parent), runs_(runs) {
    proxy_ = new RunFilterProxy(this);
    proxy_->setSourceModel(runs);
    proxy_->setSortRole(RunListModel::SortRole);
    filter_ = new QLineEdit(this);
    filter_->setObjectName(QStringLiteral("historyFilter"));
    filter_->setPlaceholderText(
        tr("Filter: words from the configuration, label, device, kind… (\"fp32 xl\": both)"));
    filter_->setClearButtonEnabled(true);
    connect(filter_, &QLineEdit::textChanged, proxy_, &RunFilterProxy::setWords);
    view_ = new QTableView(this);
    view_->setObjectName(QStringLiteral("historyView"));
    header_ = new SortArrowHeader(view_);
    view_->setHorizontalHeader(header_);
    view_->setModel(proxy_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(RunListModel::Id, Qt::DescendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->verticalHeader()->setVisible(false);
    view_->setAlternatingRowColors(true);
    view_->setWordWrap(false);
    // The configuration takes the spare width; the short columns fit their contents.
    header_->setStretchLastSection(false);
    header_->setSectionResizeMode(QHeaderView::ResizeToContents);
    header_->setSectionResizeMode(RunListModel::Configuration, QHeaderView::Stretch);
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 8);
    view_->setToolTip(
        tr("Double-click opens a run; right-click for more; select two to compare, "
           "two or more to overlay"));
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->setVisible(false);
    noMatch_ = new QLabel(this);
    noMatch_->setObjectName(QStringLiteral("historyNoMatch"));
    noMatch_->setWordWrap(true);
    noMatch_->setTextFormat(Qt::PlainText);
    noMatch_->setVisible(false);

    open_ = new QPushButton(tr("&Open"), this);
    replay_ = new QPushButton(tr("Re&play"), this);
    compare_ = new QPushButton(tr("Co&mpare"), this);
    overlay_ = new QPushButton(tr("O&verlay Selected"), this);
    overlay_->setObjectName(QStringLiteral("overlaySelected"));
    load_ = new QPushButton(tr("&Load Configuration"), this);
    again_ = new QPushButton(tr("Run &Again"), this);
    delete_ = new QPushButton(tr("Delete"), this);
    refresh_ = new QPushButton(tr("Refresh"), this);
    open_->setToolTip(tr("Show the selected run in the views"));
    replay_->setToolTip(
        tr("Play the selected run step by step, as it was recorded (no GPU needed)"));
    compare_->setToolTip(tr("Compare two selected runs side by side"));
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {open_, replay_, compare_, overlay_, load_, again_, delete_})
        buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(refresh_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(filter_);
    layout->addWidget(view_, 1);
    layout->addWidget(noMatch_);
    layout->addWidget(message_);
    layout->addLayout(buttons);

    auto first = [this] { return selectedRuns().value(0, 0); };
    connect(open_, &QPushButton::clicked, this, [this, first] { Q_EMIT openRequested(first()); });
    connect(replay_, &QPushButton::clicked, this,
            [this, first] { Q_EMIT replayRequested(first()); });
    connect(compare_, &QPushButton::clicked, this, [this] {
        const auto ids = selectedRuns();
        if (ids.size() == 2)
            Q_EMIT compareRequested(std::min(ids[0], ids[1]), std::max(ids[0], ids[1]));
    });
    connect(overlay_, &QPushButton::clicked, this, [this] {
        if (const auto ids = selectedRuns(); ids.size() >= 2) Q_EMIT overlayRequested(ids);
    });
    connect(delete_, &QPushButton::clicked, this, [this, first] {
        const qint64 id = first();
        if (QMessageBox::question(this, tr("Delete Run"),
                                  tr("Delete run %1 and its points from the store?").arg(id)) ==
            QMessageBox::Yes)
            Q_EMIT deleteRequested(id);
    });
    connect(load_, &QPushButton::clicked, this,
            [this, first] { Q_EMIT loadConfigurationRequested(first()); });
    connect(again_, &QPushButton::clicked, this,
            [this, first] { Q_EMIT runAgainRequested(first()); });
    connect(refresh_, &QPushButton::clicked, this, &HistoryWidget::refreshRequested);

    // The context menu repeats the buttons; each action belongs to its button and shares its state.
    menu_ = new QMenu(this);
    for (QPushButton* b : {open_, replay_, compare_, overlay_, load_, again_, delete_}) {
        QString text = b->text();
        auto* a = new QAction(
            text.remove(QLatin1Char('&')) + (b == delete_ ? QStringLiteral("…") : QString()), b);
        connect(a, &QAction::triggered, b, &QPushButton::click);
        menu_->addAction(a);
        if (b == overlay_ || b == again_) menu_->addSeparator();
    }
    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex idx = view_->indexAt(pos);
        if (idx.isValid() && !view_->selectionModel()->isRowSelected(idx.row(), idx.parent()))
            view_->selectionModel()->select(
                idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        updateButtons();
        menu_->popup(view_->viewport()->mapToGlobal(pos));
    });
    connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& idx) {
        const qint64 id = idx.data(RunListModel::RunIdRole).toLongLong();
        if (!busy_ && openable_.contains(kindOf(id))) Q_EMIT openRequested(id);
    });
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &HistoryWidget::updateButtons);
    connect(proxy_, &QAbstractItemModel::modelReset, this, &HistoryWidget::updateButtons);
    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(proxy_, signal, this, &HistoryWidget::updateNoMatch);
    connect(proxy_, &QAbstractItemModel::modelReset, this, &HistoryWidget::updateNoMatch);
    connect(proxy_, &QAbstractItemModel::layoutChanged, this, &HistoryWidget::updateNoMatch);
    connect(filter_, &QLineEdit::textChanged, this, &HistoryWidget::updateNoMatch);
    updateButtons();
}

void HistoryWidget::updateNoMatch() {
    const bool none = proxy_->filtering() && proxy_->rowCount() == 0 && runs_->rowCount() > 0;
    noMatch_->setVisible(none);
    if (none)
        noMatch_->setText(tr("No stored run matches \"%1\" (%n run(s) in the store). Words are "
                             "AND-ed; the status takes ok, \"not ok\" and interrupted.",
                             "", runs_->rowCount())
                              .arg(filter_->text()));
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
        view_->selectionModel()->select(idx,
                                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
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

void HistoryWidget::setReplayableKinds(const QStringList& kinds, const QString& reason) {
    replayable_ = kinds;
    replayReason_ = reason;
    updateButtons();
}

void HistoryWidget::setComparableKinds(const QStringList& kinds, const QString& reason) {
    comparable_ = kinds;
    compareReason_ = reason;
    updateButtons();
}

QString HistoryWidget::kindOf(qint64 id) const {
    const RunInfo* r = runs_->runById(id);
    return r ? QString::fromStdString(r->lab) : QString();
}

void HistoryWidget::updateButtons() {
    const QList<qint64> ids = selectedRuns();
    const int n = static_cast<int>(ids.size());
    const QString kind = n == 1 ? kindOf(ids.front()) : QString();
    const bool replayable = n == 1 && replayable_.contains(kind);
    bool comparable = n == 2;  // two runs of one kind that compares
    for (qint64 id : ids) comparable &= comparable_.contains(kindOf(id));
    const bool oneKind = n == 2 && kindOf(ids[0]) == kindOf(ids[1]);
    const bool openable = n == 1 && openable_.contains(kind);
    const QString wait = tr("Wait for the run to finish, or stop it");
    open_->setEnabled(openable && !busy_);
    replay_->setEnabled(replayable && !busy_);
    compare_->setEnabled(comparable && oneKind);
    // Enabled for any two or more: runs of several kinds are told why, by kind, when pressed.
    overlay_->setEnabled(n >= 2);
    overlay_->setToolTip(
        n < 2 ? tr("Select two or more runs of one kind to draw them on one chart")
              : tr("Draw the %1 selected runs on one chart, one series each").arg(n));
    delete_->setEnabled(n == 1 && !busy_);
    load_->setEnabled(openable && !busy_);
    again_->setEnabled(openable && !busy_);
    load_->setToolTip(
        busy_ ? wait : tr("Put the selected run's configuration into its experiment's panel"));
    again_->setToolTip(busy_ ? wait : tr("Load the selected run's configuration and run it now"));
    open_->setToolTip(busy_ ? wait
                      : n == 1 && !openable
                          ? tr("Runs of kind '%1' cannot be shown in this window").arg(kind)
                          : tr("Show the selected run in the views"));
    replay_->setToolTip(
        busy_ ? wait
        : n == 1 && !replayable
            ? replayReason_
            : tr("Play the selected run step by step, as it was recorded (no GPU needed)"));
    compare_->setToolTip(n != 2        ? tr("Select exactly two runs to compare")
                         : !comparable ? compareReason_
                         : !oneKind    ? tr("Only runs of one kind compare")
                                       : tr("Compare the two selected runs"));
    for (QAction* a : menu_->actions())
        if (auto* b = qobject_cast<QPushButton*>(a->parent())) {
            a->setEnabled(b->isEnabled());
            a->setToolTip(b->toolTip());
        }
}

}  // namespace ts::ui
