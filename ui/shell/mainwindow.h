// The workbench window, the shell around the labs: a dock with the lab chooser and each
// lab's configuration panel, the lab's results view in the centre, Run / Stop, History, the
// log, exports and the run report, classroom presets, presentation mode and themes. It knows
// labs only through the registry (ui/labs.cpp): a LabPanel makes the job, a LabView shows
// its runs. Engine work runs in RunController's worker threads and store access in pool
// threads; this class only wires signals and keeps the UI state. What History does to the store
// (load a run's configuration, run it again, delete it, open another store) is in
// windowhistory.cpp; presentation mode in presentation.h.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <QSet>
#include <optional>

#include "runtime/environment.h"
#include "ui/common/runcontroller.h"
#include "ui/shell/presets.h"
#include "ui/shell/runlistmodel.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QStackedWidget;

namespace ts::ui {

class DataTableView;
class ExportableChart;
class HistoryWidget;
class LabPanel;
class LabView;
class PresentationMode;
class RedrawThrottle;
struct StoredRun;

class LongRunCheck;
class StoreFollower;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString storePath;            // empty: ResultStore::defaultPath()
        bool restoreSettings = true;  // window state, theme and last configuration
    };

    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Starts the current lab's run; false (with the reason in the log) if invalid.
    bool startRun();
    void stopRun();
    bool isRunning() const;
    bool capabilitiesReady() const { return capsReady_; }

    // False (with the reason in the log and status bar) when it cannot be loaded here: a run
    // in progress, a GPU-only preset without a GPU, an experiment this build lacks.
    bool loadPreset(const ClassroomPreset& preset);
    // Shows lab `id`'s panel and view; false when unknown or while a run goes on.
    bool selectExperiment(const QString& id);
    void openStoredRun(qint64 id);
    void replayStoredRun(qint64 id, double speed = 1.0);
    void compareStoredRuns(qint64 a, qint64 b);
    // File ▸ Import Trace…: the lab whose importPatterns() match the file imports it into the
    // store and shows it (a dialog asks for the file when `path` is empty); false with `error`.
    bool importTrace(const QString& path = {}, QString* error = nullptr);
    void refreshHistory();
    // Puts stored run `id`'s configuration into its lab's panel (and starts it with `runNow`);
    // false, with the reason in the log and the status bar, when it cannot.
    bool loadRunConfiguration(qint64 id, bool runNow = false);
    // Puts the training point `point` (core/point_json.h's JSON) into lab `lab`'s panel, as
    // that lab takes a point (LabEntry::stateFromPoint), labelled `title`, and starts it with
    // `runNow`: a view's openPointInLab ("Profile This Point").
    bool openPointInLab(const QString& lab, const QJsonObject& point, const QString& title,
                        bool runNow);
    void deleteStoredRun(qint64 id);  // storedRunDeleted tells the outcome
    // Switches to the results store at `path` (an existing file) once it lists; storeOpened or
    // storeOpenFailed tell the outcome (the current store stays open on failure).
    void openStore(const QString& path);
    void setPresentationMode(bool on);
    bool presentationMode() const;
    // Why pane exports of `view` are refused (its run was deleted from the store); empty when not.
    QString deletedRunNote(const LabView* view) const;
    // Shows the pane named `key` ("steps", "attention", ...) of whichever lab has it.
    bool showTab(const QString& key);
    // Asks before a run that will take long goes on (off for scripted sessions).
    LongRunCheck* longRunCheck() const { return longRun_; }
    // Every pane's key, lab by lab.
    QStringList tabKeys() const;

    // Exports the chart or table of pane `key` (a CSV table with its environment beside it as
    // JSON when `withEnvironment`: see environmentPathFor); false with `error` when it cannot.
    bool exportTab(const QString& key, const QString& path, QSize size = {},
                   QString* error = nullptr, bool withEnvironment = true);
    bool exportReport(const QString& path, QSize chartSize = QSize(1200, 700),
                      QString* error = nullptr);
    // True (with `error`) when `path` must not be written: a folder, the open results store
    // or one of its files, or another SQLite database (outputTargetProblem).
    bool overwritesStore(const QString& path, QString* error) const;

    RunController* controller() { return &controller_; }
    RunListModel* runList() { return &runs_; }
    LabPanel* currentPanel() const;
    LabView* currentView() const;
    QString currentLabId() const;
    QString statusText()
        const;  // the status bar's line  // the shown experiment's id ("bench", "profile", ...)
    LabPanel* panel(const QString& id) const;
    LabView* labView(const QString& id) const;
    HistoryWidget* history() const { return history_; }
    QAction* runAction() const { return runAct_; }
    QAction* stopAction() const { return stopAct_; }
    QString logText() const;
    QString storePath() const { return controller_.storePath(); }

Q_SIGNALS:
    void capabilitiesKnown();
    void runFinished(ts::ui::RunOutcome outcome);
    void historyRefreshed();
    void storedRunOpened(qint64 id);
    // A stored run could not be opened, replayed or loaded (not in the store, unreadable, of a
    // kind this window cannot show): the same words the log has.
    void storedRunFailed(qint64 id, const QString& why);
    void comparisonReady();
    // Compare could not be done (a run missing or unreadable, runs of two kinds): why.
    void comparisonFailed(const QString& reason);
    void replayFinished();
    void storedRunDeleted(qint64 id, const QString& error);  // error empty: deleted
    void storeOpened(const QString& path);
    void storeOpenFailed(const QString& reason);

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    struct Lab {
        QString id, title;
        LabPanel* panel;
        LabView* view;
    };

    void buildLabs();
    void buildDocks();
    void buildActions();
    void buildStatusBar();
    void openStoreInteractive();
    void openStoreAt(const QString& path, bool interactive);
    void updateStoreLabel();
    // `view` now shows a run of the current store (a live run, an opened one, a replay, a
    // comparison).
    void noteShown(LabView* view);
    void markDeleted(const QString& store, qint64 id);
    // True, with the reason in `error`, when `view`'s run was deleted (its exports are refused).
    bool refuseDeleted(const LabView* view, QString* error) const;
    // `views` under a banner that says when the shown run was deleted.
    QWidget* withDeletedBanner(QWidget* views);
    void connectRun();
    void connectView(LabView* view);
    void probeCapabilities();
    void restoreSettings();
    void saveSettings() const;
    void updateRunState();
    void updateTitle();
    void appendLog(const QString& line);
    void setProgress(double fraction, double eta);
    int labIndex(const QString& id) const;
    // Loads a stored run in a pool thread, then hands it to `use` (errors go to the log).
    void withStoredRun(qint64 id, const QString& what, std::function<void(const StoredRun&)> use);
    // The lab and pane showing `key`, or {-1, -1}.
    std::pair<int, int> findPane(const QString& key) const;
    // A table's CSV gets its environment beside it as JSON unless `withEnvironment` is false.
    bool exportPane(LabView* view, int pane, const QString& path, QSize size, QString* error,
                    bool withEnvironment = true);
    void exportPaneInteractive(LabView* view, int pane);
    void copyPane(LabView* view, int pane);
    void exportReportInteractive();
    QString suggestedPath(const QString& stem, const QString& ext) const;
    static QString gpuOnlyReason(const ClassroomPreset& preset);

    Options options_;
    RunController controller_;
    RunListModel runs_;
    Capabilities caps_;
    bool capsReady_ = false;
    std::optional<ClassroomPreset> pendingPreset_;
    QElapsedTimer runClock_;

    QList<Lab> labs_;
    QComboBox* experimentCombo_ = nullptr;
    QStackedWidget* panels_ = nullptr;
    QStackedWidget* views_ = nullptr;
    QPointer<LabView> runningView_;  // receives the items of the live run
    HistoryWidget* history_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QStringList pendingLog_;
    RedrawThrottle* logThrottle_ = nullptr;
    QDockWidget* experimentDock_ = nullptr;
    QDockWidget* historyDock_ = nullptr;
    QDockWidget* logDock_ = nullptr;

    QLabel* statusLabel_ = nullptr;
    QLabel* problemsLabel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* eta_ = nullptr;
    QLabel* storeLabel_ = nullptr;
    QLabel* deletedBanner_ = nullptr;  // over the views: the run shown was deleted
    PresentationMode* presentation_ = nullptr;
    LongRunCheck* longRun_ = nullptr;
    StoreFollower* storeFollower_ = nullptr;     // History follows runs others add
    QHash<const LabView*, QString> shownStore_;  // the store of the run each view shows
    QSet<const LabView*> deleted_;               // views whose run was deleted from it

    QAction *runAct_ = nullptr, *stopAct_ = nullptr, *presentationAct_ = nullptr;
    QAction *lightAct_ = nullptr, *darkAct_ = nullptr, *systemThemeAct_ = nullptr;
    QMenu* presetsMenu_ = nullptr;
    QHash<int, QList<QAction*>> paneActions_;  // the View menu's, by lab index
};

}  // namespace ts::ui
