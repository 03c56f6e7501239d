// The window's run: what this machine can run (probed once, off the UI thread), starting the
// shown lab's job through the RunController and stopping it (or the replay that goes on), the
// status line with the panel's problems, the progress bar and the time left, the question
// before a long run, and how the run ended (runFinished, lastProblems: what a scripted session
// reads). What goes into a lab's panel before a run comes through here too: a classroom
// preset, a training point another lab's view hands over ("Profile This Point").
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <optional>

#include "runtime/environment.h"
#include "ui/common/runcontroller.h"
#include "ui/shell/presets.h"

class QLabel;
class QProgressBar;
class QWidget;

namespace ts::ui {

class LabDeck;
class LabView;
class LongRunCheck;
struct StoredRun;

class RunSession : public QObject {
    Q_OBJECT
public:
    // Runs `deck`'s shown lab through `controller`; `window` parents the status bar's pieces
    // and the long-run question.
    RunSession(RunController* controller, LabDeck* deck, QWidget* window);

    // Asks LibTorch what this machine has, in a pool thread; capabilitiesKnown says when.
    void probeCapabilities();
    bool capabilitiesReady() const { return capsReady_; }
    const Capabilities& capabilities() const { return caps_; }

    // Starts the shown lab's run; false (with the reason in the log) if invalid.
    bool start();
    // Ends the replay that goes on, else the live run within a step.
    void stop();
    // Replays stored run `run` in `view` at `speed` (1: as it ran); stop() ends it.
    void replay(LabView* view, const StoredRun& run, double speed);
    // A live run or a replay goes on.
    bool isRunning() const;
    // What Run and Stop may do now, and Run's tooltip (why not, or what it runs).
    bool canStart() const;
    bool canStop() const { return isRunning() && !stopping_; }
    QString startTip() const;

    // False (with the reason in the log and the status line) when it cannot be loaded here: a
    // run in progress, a GPU-only preset without a GPU, an experiment this build lacks. Before
    // the machine is known it waits, and loads once it is.
    bool loadPreset(const ClassroomPreset& preset);
    // Puts the training point `point` (core/point_json.h's JSON) into lab `lab`'s panel, as
    // that lab takes a point (LabEntry::stateFromPoint), labelled `title`, and starts it with
    // `runNow`: a view's openPointInLab.
    bool openPointInLab(const QString& lab, const QJsonObject& point, const QString& title,
                        bool runNow);

    QString storePath() const { return controller_->storePath(); }
    void setStorePath(const QString& path) { controller_->setStorePath(path); }
    // What went wrong in the last run (RunController::lastProblems).
    const QStringList& lastProblems() const { return controller_->lastProblems(); }
    // Asks before a run that will take long goes on (off for scripted sessions).
    LongRunCheck* longRunCheck() const { return longRun_; }

    // The status bar's pieces, for the window to place.
    QLabel* statusLabel() const { return statusLabel_; }
    QLabel* problemsLabel() const { return problemsLabel_; }
    QLabel* etaLabel() const { return eta_; }
    QProgressBar* progressBar() const { return progress_; }
    QString statusText() const;
    void setStatus(const QString& text);
    void setProgress(double fraction, double etaSeconds);

Q_SIGNALS:
    void capabilitiesKnown();
    // A run is about to start (the window saves its settings: they survive a crash of the run).
    void runStarting();
    void runFinished(ts::ui::RunOutcome outcome);
    // Running, stopping or what Run would do may read otherwise.
    void stateChanged();
    void logLine(const QString& text);
    void notice(const QString& text, int timeoutMs);  // the status bar's passing message

private:
    void connectController();
    void connectDeck();
    void updateState();
    void labShown();
    void takeCapabilities(const Capabilities& caps, const QString& error);

    RunController* controller_;
    LabDeck* deck_;
    QWidget* window_;
    Capabilities caps_;
    bool capsReady_ = false;
    bool stopping_ = false;
    std::optional<ClassroomPreset> pendingPreset_;
    QElapsedTimer runClock_;
    QPointer<LabView> runningView_;  // receives the items of the live run
    LongRunCheck* longRun_ = nullptr;
    QLabel* statusLabel_ = nullptr;
    QLabel* problemsLabel_ = nullptr;
    QLabel* eta_ = nullptr;
    QProgressBar* progress_ = nullptr;
};

}  // namespace ts::ui
