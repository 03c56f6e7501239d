// The window's menus, toolbar and shortcuts: File (open a store, presets, exports, quit), Run
// (Run, Stop, History's actions on the selected runs), View (each lab's panes, Ctrl+1..9 for the
// shown lab's first nine, the docks, presentation mode, the theme) and Help. Each action calls
// one of the window's parts; the run state enables Run, Stop and the presets.
#pragma once

#include <QHash>
#include <QList>
#include <QObject>

class QAction;
class QDockWidget;
class QMainWindow;
class QMenu;

namespace ts::ui {

class ExportController;
class HistoryController;
class LabDeck;
class PresentationMode;
class RunSession;

class WindowActions : public QObject {
    Q_OBJECT
public:
    struct Parts {
        RunSession* session;
        HistoryController* history;
        ExportController* exports;
        LabDeck* deck;
        PresentationMode* presentation;
        QList<QDockWidget*> docks;  // in the View menu, to show and hide
    };
    // Fills `window`'s menu bar and adds its toolbar.
    WindowActions(QMainWindow* window, const Parts& parts);

    QAction* runAction() const { return run_; }
    QAction* stopAction() const { return stop_; }
    QAction* presentationAction() const { return presentation_; }

private:
    void buildPresetsMenu();
    void buildFileMenu();
    void buildRunMenu();
    void buildViewMenu();
    void buildThemeMenu(QMenu* view);
    void buildHelpMenu();
    void buildToolBar();
    void moveShortcuts();
    void updateRunState();
    void takeCapabilities();
    void showMachine();
    void restyle();

    QMainWindow* window_;
    Parts parts_;
    QAction *run_ = nullptr, *stop_ = nullptr, *presentation_ = nullptr;
    QAction *exportView_ = nullptr, *copyView_ = nullptr, *report_ = nullptr, *quit_ = nullptr;
    QAction *light_ = nullptr, *dark_ = nullptr, *systemTheme_ = nullptr;
    QMenu* presets_ = nullptr;
    QHash<int, QList<QAction*>> paneActions_;  // the View menu's, by lab index
};

}  // namespace ts::ui
