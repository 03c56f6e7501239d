// The benchmark's results: statistics over the measured steps.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "benchmark/benchmark.h"

namespace ts {

void summarize(BenchResult& r) {
    std::vector<double> f, b, o, t;
    for (const auto& s : r.steps) {
        if (s.warmup) continue;
        f.push_back(s.forward_ms);
        b.push_back(s.backward_ms);
        o.push_back(s.optimizer_ms);
        t.push_back(s.total_ms);
    }
    r.forward = computeStats(f);
    r.backward = computeStats(b);
    r.optimizer = computeStats(o);
    r.total = computeStats(t);
}

}  // namespace ts
