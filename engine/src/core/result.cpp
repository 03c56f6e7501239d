#include "trainscope/engine/result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ts {

Stats computeStats(const std::vector<double>& values) {
    Stats s;
    s.count = static_cast<int>(values.size());
    if (values.empty()) return s;
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    const size_t n = v.size();
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
    if (n > 1) {
        double ss = 0;
        for (double x : v) ss += (x - s.mean) * (x - s.mean);
        s.std = std::sqrt(ss / static_cast<double>(n - 1));
    }
    s.cv = s.mean != 0 ? s.std / s.mean : 0;
    return s;
}

std::string_view toString(RunStatus s) {
    switch (s) {
        case RunStatus::Ok: return "ok";
        case RunStatus::OOM: return "OOM";
        case RunStatus::Failed: return "failed";
        case RunStatus::Cancelled: return "cancelled";
    }
    return "?";
}

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
