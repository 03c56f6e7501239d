#include "ui/common/runcontroller.h"

#include <QDeadlineTimer>
#include <QMetaObject>
#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <variant>
#include <vector>

#include "core/json.h"
#include "core/store.h"
#include "ui/common/format.h"

namespace ts::ui {

namespace {
struct RunStartedEv {
    qint64 store_run;
    Environment env;
};
struct ProgressEv {
    double fraction, eta;
};
struct LogEv {
    int level;
    std::string text;
};
struct FinishedEv {
    RunOutcome outcome;
    std::string message;
    std::vector<std::string> problems;  // see RunController::lastProblems
};
struct ItemEv {
    QVariant value;
};
using Event = std::variant<RunStartedEv, ProgressEv, LogEv, FinishedEv, ItemEv>;
}  // namespace

// Events of one run, in the order the worker produced them. The worker posts one drain
// call when the queue goes from empty to non-empty, so a burst of items costs one queued
// call, not one per item: the UI thread is never flooded, whatever the step rate.
struct RunController::Channel {
    std::mutex mutex;
    std::vector<Event> events;
    bool drain_posted = false;
};

class QueuedObserver final : public JobObserver {
public:
    QueuedObserver(RunController* controller, quint64 run,
                   std::shared_ptr<RunController::Channel> channel)
        : controller_(controller), run_(run), channel_(std::move(channel)) {}

    void push(Event ev) {
        bool post = false;
        {
            std::lock_guard lock(channel_->mutex);
            channel_->events.push_back(std::move(ev));
            post = !channel_->drain_posted;
            channel_->drain_posted = true;
        }
        if (post) {
            // The controller outlives its workers (its destructor joins them), and a call
            // queued on it is discarded if it is destroyed first.
            QMetaObject::invokeMethod(
                controller_, [c = controller_, run = run_, ch = channel_] { c->drain(run, ch); },
                Qt::QueuedConnection);
        }
    }

    void progress(double fraction, double eta_seconds) override {
        push(ProgressEv{fraction, eta_seconds});
    }
    void log(LogLevel level, const std::string& message) override {
        if (level == LogLevel::Error) errors.push_back(message);
        push(LogEv{static_cast<int>(level), message});
    }
    void item(const QVariant& value) override { push(ItemEv{value}); }

    std::vector<std::string> errors;  // the Error lines the run logged (the worker's thread only)

private:
    RunController* controller_;
    quint64 run_;
    std::shared_ptr<RunController::Channel> channel_;
};

RunController::RunController(QObject* parent) : QObject(parent) { registerMetaTypes(); }

RunController::~RunController() {
    if (cancel_) cancel_->cancel();
    current_ = 0;
    waitForWorkers(-1);
}

quint64 RunController::start(LabJob job) {
    abandon();
    const quint64 id = nextId_++;
    current_ = id;
    running_ = true;
    auto cancel = std::make_shared<CancelToken>();
    cancel_ = cancel;
    auto channel = std::make_shared<Channel>();
    const std::string store_path = storePath_.toStdString();

    QThread* worker = QThread::create([this, id, channel, cancel, store_path,
                                       job = std::move(job)]() mutable {
        QueuedObserver observer(this, id, channel);
        Environment env;
        try {
            if (job.environment) env = job.environment();
        } catch (const std::exception& e) {
            observer.log(LogLevel::Warning, std::string("environment unknown: ") + e.what());
        }
        // The store lives in this thread: SQLite connections are not shared across threads.
        std::unique_ptr<ResultStore> store;
        int64_t store_run = 0;
        std::vector<std::string> problems;
        if (!store_path.empty() && job.stored) {
            try {
                store = std::make_unique<ResultStore>(store_path);
                store_run =
                    store->createRun(job.lab.toStdString(), job.label.toStdString(), job.spec_json,
                                     env.device_name, job.point_count, toJson(env).dump());
            } catch (const std::exception& e) {
                store.reset();
                store_run = 0;
                observer.log(LogLevel::Warning, std::string("this run is not stored: ") + e.what());
                problems.push_back(std::string("the run was not stored: ") + e.what());
            }
        }
        observer.push(RunStartedEv{store_run, env});
        RunOutcome outcome = RunOutcome::Completed;
        std::string message;
        try {
            if (job.run) job.run(observer, *cancel, store.get(), store_run);
        } catch (const std::exception& e) {
            outcome = RunOutcome::Failed;
            message = e.what();
        } catch (...) {
            outcome = RunOutcome::Failed;
            message = "unknown error";
        }
        if (outcome == RunOutcome::Completed && cancel->cancelled()) outcome = RunOutcome::Stopped;
        if (store && store_run > 0) {
            // See Note [unfinished runs]: this run is over, whatever its points say.
            try {
                store->finishRun(store_run);
                const std::vector<Status> statuses = store->rowStatuses(store_run);
                if (const auto failed =
                        std::count(statuses.begin(), statuses.end(), Status::Failed))
                    problems.push_back(std::to_string(failed) + " of the run's " +
                                       std::to_string(statuses.size()) +
                                       " stored result(s) failed (see the log)");
            } catch (const std::exception& e) {
                observer.log(LogLevel::Warning,
                             std::string("the run could not be marked ended: ") + e.what());
            }
        }
        for (const std::string& e : observer.errors) problems.push_back(e);
        store.reset();
        observer.push(FinishedEv{outcome, message, std::move(problems)});
    });
    worker->setObjectName(QStringLiteral("trainscope-run-%1").arg(id));
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    workers_.removeAll(nullptr);
    workers_.append(worker);
    worker->start();
    return id;
}

void RunController::stop() {
    if (running_ && cancel_) cancel_->cancel();
}

void RunController::abandon() {
    if (cancel_) cancel_->cancel();
    cancel_.reset();
    current_ = 0;
    running_ = false;
}

bool RunController::waitForWorkers(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs < 0 ? QDeadlineTimer::Forever : QDeadlineTimer(timeoutMs));
    bool ok = true;
    for (const auto& w : workers_)
        if (w && !w->wait(deadline)) ok = false;
    return ok;
}

void RunController::drain(quint64 run, const std::shared_ptr<Channel>& channel) {
    std::vector<Event> events;
    {
        std::lock_guard lock(channel->mutex);
        events.swap(channel->events);
        channel->drain_posted = false;
    }
    if (run != current_) {
        dropped_ += static_cast<int>(events.size());
        return;
    }
    // Only the newest progress of a batch matters.
    size_t last_progress = events.size();
    for (size_t i = 0; i < events.size(); ++i)
        if (std::holds_alternative<ProgressEv>(events[i])) last_progress = i;

    QList<QVariant> items;
    auto flushItems = [&] {
        if (items.isEmpty()) return;
        Q_EMIT itemsArrived(run, items);
        items.clear();
    };
    for (size_t i = 0; i < events.size(); ++i) {
        // A slot may start or abandon a run: stop delivering the moment this one is stale.
        if (run != current_) {
            dropped_ += static_cast<int>(events.size() - i);
            return;
        }
        auto& ev = events[i];
        if (auto* it = std::get_if<ItemEv>(&ev)) {
            items.append(std::move(it->value));
            continue;
        }
        flushItems();
        if (auto* e = std::get_if<RunStartedEv>(&ev)) {
            Q_EMIT runStarted(run, e->store_run, e->env);
        } else if (auto* e = std::get_if<ProgressEv>(&ev)) {
            if (i == last_progress) Q_EMIT progress(run, e->fraction, e->eta);
        } else if (auto* e = std::get_if<LogEv>(&ev)) {
            Q_EMIT logMessage(run, e->level, qstr(e->text));
        } else if (auto* e = std::get_if<FinishedEv>(&ev)) {
            running_ = false;
            cancel_.reset();
            lastProblems_.clear();
            for (const std::string& p : e->problems) lastProblems_ << qstr(p);
            Q_EMIT runFinished(run, e->outcome, qstr(e->message));
        }
    }
    if (run == current_) flushItems();
}

}  // namespace ts::ui
