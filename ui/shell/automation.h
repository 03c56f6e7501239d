// Scripted sessions for documentation and demos: load a preset or a configuration, run it,
// compare or overlay stored runs, then grab the window's tabs to PNG files and quit. Used under
// Xvfb to make the screenshots in docs/.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QSize>
#include <QString>
#include <QStringList>

namespace ts::ui {

class MainWindow;

struct AutomationOptions {
    QString experiment;     // panel id to select ("bench", "attention")
    QString preset;         // classroom preset id
    QJsonObject config;     // panel state applied after the preset
    bool run = false;       // press Run and wait for the end
    QList<qint64> compare;  // two stored run ids ("last" = -1, "previous" = -2)
    QList<qint64> overlay;  // two or more stored run ids, the same way

    qint64 open = 0;                       // a stored run to open into the views (0: none)
    QList<QPair<QString, QString>> shots;  // {tab, png path}; no tab: the window as it is
    QString report;                        // write a Markdown report here
    int settleMs = 700;                    // wait before each grab (throttled redraws)
    bool quit = true;
    QSize size;     // window size; invalid: the saved one
    QString theme;  // "light", "dark", "system"; empty: the saved one
};

// The scripting options as typed on the command line, before they are checked.
struct AutomationArgs {
    QString experiment, preset, config, compare, overlay, open, size, theme;
    QStringList shots;  // "tab=file.png", or "file.png": the window as the script leaves it
    QString report;
    bool run = false;
    QString storePath;  // --db; empty: the default store. Screenshots and reports never land on it.
};

// Checks every scripting option before the window opens, so that a mistyped one runs
// nothing: fills `out` and returns an empty string, or returns one sentence saying what is
// wrong (the caller prints it and exits non-zero).
QString parseAutomation(const AutomationArgs& args, AutomationOptions* out);

// True when at least one option asks for something.
bool hasWork(const AutomationOptions& o);
// Starts the script; the window must be shown. Failures go to stderr and exit code 1.
void startAutomation(MainWindow* window, const AutomationOptions& options);

}  // namespace ts::ui
