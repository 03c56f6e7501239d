// MainWindow, continued: what History does beyond showing runs. Loading a run's configuration
// into its lab's panel and running it again, deleting a run (a view that shows it is marked
// deleted and refuses exports), opening another results store, presentation mode.
#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QMessageBox>
#include <QStatusBar>
#include <QVBoxLayout>

#include "ui/common/format.h"
#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/common/storeaccess.h"
#include "ui/labs.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/presentation.h"
#include "ui/shell/runconfig.h"

namespace ts::ui {

bool MainWindow::loadRunConfiguration(qint64 id, bool runNow) {
    auto refuse = [&](const QString& why) {
        const QString line = tr("Cannot load run %1's configuration: %2").arg(id).arg(why);
        appendLog(line);
        statusBar()->showMessage(line, 6000);
        return false;
    };
    if (isRunning()) return refuse(tr("a run is in progress; wait for it to finish, or stop it"));
    if (!capsReady_) return refuse(tr("still checking what this machine can run"));
    const RunInfo* run = runs_.runById(id);
    if (!run) return refuse(tr("it is not in the store"));
    const int index = labIndex(qstr(run->lab));
    if (index < 0)
        return refuse(tr("it is of kind '%1', which this window cannot show").arg(qstr(run->lab)));
    QString why;
    const std::optional<QJsonObject> state = panelStateForRun(*run, &why);
    if (!state) return refuse(why);

    selectExperiment(labs_[index].id);
    QStringList notes;
    // Labelled as the run was, for as long as the configuration stays the run's (as a preset).
    labs_[index].panel->applyPreset(*state, qstr(run->label), &notes);
    appendLog(tr("— Configuration of run %1 loaded: %2").arg(id).arg(configurationSummary(*run)));
    for (const QString& n : notes) appendLog(tr("note: %1").arg(n));
    if (!runNow) {
        statusLabel_->setText(tr("Run %1's configuration loaded. Press Run.").arg(id));
        return true;
    }
    if (!notes.isEmpty()) {
        // What remains is another run than the one asked for: the user decides.
        statusLabel_->setText(
            tr("Run %1's configuration loaded, but this machine cannot run all of it "
               "(see the log). Press Run to run what remains.")
                .arg(id));
        return false;
    }
    return startRun();
}

bool MainWindow::openPointInLab(const QString& lab, const QJsonObject& point, const QString& title,
                                bool runNow) {
    auto refuse = [&](const QString& why) {
        const QString line = tr("Cannot open %1: %2").arg(title, why);
        appendLog(line);
        statusBar()->showMessage(line, 6000);
        return false;
    };
    if (isRunning()) return refuse(tr("a run is in progress; wait for it to finish, or stop it"));
    if (!capsReady_) return refuse(tr("still checking what this machine can run"));
    const int index = labIndex(lab);
    if (index < 0) return refuse(tr("this window has no lab '%1'").arg(lab));
    const LabEntry& entry = uiLabs()[static_cast<size_t>(index)];
    if (!entry.stateFromPoint)
        return refuse(tr("the %1 lab takes no training point").arg(entry.title));
    selectExperiment(lab);
    QStringList notes;
    labs_[index].panel->applyPreset(entry.stateFromPoint(point), title, &notes);
    appendLog(tr("— %1: %2").arg(title, labs_[index].panel->summary()));
    for (const QString& n : notes) appendLog(tr("note: %1").arg(n));
    if (!runNow) return true;
    if (!notes.isEmpty() || !labs_[index].panel->isValid()) {
        statusLabel_->setText(tr("%1: this machine cannot run all of it (see the log)").arg(title));
        return false;
    }
    return startRun();
}

void MainWindow::deleteStoredRun(qint64 id) {
    const QString path = controller_.storePath();
    auto* w = new QFutureWatcher<QString>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, id, path] {
        const QString err = w->result();
        w->deleteLater();
        if (err.isEmpty()) {
            appendLog(tr("Run %1 deleted").arg(id));
            markDeleted(path, id);
        } else {
            appendLog(tr("Could not delete run %1: %2").arg(id).arg(err));
        }
        refreshHistory();
        Q_EMIT storedRunDeleted(id, err);
    });
    w->setFuture(removeRunAsync(path, id));
}

void MainWindow::noteShown(LabView* view) {
    shownStore_[view] = controller_.storePath();
    deleted_.remove(view);
    updateTitle();
}

void MainWindow::markDeleted(const QString& store, qint64 id) {
    for (const Lab& lab : labs_)
        if (lab.view->storeRunId() == id && shownStore_.value(lab.view) == store) {
            deleted_.insert(lab.view);
            appendLog(tr("The %1 view showed run %2: it stays on screen marked deleted and can no "
                         "longer be exported")
                          .arg(lab.title)
                          .arg(id));
        }
    updateTitle();
}

QString MainWindow::deletedRunNote(const LabView* view) const {
    if (!view || !deleted_.contains(view)) return {};
    return tr("run %1 was deleted from the results store; open or run another before exporting")
        .arg(view->storeRunId());
}

bool MainWindow::refuseDeleted(const LabView* view, QString* error) const {
    const QString note = deletedRunNote(view);
    if (!note.isEmpty() && error) *error = tr("Cannot export: %1.").arg(note);
    return !note.isEmpty();
}

QWidget* MainWindow::withDeletedBanner(QWidget* views) {
    auto* centre = new QWidget(this);
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
    deletedBanner_ = new QLabel(centre);
    deletedBanner_->setObjectName(QStringLiteral("deletedBanner"));
    deletedBanner_->setWordWrap(true);
    deletedBanner_->setStyleSheet(
        QStringLiteral("padding: 6px; color: white; background: #b3261e;"));
    deletedBanner_->hide();
    layout->addWidget(deletedBanner_);
    layout->addWidget(views, 1);
    return centre;
}

void MainWindow::openStore(const QString& path) { openStoreAt(path, false); }

void MainWindow::openStoreInteractive() {
    const QString dir = QFileInfo(controller_.storePath()).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Results Store"), dir,
                                     tr("TrainScope results (*.db *.sqlite);;All files (*)"));
    if (!path.isEmpty()) openStoreAt(path, true);
}

void MainWindow::openStoreAt(const QString& path, bool interactive) {
    auto fail = [this, interactive](const QString& why) {
        appendLog(tr("Could not open the results store: %1").arg(why));
        if (interactive)
            QMessageBox::warning(this, tr("Open Results Store"),
                                 tr("%1\n\nThe window keeps using %2.")
                                     .arg(why, QDir::toNativeSeparators(controller_.storePath())));
        Q_EMIT storeOpenFailed(why);
    };
    if (isRunning()) return fail(tr("a run is in progress; wait for it to finish, or stop it"));
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
        if (isRunning()) return fail(tr("a run started meanwhile; open the store once it ends"));
        controller_.setStorePath(absolute);
        history_->setMessage(!list.readOnly.isEmpty() ? tr("Read-only: %1").arg(list.readOnly)
                             : list.runs.empty()
                                 ? tr("No stored runs in this store yet. Press Run.")
                                 : QString());
        runs_.setRuns(std::move(list.runs));
        updateStoreLabel();
        appendLog(tr("Results store: %1").arg(QDir::toNativeSeparators(absolute)));
        Q_EMIT storeOpened(absolute);
        Q_EMIT historyRefreshed();
    });
    w->setFuture(listRunsAsync(absolute));
}

void MainWindow::updateStoreLabel() {
    const QString path = QDir::toNativeSeparators(controller_.storePath());
    QString shown = path;
    const QString home = QDir::toNativeSeparators(QDir::homePath());
    if (shown.startsWith(home + QDir::separator()))
        shown = QStringLiteral("~") + shown.mid(home.size());
    storeLabel_->setText(tr("Store: %1").arg(shown));
    storeLabel_->setToolTip(
        tr("The results store in use: %1 (File ▸ Open Results Store… picks another)").arg(path));
}

void MainWindow::setPresentationMode(bool on) {
    presentation_->setActive(on);
    const QSignalBlocker block(presentationAct_);
    presentationAct_->setChecked(on);
}

bool MainWindow::presentationMode() const { return presentation_->isActive(); }

}  // namespace ts::ui
