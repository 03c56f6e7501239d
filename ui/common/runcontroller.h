// The adapter between the engine and the window. The engine knows nothing of Qt; this runs
// a job in a worker thread and turns its observer calls into queued signals carrying value
// types. Every run gets a rising id; whatever a superseded or abandoned run still sends is
// dropped on arrival, so a late result never lands in the views of a newer run.
#pragma once

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <QVariant>
#include <functional>
#include <memory>
#include <string>

#include "core/observer.h"
#include "core/result.h"
#include "ui/common/metatypes.h"

namespace ts {
class ResultStore;
}

namespace ts::ui {

// What a job reports through: the engine's progress and log, plus its lab's results as items
// (the lab's own value types in QVariants: a step, a finished point, a cell). Items travel in
// order with the other calls and reach the lab's view in batches.
class JobObserver : public Observer {
public:
    virtual void item(const QVariant& value) = 0;
};

// The work a panel hands over: built on the UI thread, `environment` and `run` execute in
// the worker. `run` reports through the observer and polls the token between steps.
struct LabJob {
    QString lab;                 // the lab's id, the store's run kind
    QString label;               // free text, shown in the history
    std::string spec_json;       // the experiment as asked for, stored with the run
    std::string device = "cpu";  // where it runs (for the environment)
    int point_count = 0;
    bool stored = true;  // false: the store has no place for this experiment's results
    std::function<Environment()> environment;
    std::function<void(JobObserver&, const CancelToken&, ResultStore* store, int64_t store_run_id)>
        run;
};

enum class RunOutcome { Completed, Stopped, Failed };

class RunController : public QObject {
    Q_OBJECT
public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;  // cancels every worker and waits for it

    // Where runs are stored; empty: not stored.
    void setStorePath(const QString& path) { storePath_ = path; }
    QString storePath() const { return storePath_; }

    // Starts `job` and returns its id. A run still going is abandoned first.
    quint64 start(LabJob job);
    // Ends the current run within a step; what it measured is still delivered.
    void stop();
    // Cancels the current run and drops everything it still sends.
    void abandon();

    bool isRunning() const { return running_; }
    quint64 currentRun() const { return current_; }
    // What went wrong in the run that finished last, each a sentence (empty: nothing): results
    // that failed (a killed rank, an error in a step; an out-of-memory point is a result, not a
    // failure), errors the run logged (a row that could not be stored), a store that could not
    // take the run. Set before runFinished is emitted. Scripted sessions exit 1 on any.
    const QStringList& lastProblems() const { return lastProblems_; }
    // Events of stale runs dropped so far.
    int droppedEvents() const { return dropped_; }
    // Waits for every worker thread to end (shutdown and tests); false on timeout.
    bool waitForWorkers(int timeoutMs);

Q_SIGNALS:
    void runStarted(quint64 run, qint64 storeRunId, const ts::Environment& environment);
    // Items arrive in batches (all that came in since the last delivery), in order.
    void itemsArrived(quint64 run, const QList<QVariant>& items);
    void progress(quint64 run, double fraction, double etaSeconds);
    void logMessage(quint64 run, int level, const QString& text);
    void runFinished(quint64 run, ts::ui::RunOutcome outcome, const QString& message);

private:
    struct Channel;
    friend class QueuedObserver;
    void drain(quint64 run, const std::shared_ptr<Channel>& channel);

    QString storePath_;
    quint64 nextId_ = 1;
    quint64 current_ = 0;  // the run whose events are delivered; 0: none
    bool running_ = false;
    int dropped_ = 0;
    QStringList lastProblems_;
    std::shared_ptr<CancelToken> cancel_;
    QList<QPointer<QThread>> workers_;
};

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::ui::RunOutcome)
