// How a running lab reports, and how it is stopped. The engine calls the observer
// from the thread it runs on; a UI adapter turns these calls into queued signals.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <string>

namespace ts {

enum class LogLevel { Info, Warning, Error };

// The Error a runner logs when a finished row (point, cell) cannot be stored; the run stops
// after it. `index` is 0-based, the message 1-based like every message a user reads.
std::string storeFailure(const char* what, size_t index, size_t count, const std::exception& e);

// What every lab reports. Each lab's observer adds the calls for its own results
// (BenchObserver: points and steps; AttentionObserver: cells).
class Observer {
public:
    virtual ~Observer() = default;
    // Fraction of the whole run done (0..1) and the estimated seconds left (< 0: unknown).
    virtual void progress(double /*fraction*/, double /*eta_seconds*/) {}
    virtual void log(LogLevel /*level*/, const std::string& /*message*/) {}
};

// Turns "done of total" into progress() calls with an ETA from the time since construction.
class ProgressMeter {
public:
    explicit ProgressMeter(Observer& observer)
        : observer_(observer), start_(std::chrono::steady_clock::now()) {}
    void report(double done, double total) {
        const double fraction = total > 0 ? std::min(1.0, done / total) : 1.0;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        observer_.progress(fraction, fraction > 0 ? elapsed * (1.0 - fraction) / fraction : -1.0);
    }

private:
    Observer& observer_;
    std::chrono::steady_clock::time_point start_;
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
