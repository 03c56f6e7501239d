// Exports from the window: a pane's chart or table and the whole run report, from the menus
// and the panes' own buttons (a dialog that opens again, as it was, when the export fails) and
// from scripts; Copy to the clipboard; the default folder; print colours for a dark window.
// Nothing is written over the results store, and a view whose run was deleted exports nothing.
#pragma once

#include <QObject>
#include <QSize>
#include <QString>

class QWidget;

namespace ts::ui {

class LabDeck;
class LabView;
class RunSession;

class ExportController : public QObject {
    Q_OBJECT
public:
    // Exports `deck`'s panes; `session` names the store that must not be written over;
    // `window` parents the dialogs.
    ExportController(const RunSession* session, const LabDeck* deck, QWidget* window);

    // Exports the chart or table of pane `key` (a CSV table with its environment beside it as
    // JSON when `withEnvironment`: see environmentPathFor); false with `error` when it cannot.
    bool exportTab(const QString& key, const QString& path, QSize size = {},
                   QString* error = nullptr, bool withEnvironment = true);
    // The shown lab's run report (Markdown with the charts beside it).
    bool exportReport(const QString& path, QSize chartSize = QSize(1200, 700),
                      QString* error = nullptr);
    // True (with `error`) when `path` must not be written: a folder, the open results store
    // or one of its files, or another SQLite database (outputTargetProblem).
    bool overwritesStore(const QString& path, QString* error) const;

    // The dialogs and Copy, for a pane of `view` (the shown pane of the shown lab when none).
    void exportPaneInteractive(LabView* view, int pane);
    void copyPane(LabView* view, int pane);
    void exportShownPane();
    void copyShownPane();
    void exportReportInteractive();

Q_SIGNALS:
    void logLine(const QString& text);
    void notice(const QString& text, int timeoutMs);  // the status bar's passing message

private:
    // A table's CSV gets its environment beside it as JSON unless `withEnvironment` is false.
    bool exportPane(LabView* view, int pane, const QString& path, QSize size, QString* error,
                    bool withEnvironment = true);
    // True, with the reason in `error`, when `view`'s run was deleted (its exports are refused).
    bool refuseDeleted(const LabView* view, QString* error) const;
    QString suggestedPath(const QString& stem, const QString& ext) const;

    const RunSession* session_;
    const LabDeck* deck_;
    QWidget* window_;
};

}  // namespace ts::ui
