// The two clocks the window's timing probes read (StallProbe, UiWorkMeter): the monotonic wall
// clock and the calling thread's own CPU time, in nanoseconds.
#pragma once

#include <QtGlobal>
#include <ctime>

namespace testclocks {

inline qint64 monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline qint64 threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace testclocks
