// What History does with the results store: lists its runs (and follows runs others add),
// opens one into its lab's view, replays one, compares two, overlays two or more on one chart,
// deletes one (a view that shows it is
// marked deleted and refuses exports), loads a run's configuration into its lab's panel and
// runs it again, opens another store, imports a trace another tool wrote. Stored runs are read in
// pool threads; each outcome is a signal, in the words the log has.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "ui/shell/runlistmodel.h"

class QLabel;
class QWidget;

namespace ts::ui {

class HistoryWidget;
class LabDeck;
class RunSession;
class StoreFollower;
struct StoredRun;

class HistoryController : public QObject {
    Q_OBJECT
public:
    // Shows runs in `deck`'s views and runs them again through `session` (whose store it reads);
    // `window` parents the History pane, the store's label and the dialogs.
    HistoryController(RunSession* session, LabDeck* deck, QWidget* window);

    HistoryWidget* widget() const { return widget_; }   // the History pane
    QLabel* storeLabel() const { return storeLabel_; }  // the store in use, for the status bar
    RunListModel* runList() { return &runs_; }

    void refresh();
    void openStoredRun(qint64 id);
    void replayStoredRun(qint64 id, double speed = 1.0);
    void compareStoredRuns(qint64 a, qint64 b);
    // Two or more runs of one lab on one chart, the lab's "overlay" pane (see Note [overlaying
    // stored runs] in ui/common/overlay.h): read and laid over each other in a pool thread;
    // overlayReady or overlayFailed tell the outcome.
    void overlayStoredRuns(const QList<qint64>& ids);
    // The same for the runs selected in the pane (Compare wants exactly two, Overlay two or more).
    void openSelected();
    void replaySelected(double speed);
    void compareSelected();
    void overlaySelected();
    // Puts stored run `id`'s configuration into its lab's panel (and starts it with `runNow`);
    // false, with the reason in the log and the status bar, when it cannot.
    bool loadRunConfiguration(qint64 id, bool runNow = false);
    void deleteStoredRun(qint64 id);  // storedRunDeleted tells the outcome
    // Switches to the results store at `path` (an existing file) once it lists; storeOpened or
    // storeOpenFailed tell the outcome (the current store stays open on failure).
    void openStore(const QString& path);
    void openStoreInteractive();  // asks for the file; a failure is also said in a message box
    // File ▸ Import Trace…: the lab whose importPatterns() match the file imports it into the
    // store and shows it (a dialog asks for the file when `path` is empty); false with `error`.
    bool importTrace(const QString& path = {}, QString* error = nullptr);

Q_SIGNALS:
    void refreshed();
    void storedRunOpened(qint64 id);
    // A stored run could not be opened, replayed or loaded (not in the store, unreadable, of a
    // kind this window cannot show): the same words the log has.
    void storedRunFailed(qint64 id, const QString& why);
    void comparisonReady();
    // Compare could not be done (a run missing or unreadable, runs of two kinds): why.
    void comparisonFailed(const QString& reason);
    void overlayReady(const QString& lab);
    // Overlay could not be done (fewer than two runs, runs of several kinds, a run missing or
    // unreadable, a lab without an overlay, nothing measured): why, naming the runs.
    void overlayFailed(const QString& reason);
    void replayFinished();
    void storedRunDeleted(qint64 id, const QString& error);  // error empty: deleted
    void storeOpened(const QString& path);
    void storeOpenFailed(const QString& reason);
    void logLine(const QString& text);
    void notice(const QString& text, int timeoutMs);  // the status bar's passing message

private:
    void tellKinds();
    // Loads a stored run in a pool thread, then hands it to `use` (errors go to the log).
    void withStoredRun(qint64 id, const QString& what, std::function<void(const StoredRun&)> use);
    void showOpened(qint64 id, const StoredRun& run);
    void openStoreAt(const QString& path, bool interactive);
    void updateStoreLabel();

    RunSession* session_;
    LabDeck* deck_;
    QWidget* window_;
    RunListModel runs_;
    HistoryWidget* widget_ = nullptr;
    QLabel* storeLabel_ = nullptr;
    StoreFollower* follower_ = nullptr;  // History follows runs others add
};

}  // namespace ts::ui
