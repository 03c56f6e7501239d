#include "ui/shell/runsession.h"

#include <QFutureWatcher>
#include <QLabel>
#include <QProgressBar>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "ui/common/format.h"
#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/labs.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/longruncheck.h"

namespace ts::ui {

namespace {
QString outcomeText(RunOutcome o) {
    switch (o) {
        case RunOutcome::Completed:
            return RunSession::tr("finished");
        case RunOutcome::Stopped:
            return RunSession::tr("stopped");
        case RunOutcome::Failed:
            return RunSession::tr("failed");
    }
    return {};
}
}  // namespace

RunSession::RunSession(RunController* controller, LabDeck* deck, QWidget* window)
    : QObject(window), controller_(controller), deck_(deck), window_(window) {
    statusLabel_ = new QLabel(tr("Checking what this machine can run…"), window);
    progress_ = new QProgressBar(window);
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(260);
    progress_->setTextVisible(true);
    progress_->setFormat(QStringLiteral("%p%"));
    progress_->setValue(0);
    eta_ = new QLabel(window);
    // The panel lists its problems under its fields, possibly scrolled away: their count and
    // the first of them stay in sight in the status bar.
    problemsLabel_ = new QLabel(window);
    problemsLabel_->setObjectName(QStringLiteral("problemsIndicator"));
    problemsLabel_->setStyleSheet(QStringLiteral("QLabel { color: #e53935; }"));
    problemsLabel_->hide();
    longRun_ = new LongRunCheck(window);
    connect(longRun_, &LongRunCheck::stopRequested, this, &RunSession::stop);
    connectController();
    connectDeck();
}

void RunSession::connectController() {
    connect(controller_, &RunController::runStarted, this,
            [this](quint64, qint64 storeRun, const Environment& env) {
                if (runningView_) runningView_->runStarted(storeRun, env);
                Q_EMIT logLine(
                    storeRun > 0
                        ? tr("Stored as run %1 in %2").arg(storeRun).arg(controller_->storePath())
                        : tr("This run is not stored"));
                if (!env.device_name.empty())
                    Q_EMIT logLine(environmentLines(env).join(QStringLiteral(" · ")));
            });
    connect(controller_, &RunController::itemsArrived, this,
            [this](quint64, const QList<QVariant>& items) {
                if (runningView_) runningView_->addItems(items);
            });
    connect(controller_, &RunController::progress, this, [this](quint64, double f, double eta) {
        setProgress(f, eta);
        longRun_->progress(f, eta);
    });
    connect(controller_, &RunController::logMessage, this,
            [this](quint64, int level, const QString& text) {
                static const char* prefix[] = {"", "warning: ", "error: "};
                Q_EMIT logLine(QLatin1String(prefix[std::clamp(level, 0, 2)]) + text);
            });
    connect(controller_, &RunController::runFinished, this,
            [this](quint64, RunOutcome outcome, const QString& message) {
                const QString took = formatDuration(runClock_.elapsed() / 1000.0);
                QString line = tr("Run %1 after %2").arg(outcomeText(outcome), took);
                if (!message.isEmpty()) line += QStringLiteral(": ") + message;
                Q_EMIT logLine(line);
                setStatus(line);
                // A stopped or failed run's progress (7%) would read as a run still going.
                setProgress(outcome == RunOutcome::Completed ? 1.0 : 0.0, -1);
                eta_->clear();
                longRun_->runFinished();
                runningView_ = nullptr;  // the run's last event: nothing more comes for it
                updateState();
                Q_EMIT runFinished(outcome);
            });
}

void RunSession::connectDeck() {
    connect(deck_, &LabDeck::panelChanged, this, &RunSession::updateState);
    connect(deck_, &LabDeck::runRequested, this, &RunSession::start);
    connect(deck_, &LabDeck::statusText, this, &RunSession::setStatus);
    connect(deck_, &LabDeck::progress, this, &RunSession::setProgress);
    connect(deck_, &LabDeck::openPointInLab, this, &RunSession::openPointInLab);
    connect(deck_, &LabDeck::currentChanged, this, &RunSession::labShown);
    connect(deck_, &LabDeck::replayFinished, this, [this] {
        eta_->clear();
        updateState();
    });
}

void RunSession::labShown() {
    updateState();
    if (isRunning()) return;
    // The status line and progress were the last lab's: say what this one shows.
    LabView* v = deck_->currentView();
    const bool shown = v && deck_->showsRun(v);
    setStatus(!shown                ? tr("Ready")
              : v->storeRunId() > 0 ? tr("Showing run %1").arg(v->storeRunId())
                                    : tr("Showing an unsaved run"));
    setProgress(shown ? 1.0 : 0.0, -1);
}

bool RunSession::start() {
    if (isRunning()) return false;
    LabPanel* p = deck_->currentPanel();
    if (!p) return false;
    if (!capsReady_) {
        Q_EMIT notice(tr("Still checking what this machine can run"), 3000);
        return false;
    }
    std::optional<LabJob> job = p->makeJob();
    if (!job) {
        const QStringList problems = p->problems();
        Q_EMIT logLine(tr("Cannot run: %1")
                           .arg(problems.isEmpty() ? tr("nothing to run")
                                                   : problems.join(QStringLiteral("; "))));
        setStatus(tr("Fix the flagged fields first"));
        return false;
    }
    Q_EMIT runStarting();
    runningView_ = deck_->currentView();
    runningView_->beginRun(*job);
    deck_->noteShown(runningView_, controller_->storePath());
    Q_EMIT logLine(tr("— Run: %1").arg(p->summary()));
    setProgress(0, -1);
    runClock_.start();
    longRun_->runStarted();
    stopping_ = false;
    controller_->start(std::move(*job));
    updateState();
    return true;
}

void RunSession::stop() {
    for (const LabDeck::Lab& lab : deck_->labs())
        if (lab.view->isReplaying()) {
            lab.view->stopReplay();
            return;
        }
    if (!controller_->isRunning()) return;
    controller_->stop();
    Q_EMIT logLine(tr("Stopping after the current step…"));
    setStatus(tr("Stopping after the current step…"));
    stopping_ = true;
    Q_EMIT stateChanged();
}

void RunSession::replay(LabView* view, const StoredRun& run, double speed) {
    view->replay(run, speed);
    deck_->noteShown(view, controller_->storePath());
    updateState();
}

bool RunSession::isRunning() const { return deck_->busy(); }

bool RunSession::canStart() const {
    const LabPanel* p = deck_->currentPanel();
    return !isRunning() && capsReady_ && p && p->isValid();
}

QString RunSession::startTip() const {
    const LabPanel* p = deck_->currentPanel();
    return !capsReady_   ? tr("Checking what this machine can run…")
           : isRunning() ? tr("A run is in progress")
           : p && p->isValid()
               ? tr("Run: %1").arg(p->summary())
               : tr("Fix first:\n%1").arg(p ? p->problems().join(QLatin1Char('\n')) : QString());
}

void RunSession::updateState() {
    const LabPanel* p = deck_->currentPanel();
    const QStringList problems = p && capsReady_ ? p->problems() : QStringList();
    problemsLabel_->setVisible(!problems.isEmpty());
    if (!problems.isEmpty()) {
        const QString first = problems.front().left(90) +
                              (problems.front().size() > 90 ? QStringLiteral("…") : QString());
        problemsLabel_->setText(problems.size() == 1
                                    ? tr("⚠ %1").arg(first)
                                    : tr("⚠ %1 problems: %2 …").arg(problems.size()).arg(first));
        problemsLabel_->setToolTip(problems.join(QLatin1Char('\n')));
    }
    deck_->setLocked(isRunning());
    Q_EMIT stateChanged();
}

QString RunSession::statusText() const { return statusLabel_->text(); }

void RunSession::setStatus(const QString& text) { statusLabel_->setText(text); }

void RunSession::setProgress(double fraction, double eta) {
    progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    eta_->setText(eta >= 0 && fraction < 1 ? tr("ETA %1").arg(formatDuration(eta)) : QString());
}

void RunSession::probeCapabilities() {
    auto* watcher = new QFutureWatcher<std::pair<Capabilities, QString>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        const auto [caps, error] = watcher->result();
        watcher->deleteLater();
        takeCapabilities(caps, error);
    });
    // The first LibTorch query can take seconds (CUDA initialisation): off the UI thread.
    watcher->setFuture(QtConcurrent::run([]() -> std::pair<Capabilities, QString> {
        try {
            return {ts::capabilities(), QString()};
        } catch (const std::exception& e) {
            Capabilities c;
            c.devices.push_back(DeviceInfo{"cpu", "CPU"});
            return {c, qstr(std::string(e.what()))};
        }
    }));
}

void RunSession::takeCapabilities(const Capabilities& caps, const QString& error) {
    caps_ = caps;
    capsReady_ = true;
    if (!error.isEmpty()) Q_EMIT logLine(tr("warning: could not query LibTorch: %1").arg(error));
    for (const LabDeck::Lab& lab : deck_->labs()) lab.panel->setCapabilities(caps_);
    QStringList devs;
    for (const auto& d : caps_.devices)
        devs << qstr(d.id) +
                    (d.name.empty() ? QString() : QStringLiteral(" (%1)").arg(qstr(d.name)));
    Q_EMIT logLine(tr("LibTorch %1; devices: %2")
                       .arg(qstr(caps_.torch_version), devs.join(QStringLiteral(", "))));
    setStatus(caps_.cuda_available
                  ? tr("Ready")
                  : tr("Ready — CPU only: GPU options are disabled (hover them for why)"));
    if (pendingPreset_) {
        const ClassroomPreset p = *pendingPreset_;
        pendingPreset_.reset();
        loadPreset(p);
    }
    updateState();
    Q_EMIT capabilitiesKnown();
}

bool RunSession::loadPreset(const ClassroomPreset& preset) {
    if (isRunning()) {
        Q_EMIT notice(tr("Wait for the run to finish, or stop it"), 4000);
        return false;
    }
    if (!capsReady_) {
        pendingPreset_ = preset;  // CPU or GPU variant: decided once the probe is back
        return true;
    }
    const int index = deck_->indexOf(preset.experiment);
    if (index < 0) {
        Q_EMIT logLine(tr("Preset '%1' needs the experiment '%2', which this build lacks")
                           .arg(preset.title, preset.experiment));
        return false;
    }
    if (preset.gpuOnly() && !caps_.cuda_available) {
        const QString why = gpuOnlyReason(preset);
        Q_EMIT logLine(why);
        setStatus(why);
        return false;
    }
    const LabDeck::Lab& lab = deck_->labs()[index];
    deck_->select(lab.id);
    QJsonObject config = preset.config;
    const bool cpuVariant = !caps_.cuda_available && !preset.cpuConfig.isEmpty();
    if (cpuVariant)
        for (auto it = preset.cpuConfig.begin(); it != preset.cpuConfig.end(); ++it)
            config[it.key()] = it.value();
    QStringList notes;
    lab.panel->applyPreset(config, preset.title, &notes);
    Q_EMIT logLine(tr("— Preset: %1").arg(preset.title));
    if (!preset.description.isEmpty()) Q_EMIT logLine(preset.description);
    if (cpuVariant) Q_EMIT logLine(tr("No CUDA device: loaded the preset's smaller CPU variant"));
    for (const QString& n : notes) Q_EMIT logLine(tr("note: %1").arg(n));
    lab.view->applyPresetView(preset.view);
    // The views still show the last run until this one runs: say so, not only "loaded".
    setStatus(deck_->showsRun(lab.view) && lab.view->storeRunId() > 0
                  ? tr("Preset loaded: %1. Press Run; until then the views show run %2.")
                        .arg(preset.title)
                        .arg(lab.view->storeRunId())
                  : tr("Preset loaded: %1. Press Run.").arg(preset.title));
    return true;
}

bool RunSession::openPointInLab(const QString& lab, const QJsonObject& point, const QString& title,
                                bool runNow) {
    auto refuse = [&](const QString& why) {
        const QString line = tr("Cannot open %1: %2").arg(title, why);
        Q_EMIT logLine(line);
        Q_EMIT notice(line, 6000);
        return false;
    };
    if (isRunning()) return refuse(tr("a run is in progress; wait for it to finish, or stop it"));
    if (!capsReady_) return refuse(tr("still checking what this machine can run"));
    const int index = deck_->indexOf(lab);
    if (index < 0) return refuse(tr("this window has no lab '%1'").arg(lab));
    const LabEntry& entry = uiLabs()[static_cast<size_t>(index)];
    if (!entry.stateFromPoint)
        return refuse(tr("the %1 lab takes no training point").arg(entry.title));
    deck_->select(lab);
    LabPanel* panel = deck_->labs()[index].panel;
    QStringList notes;
    panel->applyPreset(entry.stateFromPoint(point), title, &notes);
    Q_EMIT logLine(tr("— %1: %2").arg(title, panel->summary()));
    for (const QString& n : notes) Q_EMIT logLine(tr("note: %1").arg(n));
    if (!runNow) return true;
    if (!notes.isEmpty() || !panel->isValid()) {
        setStatus(tr("%1: this machine cannot run all of it (see the log)").arg(title));
        return false;
    }
    return start();
}

}  // namespace ts::ui
