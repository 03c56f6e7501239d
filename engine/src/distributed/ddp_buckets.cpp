#include "distributed/ddp_buckets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "distributed/distributed_json.h"
#include "trainscope/distributed/buckets.h"

namespace ts {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

bool measuredRow(const DdpStepRow& r) { return !r.warmup; }

}  // namespace

std::vector<BucketSummary> bucketSummaries(const std::vector<DistributedResult>& results) {
    std::vector<BucketSummary> out;
    for (size_t p = 0; p < results.size(); ++p) {
        const DistributedResult& r = results[p];
        if (r.point.experiment != DistExperiment::Ddp) continue;
        std::map<int, BucketSummary> by_index;
        for (const auto& row : r.steps) {
            if (!measuredRow(row)) continue;
            const double b0 = row.forward_ms, b1 = row.forward_ms + row.backward_ms;
            for (const auto& b : row.buckets) {
                BucketSummary& s = by_index[b.index];
                s.point = static_cast<int>(p);
                s.index = b.index;
                s.bytes = b.bytes;
                s.params = b.params;
                ++s.samples;
                s.ready_ms += b.ready_ms;
                s.launch_ms += b.launch_ms;
                s.end_ms += b.end_ms;
                s.backward_start_ms += b0;
                s.backward_end_ms += b1;
                s.hidden_ms += std::max(0.0, std::min(b.end_ms, b1) - b.launch_ms);
            }
        }
        for (auto& [index, s] : by_index) {
            const double n = s.samples;
            for (double* v : {&s.ready_ms, &s.launch_ms, &s.end_ms, &s.backward_start_ms,
                              &s.backward_end_ms, &s.hidden_ms})
                *v /= n;
            out.push_back(s);
        }
    }
    return out;
}

namespace {

// Every setting of a bucketed point but its bucket size.
std::string configurationKey(const DistributedPoint& p) {
    nlohmann::json j = toJson(p);
    j["ddp"].erase("bucket_mb");
    return j.dump();
}

std::string modelLabel(const DistributedPoint& p) {
    const DdpSpec& d = p.ddp;
    return fmt::format("{}{} ctx={} b={}/rank {} × {} {}", d.model_size,
                       d.shard_optimizer ? " sharded" : "", d.context_length, d.batch_per_rank,
                       toString(d.precision), p.world_size, dist::backendName(p.backend));
}

// The mean gradient-ready times from backward's start over the point's measured rows, and
// backward's mean length; false when its rows have none.
bool gradientProfile(const DistributedResult& r, std::vector<dist::GradientReady>& gradients,
                     double& backward_ms) {
    gradients.clear();
    backward_ms = 0;
    int rows = 0;
    for (const auto& row : r.steps) {
        if (!measuredRow(row) || row.gradients.empty()) continue;
        if (gradients.empty()) {
            gradients = row.gradients;
            for (auto& g : gradients) g.ready_ms = 0;
        }
        if (row.gradients.size() != gradients.size()) continue;
        for (size_t i = 0; i < gradients.size(); ++i)
            gradients[i].ready_ms += std::max(0.0, row.gradients[i].ready_ms - row.forward_ms);
        backward_ms += row.backward_ms;
        ++rows;
    }
    if (rows == 0) return false;
    for (auto& g : gradients) g.ready_ms /= rows;
    backward_ms /= rows;
    return true;
}

}  // namespace

std::vector<BucketModel> bucketModels(const std::vector<DistributedResult>& results) {
    std::vector<std::string> keys;
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t i = 0; i < results.size(); ++i) {
        const DistributedResult& r = results[i];
        // A compiled step has no bucket times nor a wait after backward of its own (see Note
        // [compiled data-parallel step], item c): nothing to fit or to compare with.
        if (r.point.experiment != DistExperiment::Ddp || r.point.ddp.strategy != "bucketed" ||
            r.point.ddp.exec != ExecMode::Eager)
            continue;
        const std::string key = configurationKey(r.point);
        if (!groups.count(key)) keys.push_back(key);
        groups[key].push_back(i);
    }
    std::vector<BucketModel> out;
    for (const auto& key : keys) {
        std::vector<size_t> members = groups[key];
        std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
            return results[a].point.ddp.bucket_mb < results[b].point.ddp.bucket_mb;
        });
        const DistributedPoint& first = results[members.front()].point;
        BucketModel m;
        m.label = modelLabel(first);
        m.backend = first.backend;
        m.world_size = first.world_size;

        // The all-reduce's time: the run's sweep where it has one of this backend and world
        // (fp32: the gradients' dtype), else the buckets' own times.
        std::vector<std::pair<int64_t, double>> samples;
        for (const auto& r : results)
            for (const auto& a : r.allreduce)
                if (a.backend == m.backend && a.world_size == m.world_size &&
                    a.dtype == dist::BenchDtype::Float32)
                    samples.emplace_back(a.bytes, a.time_ms);
        m.fit_source = "all-reduce sweep";
        if (samples.empty()) {
            m.fit_source = "the run's buckets";
            for (size_t i : members)
                for (const auto& row : results[i].steps)
                    if (measuredRow(row))
                        for (const auto& s : dist::bucketServiceTimes(row.buckets))
                            samples.push_back(s);
        }
        m.fit = dist::fitLatencyBandwidth(samples);

        // Backward as measured: the point with the largest buckets, whose backward the
        // communication disturbed least (the fewest collectives launched during it).
        for (auto it = members.rbegin(); it != members.rend() && m.profile_point < 0; ++it)
            if (gradientProfile(results[*it], m.gradients, m.backward_ms))
                m.profile_point = static_cast<int>(*it);
        for (const auto& g : m.gradients) m.gradient_bytes += g.bytes;

        if (m.profile_point < 0)
            m.problem = "no gradient timings in these points' rows (stored before they were kept)";
        else if (!m.fit.ok)
            m.problem = fmt::format(
                "the all-reduce's time could not be fitted ({} samples; needs two sizes at least, "
                "time growing with size)",
                m.fit.points);

        auto predict = [&](double mib) {
            const int64_t bytes = std::max<int64_t>(1, static_cast<int64_t>(mib * kMiB));
            return dist::predictBucketed(m.gradients, m.backward_ms, bytes, dist::kFirstBucketBytes,
                                         m.fit);
        };
        for (size_t i : members) {
            const DistributedResult& r = results[i];
            BucketModelPoint p;
            p.point = static_cast<int>(i);
            p.bucket_mb = r.point.ddp.bucket_mb;
            const DdpSummary s = summarizeDdp(r);
            if (s.steps > 0) p.measured_ms = s.comm_wait_ms;
            for (const auto& row : r.steps)
                if (measuredRow(row) && !row.buckets.empty()) {
                    p.measured_buckets = static_cast<int>(row.buckets.size());
                    break;
                }
            if (m.problem.empty()) {
                const auto pred = predict(p.bucket_mb);
                p.buckets = pred.buckets;
                p.predicted_ms = pred.exposed_ms;
            }
            m.measured.push_back(p);
        }
        if (m.problem.empty()) {
            // Sizes on a log scale, 24 a decade, from the smallest gradient to twice all of them
            // (and past the largest size run), the measured sizes among them.
            int64_t smallest = m.gradients.front().bytes;
            for (const auto& g : m.gradients) smallest = std::min(smallest, g.bytes);
            double lo = std::max(1.0 / 1024, static_cast<double>(smallest) / kMiB);
            double hi = 2.0 * static_cast<double>(m.gradient_bytes) / kMiB;
            for (const auto& p : m.measured) {
                lo = std::min(lo, p.bucket_mb);
                hi = std::max(hi, p.bucket_mb);
            }
            std::vector<double> sizes;
            for (int k = static_cast<int>(std::floor(24 * std::log10(lo)));
                 k <= static_cast<int>(std::ceil(24 * std::log10(hi))); ++k)
                sizes.push_back(std::pow(10.0, k / 24.0));
            for (const auto& p : m.measured) sizes.push_back(p.bucket_mb);
            std::sort(sizes.begin(), sizes.end());
            sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
            m.optimal_ms = -1;
            for (double mib : sizes) {
                const double ms = predict(mib).exposed_ms;
                m.curve.emplace_back(mib, ms);
                if (m.optimal_ms < 0 || ms < m.optimal_ms - 1e-9) {
                    m.optimal_ms = ms;
                    m.optimal_mb = mib;
                }
            }
            m.course_optimal_mb = dist::courseOptimalBucketBytes(m.gradient_bytes, m.fit) / kMiB;
        }
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace ts
