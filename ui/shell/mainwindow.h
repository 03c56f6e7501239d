// The workbench window, the shell around the labs. It builds the window out of parts it owns
// and wires them; what the window does is theirs:
//   LabDeck            the labs (ui/labs.cpp): chooser and panels in the Experiment dock, the
//                      views in the centre, which run each view shows
//   RunSession         the run: what this machine can run, Run and Stop, presets, the status
//                      line and progress, the long-run question, how the run ended
//   HistoryController  the History dock: open, replay, compare, delete, load a configuration,
//                      run again, open another store, follow the store
//   ExportController   exports, Copy and the run report
//   WindowActions      menus, toolbar, shortcuts
//   PresentationMode   the results alone, in large fonts
// The parts are called, and answer with signals; none reaches into the window. What they log
// goes to the Log pane, their passing messages to the status bar. The window itself keeps the
// title, the docks, the settings and the question on closing during a run. Scripted sessions
// (automation.h) and the tests talk to the parts.
#pragma once

#include <QMainWindow>

#include "ui/common/runcontroller.h"
#include "ui/shell/exportcontroller.h"
#include "ui/shell/historycontroller.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/presentation.h"
#include "ui/shell/runsession.h"
#include "ui/shell/windowactions.h"

class QDockWidget;

namespace ts::ui {

class LogPane;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString storePath;            // empty: ResultStore::defaultPath()
        bool restoreSettings = true;  // window state, theme and last configuration
    };

    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    LabDeck* labs() const { return deck_; }
    RunSession* session() const { return session_; }
    HistoryController* history() const { return history_; }
    ExportController* exports() const { return exports_; }
    WindowActions* actions() const { return actions_; }
    PresentationMode* presentation() const { return presentation_; }

    // The shown lab's panel and view, and any lab's by id (labs() has them too).
    LabPanel* currentPanel() const { return deck_->currentPanel(); }
    LabView* currentView() const { return deck_->currentView(); }
    LabPanel* panel(const QString& id) const { return deck_->panel(id); }
    LabView* labView(const QString& id) const { return deck_->view(id); }
    // The Log pane's text, lines still on their way included.
    QString logText() const;

protected:
    void closeEvent(QCloseEvent* e) override;

private:
    void buildDocks();
    void buildStatusBar();
    void connectParts();
    void updateTitle();
    void restoreSettings();
    void saveSettings() const;

    Options options_;
    RunController controller_;
    LabDeck* deck_ = nullptr;
    RunSession* session_ = nullptr;
    HistoryController* history_ = nullptr;
    ExportController* exports_ = nullptr;
    WindowActions* actions_ = nullptr;
    PresentationMode* presentation_ = nullptr;
    LogPane* log_ = nullptr;
    QDockWidget* experimentDock_ = nullptr;
    QDockWidget* historyDock_ = nullptr;
    QDockWidget* logDock_ = nullptr;
};

}  // namespace ts::ui
