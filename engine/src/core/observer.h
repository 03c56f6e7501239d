// How a running experiment reports, and how it is stopped. The engine calls the observer
// from the thread it runs on; a UI adapter turns these calls into queued signals.
#pragma once

#include <atomic>
#include <string>

#include "trainscope/engine/config.h"
#include "trainscope/engine/result.h"

namespace ts {

enum class LogLevel { Info, Warning, Error };

class Observer {
public:
    virtual ~Observer() = default;
    // A sweep point starts: `index` of `count` (0-based).
    virtual void pointStarted(int /*index*/, int /*count*/, const BenchConfig& /*config*/) {}
    // Every step as it finishes, warm-up steps included.
    virtual void stepFinished(int /*index*/, const StepSample& /*sample*/) {}
    // A point is done (whatever its status); it has been stored when a store is in use.
    virtual void pointFinished(int /*index*/, const BenchResult& /*result*/) {}
    // Fraction of the whole run done (0..1) and the estimated seconds left (< 0: unknown).
    virtual void progress(double /*fraction*/, double /*eta_seconds*/) {}
    virtual void log(LogLevel /*level*/, const std::string& /*message*/) {}
};

// Shared between the thread that asks for a stop and the engine, which polls it between
// steps: a run stops within one step of cancel().
class CancelToken {
public:
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
    void reset() { cancelled_.store(false, std::memory_order_relaxed); }

private:
    std::atomic<bool> cancelled_{false};
};

}  // namespace ts
