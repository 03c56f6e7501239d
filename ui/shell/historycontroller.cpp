#include "ui/shell/historycontroller.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHash>
#include <QLabel>
#include <QMessageBox>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "ui/common/format.h"
#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/common/storeaccess.h"
#include "ui/labs.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/runconfig.h"
#include "ui/shell/runsession.h"
#include "ui/shell/storefollower.h"

namespace ts::ui {

HistoryController::HistoryController(RunSession* session, LabDeck* deck, QWidget* window)
    : QObject(window), session_(session), deck_(deck), window_(window) {
    widget_ = new HistoryWidget(&runs_, window);
    tellKinds();
    connect(widget_, &HistoryWidget::openRequested, this, &HistoryController::openStoredRun);
    connect(widget_, &HistoryWidget::replayRequested, this,
            [this](qint64 id) { replayStoredRun(id, 1.0); });
    connect(widget_, &HistoryWidget::compareRequested, this, &HistoryController::compareStoredRuns);
    connect(widget_, &HistoryWidget::overlayRequested, this, &HistoryController::overlayStoredRuns);
    connect(widget_, &HistoryWidget::refreshRequested, this, &HistoryController::refresh);
    connect(widget_, &HistoryWidget::deleteRequested, this, &HistoryController::deleteStoredRun);
    connect(widget_, &HistoryWidget::loadConfigurationRequested, this,
            [this](qint64 id) { loadRunConfiguration(id); });
    connect(widget_, &HistoryWidget::runAgainRequested, this,
            [this](qint64 id) { loadRunConfiguration(id, true); });

    storeLabel_ = new QLabel(window);
    storeLabel_->setObjectName(QStringLiteral("storeLabel"));
    updateStoreLabel();
    follower_ = new StoreFollower(this);
    connect(follower_, &StoreFollower::changed, this, &HistoryController::refresh);
    connect(session_, &RunSession::stateChanged, widget_,
            [this] { widget_->setBusy(session_->isRunning()); });
    connect(session_, &RunSession::runFinished, this, &HistoryController::refresh);
    connect(deck_, &LabDeck::replayFinished, this, &HistoryController::replayFinished);
}

// Which runs the pane offers to open, replay and compare, and why not the others.
void HistoryController::tellKinds() {
    QStringList openable, replayable, comparable, replayTitles, compareTitles;
    for (const LabDeck::Lab& lab : deck_->labs()) {
        openable << lab.id;
        if (lab.view->replayUnavailable().isEmpty()) {
            replayable << lab.id;
            replayTitles << lab.title;
        }
        if (lab.view->compareUnavailable().isEmpty()) {
            comparable << lab.id;
            compareTitles << lab.title;
        }
    }
    widget_->setOpenableKinds(openable);
    widget_->setReplayableKinds(
        replayable,
        tr("Replay works on runs of %1 only (their steps were recorded); open others instead")
            .arg(replayTitles.join(QStringLiteral(", "))));
    widget_->setComparableKinds(comparable,
                                tr("Compare works on runs of %1 only; open others instead")
                                    .arg(compareTitles.join(QStringLiteral(", "))));
}

void HistoryController::refresh() {
    const QString path = session_->storePath();
    if (path.isEmpty()) return;
    follower_->markRead(path);
    auto* w = new QFutureWatcher<RunList>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w] {
        RunList list = w->result();
        w->deleteLater();
        const QList<qint64> selected = widget_->selectedRuns();
        if (!list.error.isEmpty()) {
            widget_->setMessage(tr("Store not readable: %1").arg(list.error));
        } else {
            widget_->setMessage(!list.readOnly.isEmpty() ? tr("Read-only: %1").arg(list.readOnly)
                                : list.runs.empty()      ? tr("No stored runs yet. Press Run.")
                                                         : QString());
            runs_.setRuns(std::move(list.runs));
            widget_->selectRuns(selected);
        }
        Q_EMIT refreshed();
    });
    w->setFuture(listRunsAsync(path));
}

void HistoryController::withStoredRun(qint64 id, const QString& what,
                                      std::function<void(const StoredRun&)> use) {
    auto* w = new QFutureWatcher<StoredRun>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, id, what, use = std::move(use)] {
        const StoredRun run = w->result();
        w->deleteLater();
        if (!run.error.isEmpty()) {
            Q_EMIT logLine(tr("Could not %1 run %2: %3").arg(what).arg(id).arg(run.error));
            Q_EMIT storedRunFailed(id, run.error);
            return;
        }
        if (session_->isRunning()) return;  // a run started meanwhile owns the views
        if (deck_->indexOf(qstr(run.info.lab)) < 0) {
            const QString why =
                tr("it is of kind '%1', which this window cannot show").arg(qstr(run.info.lab));
            Q_EMIT logLine(tr("Could not %1 run %2: %3").arg(what).arg(id).arg(why));
            Q_EMIT storedRunFailed(id, why);
            return;
        }
        use(run);
    });
    w->setFuture(loadRunAsync(session_->storePath(), id));
}

void HistoryController::openStoredRun(qint64 id) {
    if (session_->isRunning()) {
        Q_EMIT notice(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    withStoredRun(id, tr("open"), [this, id](const StoredRun& run) { showOpened(id, run); });
}

void HistoryController::showOpened(qint64 id, const StoredRun& run) {
    deck_->select(qstr(run.info.lab));
    LabView* view = deck_->currentView();
    QString error;
    if (!view->showStored(run, &error)) {
        Q_EMIT logLine(tr("Could not open run %1: %2").arg(id).arg(error));
        Q_EMIT storedRunFailed(id, error);
        return;
    }
    deck_->noteShown(view, session_->storePath());
    session_->setProgress(1.0, 0);
    session_->setStatus(tr("Showing stored run %1").arg(id));
    // A view that reads the run in a pool thread (a profile) has it shown only when it says
    // so: a report or screenshot taken before would be of an empty view.
    if (!view->loading()) {
        Q_EMIT storedRunOpened(id);
        return;
    }
    connect(
        view, &LabView::storedRunLoaded, this,
        [this, id](const QString& error) {
            if (error.isEmpty()) {
                Q_EMIT storedRunOpened(id);
            } else {
                Q_EMIT logLine(tr("Could not open run %1: %2").arg(id).arg(error));
                Q_EMIT storedRunFailed(id, error);
            }
        },
        Qt::SingleShotConnection);
}

void HistoryController::replayStoredRun(qint64 id, double speed) {
    if (session_->isRunning()) {
        Q_EMIT notice(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    if (const RunInfo* r = runs_.runById(id))
        if (const LabView* v = deck_->view(qstr(r->lab)); v && !v->replayUnavailable().isEmpty()) {
            Q_EMIT notice(v->replayUnavailable(), 4000);
            return;
        }
    withStoredRun(id, tr("replay"), [this, speed](const StoredRun& run) {
        LabView* v = deck_->view(qstr(run.info.lab));
        if (!v->replayUnavailable().isEmpty()) {  // the history list was stale
            Q_EMIT notice(v->replayUnavailable(), 4000);
            return;
        }
        deck_->select(qstr(run.info.lab));
        session_->replay(v, run, speed);
    });
}

void HistoryController::compareStoredRuns(qint64 a, qint64 b) {
    const QString path = session_->storePath();
    auto* w = new QFutureWatcher<std::pair<StoredRun, StoredRun>>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w] {
        const auto [ra, rb] = w->result();
        w->deleteLater();
        for (const StoredRun* r : {&ra, &rb})
            if (!r->error.isEmpty()) {
                Q_EMIT logLine(tr("Could not compare: %1").arg(r->error));
                Q_EMIT comparisonFailed(r->error);
                return;
            }
        LabView* v = deck_->view(qstr(ra.info.lab));
        QString error;
        if (ra.info.lab != rb.info.lab)
            error =
                tr("run %1 is of kind '%2' and run %3 of kind '%4': only runs of one kind compare")
                    .arg(ra.info.id)
                    .arg(qstr(ra.info.lab))
                    .arg(rb.info.id)
                    .arg(qstr(rb.info.lab));
        else if (!v)
            error = tr("runs of kind '%1' cannot be shown in this window").arg(qstr(ra.info.lab));
        else if (!v->compareUnavailable().isEmpty())
            error = v->compareUnavailable();
        if (error.isEmpty()) {
            if (!session_->isRunning()) deck_->select(qstr(ra.info.lab));
            if (v->compare(ra, rb, &error)) {
                deck_->noteShown(v, session_->storePath());
                Q_EMIT comparisonReady();
                return;
            }
        }
        Q_EMIT notice(error, 6000);  // a refusal, not a failure: nothing for the log
        Q_EMIT comparisonFailed(error);
    });
    w->setFuture(QtConcurrent::run([path, a, b] {
        return std::pair{loadRun(path, a), loadRun(path, b)};
    }));
}

namespace {

// "run 3 is bench, runs 5 and 9 are attention": the kinds of a selection, each with its runs.
QString kindsOf(const std::vector<std::pair<qint64, QString>>& runs) {
    QStringList kinds;
    QHash<QString, QStringList> ids;
    for (const auto& [id, kind] : runs) {
        if (!kinds.contains(kind)) kinds << kind;
        ids[kind] << QString::number(id);
    }
    QStringList parts;
    for (const QString& k : kinds)
        parts << (ids[k].size() == 1
                      ? HistoryController::tr("run %1 is of kind '%2'").arg(ids[k].front(), k)
                      : HistoryController::tr("runs %1 are of kind '%2'")
                            .arg(ids[k].join(QStringLiteral(", ")), k));
    return parts.join(QStringLiteral("; "));
}

struct OverlayResult {
    QString lab, error;
    std::vector<OverlaidRun> runs;
    std::optional<OverlayPlot> plot;
};

// In a pool thread: the runs read, each by its lab's overlayOf, and laid over each other.
OverlayResult readOverlay(const QString& path, const QList<qint64>& ids) {
    OverlayResult out;
    std::vector<StoredRun> runs;
    for (qint64 id : ids) {
        StoredRun r = loadRun(path, id);
        if (!r.error.isEmpty()) {
            out.error = HistoryController::tr("run %1 cannot be read: %2").arg(id).arg(r.error);
            return out;
        }
        runs.push_back(std::move(r));
    }
    std::vector<std::pair<qint64, QString>> kinds;
    for (const StoredRun& r : runs) kinds.emplace_back(r.info.id, qstr(r.info.lab));
    out.lab = kinds.front().second;
    for (const auto& k : kinds)
        if (k.second != out.lab) {
            out.error =
                HistoryController::tr("only runs of one kind overlay: %1").arg(kindsOf(kinds));
            return out;
        }
    const auto& labs = uiLabs();
    const auto entry =
        std::find_if(labs.begin(), labs.end(), [&](const LabEntry& l) { return l.id == out.lab; });
    if (entry == labs.end()) {
        out.error =
            HistoryController::tr("runs of kind '%1' cannot be shown in this window").arg(out.lab);
        return out;
    }
    if (!entry->overlayOf) {
        out.error = HistoryController::tr(
                        "%1 runs have no overlay (their results are not one "
                        "number per point): open them one at a time")
                        .arg(entry->title);
        return out;
    }
    for (const StoredRun& r : runs) out.runs.push_back({r.info, entry->overlayOf(r)});
    out.plot = combineOverlays(out.runs, &out.error);
    return out;
}

}  // namespace

void HistoryController::overlayStoredRuns(const QList<qint64>& selected) {
    QList<qint64> ids = selected;  // in the order the runs were made
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    auto refuse = [this](const QString& why) {
        Q_EMIT notice(why, 8000);  // a refusal, not a failure: nothing for the log
        Q_EMIT overlayFailed(why);
    };
    if (ids.size() < 2) return refuse(tr("Select two or more runs in the History pane to overlay"));
    // Kinds the list knows are told at once, before anything is read.
    std::vector<std::pair<qint64, QString>> known;
    for (qint64 id : ids)
        if (const RunInfo* r = runs_.runById(id)) known.emplace_back(id, qstr(r->lab));
    for (const auto& k : known)
        if (k.second != known.front().second)
            return refuse(tr("Only runs of one kind overlay: %1").arg(kindsOf(known)));
    auto* w = new QFutureWatcher<OverlayResult>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, refuse, ids] {
        OverlayResult r = w->result();
        w->deleteLater();
        LabView* v = r.error.isEmpty() ? deck_->view(r.lab) : nullptr;
        if (!r.error.isEmpty() || !v || !r.plot) {
            const QString why = r.error.isEmpty() ? tr("nothing to overlay") : r.error;
            Q_EMIT logLine(tr("Could not overlay: %1").arg(why));
            return refuse(why);
        }
        if (!session_->isRunning()) deck_->select(r.lab);  // a live run keeps its lab on screen
        v->showOverlay(std::move(r.runs), std::move(*r.plot));
        QStringList shown;
        for (qint64 id : ids) shown << QString::number(id);
        Q_EMIT logLine(tr("Overlaid runs %1").arg(shown.join(QStringLiteral(", "))));
        Q_EMIT overlayReady(r.lab);
    });
    w->setFuture(QtConcurrent::run(readOverlay, session_->storePath(), ids));
}

void HistoryController::openSelected() {
    if (const auto ids = widget_->selectedRuns(); !ids.isEmpty()) openStoredRun(ids.front());
}

void HistoryController::replaySelected(double speed) {
    if (const auto ids = widget_->selectedRuns(); !ids.isEmpty())
        replayStoredRun(ids.front(), speed);
}

void HistoryController::overlaySelected() { overlayStoredRuns(widget_->selectedRuns()); }

void HistoryController::compareSelected() {
    const auto ids = widget_->selectedRuns();
    if (ids.size() == 2)
        compareStoredRuns(std::min(ids[0], ids[1]), std::max(ids[0], ids[1]));
    else
        Q_EMIT notice(tr("Select exactly two runs in the History pane"), 4000);
}

bool HistoryController::loadRunConfiguration(qint64 id, bool runNow) {
    auto refuse = [&](const QString& why) {
        const QString line = tr("Cannot load run %1's configuration: %2").arg(id).arg(why);
        Q_EMIT logLine(line);
        Q_EMIT notice(line, 6000);
        return false;
    };
    if (session_->isRunning())
        return refuse(tr("a run is in progress; wait for it to finish, or stop it"));
    if (!session_->capabilitiesReady())
        return refuse(tr("still checking what this machine can run"));
    const RunInfo* run = runs_.runById(id);
    if (!run) return refuse(tr("it is not in the store"));
    LabPanel* panel = deck_->panel(qstr(run->lab));
    if (!panel)
        return refuse(tr("it is of kind '%1', which this window cannot show").arg(qstr(run->lab)));
    QString why;
    const std::optional<QJsonObject> state = panelStateForRun(*run, &why);
    if (!state) return refuse(why);

    deck_->select(qstr(run->lab));
    QStringList notes;
    // Labelled as the run was, for as long as the configuration stays the run's (as a preset).
    panel->applyPreset(*state, qstr(run->label), &notes);
    Q_EMIT logLine(
        tr("— Configuration of run %1 loaded: %2").arg(id).arg(configurationSummary(*run)));
    for (const QString& n : notes) Q_EMIT logLine(tr("note: %1").arg(n));
    if (!runNow) {
        session_->setStatus(tr("Run %1's configuration loaded. Press Run.").arg(id));
        return true;
    }
    if (!notes.isEmpty()) {
        // What remains is another run than the one asked for: the user decides.
        session_->setStatus(tr("Run %1's configuration loaded, but this machine cannot run all "
                               "of it (see the log). Press Run to run what remains.")
                                .arg(id));
        return false;
    }
    return session_->start();
}

void HistoryController::deleteStoredRun(qint64 id) {
    const QString path = session_->storePath();
    auto* w = new QFutureWatcher<QString>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, id, path] {
        const QString err = w->result();
        w->deleteLater();
        if (err.isEmpty()) {
            Q_EMIT logLine(tr("Run %1 deleted").arg(id));
            for (const QString& title : deck_->markDeleted(path, id))
                Q_EMIT logLine(tr("The %1 view showed run %2: it stays on screen marked deleted "
                                  "and can no longer be exported")
                                   .arg(title)
                                   .arg(id));
        } else {
            Q_EMIT logLine(tr("Could not delete run %1: %2").arg(id).arg(err));
        }
        refresh();
        Q_EMIT storedRunDeleted(id, err);
    });
    w->setFuture(removeRunAsync(path, id));
}

void HistoryController::openStore(const QString& path) { openStoreAt(path, false); }

void HistoryController::openStoreInteractive() {
    const QString dir = QFileInfo(session_->storePath()).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(window_, tr("Open Results Store"), dir,
                                     tr("TrainScope results (*.db *.sqlite);;All files (*)"));
    if (!path.isEmpty()) openStoreAt(path, true);
}

void HistoryController::openStoreAt(const QString& path, bool interactive) {
    auto fail = [this, interactive](const QString& why) {
        Q_EMIT logLine(tr("Could not open the results store: %1").arg(why));
        if (interactive)
            QMessageBox::warning(window_, tr("Open Results Store"),
                                 tr("%1\n\nThe window keeps using %2.")
                                     .arg(why, QDir::toNativeSeparators(session_->storePath())));
        Q_EMIT storeOpenFailed(why);
    };
    if (session_->isRunning())
        return fail(tr("a run is in progress; wait for it to finish, or stop it"));
    const QFileInfo file(path);
    if (!file.isFile())
        return fail(tr("%1 does not exist or is not a file").arg(QDir::toNativeSeparators(path)));
    const QString absolute = file.absoluteFilePath();
    auto* w = new QFutureWatcher<RunList>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, absolute, fail] {
        RunList list = w->result();
        w->deleteLater();
        if (!list.error.isEmpty())
            return fail(tr("%1 cannot be read as a results store: %2")
                            .arg(QDir::toNativeSeparators(absolute), list.error));
        if (session_->isRunning())
            return fail(tr("a run started meanwhile; open the store once it ends"));
        session_->setStorePath(absolute);
        widget_->setMessage(!list.readOnly.isEmpty() ? tr("Read-only: %1").arg(list.readOnly)
                            : list.runs.empty() ? tr("No stored runs in this store yet. Press Run.")
                                                : QString());
        runs_.setRuns(std::move(list.runs));
        updateStoreLabel();
        Q_EMIT logLine(tr("Results store: %1").arg(QDir::toNativeSeparators(absolute)));
        Q_EMIT storeOpened(absolute);
        Q_EMIT refreshed();
    });
    w->setFuture(listRunsAsync(absolute));
}

bool HistoryController::importTrace(const QString& chosen, QString* error) {
    QString path = chosen, why;
    if (path.isEmpty()) {
        QStringList filters, all;
        for (const LabDeck::Lab& lab : deck_->labs())
            if (const QStringList p = lab.view->importPatterns(); !p.isEmpty()) {
                filters << tr("%1 (%2)").arg(lab.title, p.join(QLatin1Char(' ')));
                all << p;
            }
        filters.prepend(tr("Traces and snapshots (%1)").arg(all.join(QLatin1Char(' '))));
        path = QFileDialog::getOpenFileName(window_, tr("Import Trace"), {}, filters.join(";;"));
        if (path.isEmpty()) return false;
    }
    const QString name = QFileInfo(path).fileName();
    LabView* v = nullptr;
    QString lab;
    for (const LabDeck::Lab& l : deck_->labs())
        for (const QString& p : l.view->importPatterns())
            if (!v && QDir::match(p, name)) v = l.view, lab = l.id;
    if (!v)
        why = tr("%1: no experiment imports this kind of file").arg(name);
    else if (session_->isRunning())
        why = tr("Wait for the run to finish, or stop it");
    else if (!deck_->select(lab))
        why = tr("%1: the experiment '%2' cannot be shown now").arg(name, lab);
    else if (v->importFile(path, session_->storePath(), &why))
        deck_->noteShown(v, session_->storePath());
    if (!why.isEmpty()) {
        Q_EMIT logLine(tr("Import failed: %1").arg(why));
        Q_EMIT notice(why, 8000);
        if (chosen.isEmpty()) QMessageBox::warning(window_, tr("Import Trace"), why);
    }
    if (error) *error = why;
    return why.isEmpty();
}

void HistoryController::updateStoreLabel() {
    const QString path = QDir::toNativeSeparators(session_->storePath());
    QString shown = path;
    const QString home = QDir::toNativeSeparators(QDir::homePath());
    if (shown.startsWith(home + QDir::separator()))
        shown = QStringLiteral("~") + shown.mid(home.size());
    storeLabel_->setText(tr("Store: %1").arg(shown));
    storeLabel_->setToolTip(
        tr("The results store in use: %1 (File ▸ Open Results Store… picks another)").arg(path));
}

}  // namespace ts::ui
