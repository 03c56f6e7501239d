// The workbench window: experiment panels (from the registry) in a dock, Run / Stop, live
// views of the run document in tabs, the run history, the log, exports, classroom presets,
// presentation mode and themes. Engine work runs in RunController's worker threads and store
// access in pool threads; this class only wires signals and keeps the UI state.
#pragma once

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QMainWindow>
#include <QPointer>

#include <optional>

#include "benchmark/comparemodel.h"
#include "shell/presets.h"
#include "benchmark/replayer.h"
#include "benchmark/rundocument.h"
#include "common/runcontroller.h"
#include "shell/runlistmodel.h"

class QAction;
class QCheckBox;
class QComboBox;
class QDockWidget;
class QMenu;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace ts::ui {

class CompareWidget;
class DataTableView;
class ExperimentPanel;
class ExperimentView;
class HistoryWidget;
class MemoryChart;
class RedrawThrottle;
class StepChart;
class SweepChart;
class ExportableChart;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString storePath;            // empty: ResultStore::defaultPath()
        bool restoreSettings = true;  // window state, theme and last configuration
    };
    enum Tab { StepsTab, SweepTab, SpeedupTab, ResultsTab, MemoryTab, CompareTab };

    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Starts the current panel's experiment; false (with the reason in the log) if invalid.
    bool startRun();
    void stopRun();
    bool isRunning() const;
    bool capabilitiesReady() const { return capsReady_; }

    void loadPreset(const ClassroomPreset& preset);
    bool selectExperiment(const QString& id);
    void openStoredRun(qint64 id);
    void replayStoredRun(qint64 id, double speed = 1.0);
    void compareStoredRuns(qint64 a, qint64 b);
    void refreshHistory();
    void showTab(Tab tab);
    bool showTab(const QString& name);  // "steps", "sweep", ...

    // Exports the chart or table of a tab; false with `error` when it cannot.
    bool exportTab(int tab, const QString& path, QSize size = {}, QString* error = nullptr);
    // The results tab of an experiment that brings its own (see ExperimentView), or -1.
    int viewTab(const QString& experimentId) const;
    ExperimentView* view(const QString& experimentId) const;
    bool exportReport(const QString& path, QSize chartSize = QSize(1200, 700), QString* error = nullptr);

    RunController* controller() { return &controller_; }
    RunDocument* document() { return &doc_; }
    RunListModel* runList() { return &runs_; }
    CompareModel* compareModel() { return &compare_; }
    ExperimentPanel* currentPanel() const;
    ExperimentPanel* panel(const QString& id) const;
    StepChart* stepChart() const { return stepChart_; }
    SweepChart* sweepChart() const { return sweepChart_; }
    MemoryChart* memoryChart() const { return memoryChart_; }
    DataTableView* resultTable() const { return resultTable_; }
    DataTableView* speedupTable() const { return speedupTable_; }
    DataTableView* stepTable() const { return stepTable_; }
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
    void comparisonReady();
    void replayFinished();

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    void buildViews();
    void buildDocks();
    void buildActions();
    void buildStatusBar();
    void connectRun();
    void probeCapabilities();
    void restoreSettings();
    void saveSettings() const;
    void updateRunState();
    void updateTitle();
    void refillPointCombo();
    void refillSpeedupControls();
    void appendLog(const QString& line);
    void setProgress(double fraction, double eta);
    ExportableChart* chartOf(int tab) const;
    DataTableView* tableOf(int tab) const;
    int tabOf(const ExportableChart* chart) const;
    void exportChartInteractive(ExportableChart* chart, QWidget* source);
    void exportTableInteractive(DataTableView* table);
    void exportReportInteractive();
    void copyCurrentView();
    QString suggestedPath(const QString& stem, const QString& ext) const;
    void applyPresetView(const QJsonObject& view);

    Options options_;
    RunController controller_;
    RunDocument doc_;
    Replayer replayer_;
    RunListModel runs_;
    CompareModel compare_;
    Capabilities caps_;
    bool capsReady_ = false;
    bool restoring_ = false;
    std::optional<ClassroomPreset> pendingPreset_;
    QElapsedTimer runClock_;

    QTabWidget* tabs_ = nullptr;
    StepChart* stepChart_ = nullptr;
    QComboBox* pointCombo_ = nullptr;
    DataTableView* stepTable_ = nullptr;
    SweepChart* sweepChart_ = nullptr;
    QComboBox* sweepX_ = nullptr;
    QComboBox* sweepMetric_ = nullptr;
    QCheckBox* sweepLogY_ = nullptr;
    DataTableView* speedupTable_ = nullptr;
    QComboBox* speedupDim_ = nullptr;
    QComboBox* speedupBaseline_ = nullptr;
    QComboBox* speedupMetric_ = nullptr;
    DataTableView* resultTable_ = nullptr;
    MemoryChart* memoryChart_ = nullptr;
    CompareWidget* compareWidget_ = nullptr;

    QComboBox* experimentCombo_ = nullptr;
    QStackedWidget* panels_ = nullptr;
    QList<QPair<QString, ExperimentPanel*>> panelList_;
    QList<ExperimentView*> views_;          // per panel, nullptr: the benchmark views
    QPointer<ExperimentView> runningView_;  // receives the items of the live run
    HistoryWidget* history_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QStringList pendingLog_;
    RedrawThrottle* logThrottle_ = nullptr;
    QDockWidget* experimentDock_ = nullptr;
    QDockWidget* historyDock_ = nullptr;
    QDockWidget* logDock_ = nullptr;

    QLabel* statusLabel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* eta_ = nullptr;

    QAction *runAct_ = nullptr, *stopAct_ = nullptr, *presentationAct_ = nullptr;
    QAction *lightAct_ = nullptr, *darkAct_ = nullptr, *systemThemeAct_ = nullptr;
    QMenu* presetsMenu_ = nullptr;
};

}  // namespace ts::ui
