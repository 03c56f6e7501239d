// What the profiler lab reads out of an attributed trace besides its tables: attention's
// parts and the GPU's busy and idle time per step. Torch-free.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "profiler/profiler.h"

namespace ts {
namespace {

// Whether `part` is one of the components of a range path ("layer.0/attention/scores").
bool hasComponent(const std::string& path, std::string_view part) {
    size_t begin = 0;
    while (begin <= path.size()) {
        size_t end = path.find('/', begin);
        if (end == std::string::npos) end = path.size();
        if (std::string_view(path).substr(begin, end - begin) == part) return true;
        begin = end + 1;
    }
    return false;
}

constexpr std::array<std::string_view, 4> kParts = {"scores", "softmax", "values", "fused"};

std::string_view partOf(const std::string& range) {
    for (auto p : kParts)
        if (hasComponent(range, p)) return p;
    return {};
}

int profiledSteps(const ProfileResult& r) {
    int n = 0;
    for (const auto& s : r.steps) n += s.warmup ? 0 : 1;
    return std::max(n, 1);
}

double elementBytes(Precision p) { return p == Precision::FP32 ? 4.0 : 2.0; }

}  // namespace

std::vector<AttentionPart> attentionBreakdown(const ProfileResult& r) {
    // Its FLOPs and bytes come from the model, which an imported trace does not have.
    if (!r.spec.imported.empty()) return {};
    const PointConfig& cfg = r.spec.bench;
    const double B = static_cast<double>(cfg.batch_size),
                 H = static_cast<double>(cfg.model.num_heads),
                 T = static_cast<double>(cfg.model.context_length),
                 d = static_cast<double>(cfg.model.headDim()),
                 L = static_cast<double>(cfg.model.num_layers);
    const double e = elementBytes(cfg.precision);
    // Under autocast softmax computes in fp32 (LibTorch's autocast policy), so its output is 4
    // bytes.
    const double es = 4.0;
    const double qkv = B * H * T * d, tt = B * H * T * T;  // one of Q, K, V, O; one T×T matrix

    std::map<std::pair<Phase, std::string_view>, AttentionPart> parts;
    auto add = [&](Phase phase, std::string_view part, double us) {
        if (phase != Phase::Forward && phase != Phase::Backward) return;
        auto& row = parts[{phase, part}];
        row.phase = phase;
        row.part = std::string(part);
        row.time_us += us;
        row.kernels += 1;
    };
    if (r.gpu) {
        for (const auto& k : r.trace.kernels)
            if (auto p = partOf(k.range); !p.empty())
                add(k.phase, p, static_cast<double>(k.duration_ns) / 1000.0);
    } else {
        for (const auto& op : r.trace.ops)
            if (auto p = partOf(op.range); !p.empty())
                add(op.phase, p, static_cast<double>(op.self_ns) / 1000.0);
    }
    const double steps = profiledSteps(r);
    std::vector<AttentionPart> rows;
    for (auto& [key, row] : parts) {
        const bool fwd = key.first == Phase::Forward;
        const std::string_view p = key.second;
        double flops = 0, bytes = 0;
        if (p == "scores") {
            flops = (fwd ? 2 : 4) * tt * d;
            bytes = fwd ? 2 * qkv * e + tt * e
                        : tt * e + 4 * qkv * e;  // read Q, K; write S | read dS, Q, K; write dQ, dK
        } else if (p == "softmax") {
            flops = (fwd ? 5 : 3) * tt;
            bytes = fwd ? tt * (e + es) : 3 * tt * es;  // read S, write P | read P, dP; write dS
        } else if (p == "values") {
            flops = (fwd ? 2 : 4) * tt * d;
            bytes =
                fwd ? tt * e + 2 * qkv * e
                    : 2 * tt * e + 3 * qkv * e;  // read P, V; write O | read dO, V, P; write dP, dV
        } else {                                 // fused: T×T never leaves the chip
            flops = (fwd ? 4 : 8) * tt * d + (fwd ? 5 : 3) * tt;
            bytes = (fwd ? 4 : 8) * qkv *
                    e;  // read Q, K, V; write O | read Q, K, V, O, dO; write dQ, dK, dV
        }
        if (cfg.mode == Mode::Forward && !fwd) continue;
        row.time_us /= steps;
        row.kernels /= steps;
        row.flops = flops * L;
        row.bytes = bytes * L;
        row.ns_per_mflop = row.flops > 0 ? row.time_us * 1000.0 / (row.flops / 1e6) : 0;
        rows.push_back(row);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const AttentionPart& a, const AttentionPart& b) {
        auto rank = [](std::string_view p) {
            return std::find(kParts.begin(), kParts.end(), p) - kParts.begin();
        };
        return a.phase != b.phase ? a.phase < b.phase : rank(a.part) < rank(b.part);
    });
    return rows;
}

std::vector<StepActivity> stepActivity(const ProfileResult& r) {
    // The profiled steps start at their "forward" ranges, on the thread that ran the steps.
    std::vector<const ProfiledRange*> forwards;
    for (const auto& range : r.trace.ranges)
        if (range.name == "forward") forwards.push_back(&range);
    std::sort(forwards.begin(), forwards.end(),
              [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    if (forwards.empty()) return {};
    const uint64_t main_thread = forwards.front()->thread;

    std::vector<std::pair<int64_t, int64_t>> kernels;  // sorted intervals
    kernels.reserve(r.trace.kernels.size());
    for (const auto& k : r.trace.kernels)
        kernels.emplace_back(k.start_ns, k.start_ns + k.duration_ns);
    std::sort(kernels.begin(), kernels.end());

    std::vector<StepActivity> steps;
    for (size_t i = 0; i < forwards.size(); ++i) {
        StepActivity s;
        s.step = static_cast<int>(i);
        s.start_ns = forwards[i]->start_ns;
        const int64_t next = i + 1 < forwards.size() ? forwards[i + 1]->start_ns : INT64_MAX;
        // The CPU is inside the step until its last phase range ends.
        int64_t cpu_end = forwards[i]->end_ns;
        for (const auto& range : r.trace.ranges)
            if (range.thread == main_thread && range.start_ns >= s.start_ns &&
                range.start_ns < next)
                cpu_end = std::max(cpu_end, range.end_ns);
        s.end_ns = cpu_end;
        auto first =
            std::lower_bound(kernels.begin(), kernels.end(), std::make_pair(s.start_ns, INT64_MIN));
        auto last =
            std::lower_bound(kernels.begin(), kernels.end(), std::make_pair(next, INT64_MIN));
        for (auto it = first; it != last; ++it) s.end_ns = std::max(s.end_ns, it->second);

        int64_t busy = 0, launch_idle = 0, cursor = s.start_ns;
        auto gap = [&](int64_t from, int64_t to) {
            if (to <= from) return;
            launch_idle += std::max<int64_t>(0, std::min(to, cpu_end) - from);
            if (to - from > kIdleGapNs) {
                s.gaps.push_back({from, to});
                ++s.gap_count;
            }
        };
        for (auto it = first; it != last; ++it) {
            const int64_t a = std::max(it->first, cursor), b = std::min(it->second, s.end_ns);
            if (b <= cursor) continue;
            gap(cursor, a);
            busy += b - std::max(a, cursor);
            cursor = b;
        }
        gap(cursor, s.end_ns);
        s.wall_us = static_cast<double>(s.end_ns - s.start_ns) / 1000.0;
        s.busy_us = static_cast<double>(busy) / 1000.0;
        s.idle_us = s.wall_us - s.busy_us;
        s.launch_bound = s.wall_us > 0 ? static_cast<double>(launch_idle) / 1000.0 / s.wall_us : 0;
        std::sort(s.gaps.begin(), s.gaps.end(), [](const IdleGap& a, const IdleGap& b) {
            return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
        });
        if (s.gaps.size() > 100) s.gaps.resize(100);
        steps.push_back(std::move(s));
    }
    return steps;
}

}  // namespace ts
