#include "ui/shell/labdeck.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/common/runcontroller.h"
#include "ui/common/theme.h"
#include "ui/labs.h"

namespace ts::ui {

LabDeck::LabDeck(const RunController* controller, QWidget* window)
    : QObject(window), controller_(controller) {
    buildViews(window);
    buildChooser(window);
}

void LabDeck::buildViews(QWidget* window) {
    centre_ = new QWidget(window);
    auto* layout = new QVBoxLayout(centre_);
    layout->setContentsMargins(0, 0, 0, 0);
    deletedBanner_ = new QLabel(centre_);
    deletedBanner_->setObjectName(QStringLiteral("deletedBanner"));
    deletedBanner_->setWordWrap(true);
    deletedBanner_->setStyleSheet(
        QStringLiteral("padding: 6px; color: white; background: #b3261e;"));
    deletedBanner_->hide();
    views_ = new QStackedWidget(centre_);
    views_->setObjectName(QStringLiteral("labViews"));
    layout->addWidget(deletedBanner_);
    layout->addWidget(views_, 1);
    for (const LabEntry& e : uiLabs()) {
        LabPanel* p = e.createPanel();
        p->setObjectName(e.id + QStringLiteral("Panel"));
        LabView* v = e.createView();
        v->setObjectName(e.id + QStringLiteral("View"));
        v->setParent(views_);
        views_->addWidget(v);
        labs_.append({e.id, e.title, p, v});
        connectView(v);
        connect(p, &LabPanel::changed, this, &LabDeck::panelChanged);
        connect(p, &LabPanel::runRequested, this, &LabDeck::runRequested);
    }
}

void LabDeck::connectView(LabView* v) {
    connect(v, &LabView::exportRequested, this,
            [this, v](int pane) { Q_EMIT exportRequested(v, pane); });
    connect(v, &LabView::copyRequested, this,
            [this, v](int pane) { Q_EMIT copyRequested(v, pane); });
    connect(v, &LabView::titleChanged, this, &LabDeck::titleChanged);
    connect(v, &LabView::storedRunLoaded, this, &LabDeck::titleChanged);
    connect(v, &LabView::logLine, this, &LabDeck::logLine);
    connect(v, &LabView::statusText, this, &LabDeck::statusText);
    connect(v, &LabView::progress, this, &LabDeck::progress);
    connect(v, &LabView::openPointInLab, this, &LabDeck::openPointInLab);
    connect(v, &LabView::replayFinished, this, &LabDeck::replayFinished);
}

void LabDeck::buildChooser(QWidget* window) {
    chooser_ = new QWidget(window);
    auto* layout = new QVBoxLayout(chooser_);
    layout->setContentsMargins(4, 4, 4, 4);
    combo_ = new QComboBox(chooser_);
    combo_->setObjectName(QStringLiteral("experiment"));
    panels_ = new QStackedWidget(chooser_);
    for (const Lab& lab : labs_) {
        auto* scroll = new QScrollArea(panels_);
        scroll->setWidget(lab.panel);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        panels_->addWidget(scroll);
        combo_->addItem(lab.title, lab.id);
    }
    fitPanels();
    connect(&Theme::instance(), &Theme::changed, panels_,
            [this] { QTimer::singleShot(0, panels_, [this] { fitPanels(); }); });
    connect(combo_, &QComboBox::currentIndexChanged, this, [this](int i) {
        panels_->setCurrentIndex(i);
        QTimer::singleShot(0, panels_, [this] { fitPanels(); });
        views_->setCurrentIndex(i);
        updateBanner();
        Q_EMIT currentChanged(i);
        Q_EMIT titleChanged();
    });
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Experiment:"), chooser_));
    row->addWidget(combo_, 1);
    layout->addLayout(row);
    layout->addWidget(panels_, 1);
}

// The dock is wide enough for the shown panel's fields (they are never clipped; the dock
// scrolls vertically only); a hidden panel asks for nothing: its size is stale after a font
// change (presentation mode) until it is shown. Re-applied once the new font has settled.
void LabDeck::fitPanels() {
    for (int i = 0; i < panels_->count(); ++i) {
        auto* scroll = static_cast<QScrollArea*>(panels_->widget(i));
        const int fit = scroll->widget()->minimumSizeHint().width() +
                        scroll->verticalScrollBar()->sizeHint().width() + 6;
        scroll->setMinimumWidth(i == panels_->currentIndex() ? fit : 0);
    }
}

int LabDeck::indexOf(const QString& id) const {
    for (int i = 0; i < labs_.size(); ++i)
        if (labs_[i].id == id) return i;
    return -1;
}

LabPanel* LabDeck::panel(const QString& id) const {
    const int i = indexOf(id);
    return i < 0 ? nullptr : labs_[i].panel;
}

LabView* LabDeck::view(const QString& id) const {
    const int i = indexOf(id);
    return i < 0 ? nullptr : labs_[i].view;
}

int LabDeck::currentIndex() const {
    const int i = combo_->currentIndex();
    return i >= 0 && i < labs_.size() ? i : -1;
}

QString LabDeck::currentId() const {
    const int i = currentIndex();
    return i < 0 ? QString() : labs_[i].id;
}

LabPanel* LabDeck::currentPanel() const {
    const int i = currentIndex();
    return i < 0 ? nullptr : labs_[i].panel;
}

LabView* LabDeck::currentView() const {
    const int i = currentIndex();
    return i < 0 ? nullptr : labs_[i].view;
}

bool LabDeck::replaying() const {
    for (const Lab& lab : labs_)
        if (lab.view->isReplaying()) return true;
    return false;
}

bool LabDeck::busy() const { return controller_->isRunning() || replaying(); }

void LabDeck::stopReplays() {
    for (const Lab& lab : labs_) lab.view->stopReplay();
}

void LabDeck::setLocked(bool locked) {
    combo_->setEnabled(!locked);
    panels_->setEnabled(!locked);
}

bool LabDeck::select(const QString& id) {
    const int i = combo_->findData(id);
    if (i < 0 || busy()) return false;
    combo_->setCurrentIndex(i);
    return true;
}

std::pair<int, int> LabDeck::findPane(const QString& key) const {
    // "lab.key" names one lab's pane.
    if (const qsizetype dot = key.indexOf(QLatin1Char('.')); dot > 0) {
        const int lab = indexOf(key.left(dot));
        const int pane = lab >= 0 ? labs_[lab].view->paneIndex(key.mid(dot + 1)) : -1;
        return pane >= 0 ? std::pair{lab, pane} : std::pair{-1, -1};
    }
    // Labs share pane keys ("timeline" is the profiler's and the memory lab's): the shown lab's
    // pane first, then the first lab that has one.
    if (const int current = currentIndex(); current >= 0)
        if (const int p = labs_[current].view->paneIndex(key); p >= 0) return {current, p};
    for (int i = 0; i < labs_.size(); ++i)
        if (const int p = labs_[i].view->paneIndex(key); p >= 0) return {i, p};
    return {-1, -1};
}

QStringList LabDeck::paneKeys() const {
    QStringList keys, shared;
    for (const Lab& lab : labs_)
        for (const LabView::Pane& pane : lab.view->panes()) {
            if (keys.contains(pane.key) && !shared.contains(pane.key)) shared << pane.key;
            if (!keys.contains(pane.key)) keys << pane.key;
        }
    for (const Lab& lab : labs_)
        for (const LabView::Pane& pane : lab.view->panes())
            if (shared.contains(pane.key)) keys << lab.id + QLatin1Char('.') + pane.key;
    return keys;
}

bool LabDeck::showPane(const QString& key) {
    const auto [lab, pane] = findPane(key);
    if (lab < 0) return false;
    if (currentIndex() != lab && !select(labs_[lab].id)) return false;
    labs_[lab].view->showPane(pane);
    return true;
}

void LabDeck::noteShown(LabView* view, const QString& store) {
    shownStore_[view] = store;
    deleted_.remove(view);
    updateBanner();
    Q_EMIT titleChanged();
}

bool LabDeck::showsRun(const LabView* view) const { return shownStore_.contains(view); }

QStringList LabDeck::markDeleted(const QString& store, qint64 id) {
    QStringList titles;
    for (const Lab& lab : labs_)
        if (lab.view->storeRunId() == id && shownStore_.value(lab.view) == store) {
            deleted_.insert(lab.view);
            titles << lab.title;
        }
    updateBanner();
    Q_EMIT titleChanged();
    return titles;
}

QString LabDeck::deletedRunNote(const LabView* view) const {
    if (!view || !deleted_.contains(view)) return {};
    return tr("run %1 was deleted from the results store; open or run another before exporting")
        .arg(view->storeRunId());
}

void LabDeck::updateBanner() {
    const QString deleted = deletedRunNote(currentView());
    deletedBanner_->setText(deleted.isEmpty() ? QString()
                                              : tr("Not stored any more: %1.").arg(deleted));
    deletedBanner_->setVisible(!deleted.isEmpty());
}

}  // namespace ts::ui
