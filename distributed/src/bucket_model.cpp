#include "trainscope/distributed/bucket_model.h"

#include <algorithm>
#include <cmath>

#include "trainscope/distributed/buckets.h"

namespace ts::dist {

LatencyBandwidthFit fitLatencyBandwidth(const std::vector<std::pair<int64_t, double>>& samples) {
    LatencyBandwidthFit fit;
    fit.points = static_cast<int>(samples.size());
    if (samples.size() < 2) return fit;
    // Ordinary least squares of t on n, in MiB for the conditioning.
    const double unit = 1024.0 * 1024.0;
    double sx = 0, sy = 0;
    for (const auto& [n, t] : samples) {
        sx += static_cast<double>(n) / unit;
        sy += t;
    }
    const double count = static_cast<double>(samples.size());
    const double mx = sx / count, my = sy / count;
    double sxx = 0, sxy = 0, syy = 0;
    for (const auto& [n, t] : samples) {
        const double dx = static_cast<double>(n) / unit - mx, dy = t - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (!(sxx > 0)) return fit;  // one size only: latency and bandwidth cannot be told apart
    double slope = sxy / sxx;    // ms per MiB
    double intercept = my - slope * mx;
    if (intercept < 0 || !(slope > 0)) {
        // A negative latency or a time falling with size means nothing: the best line through
        // the origin instead (the mean bandwidth).
        fit.through_origin = true;
        double nn = 0, nt = 0;
        for (const auto& [n, t] : samples) {
            const double x = static_cast<double>(n) / unit;
            nn += x * x;
            nt += x * t;
        }
        intercept = 0;
        slope = nn > 0 ? nt / nn : 0;
    }
    if (!(slope > 0) || !std::isfinite(slope)) return fit;
    fit.alpha_ms = intercept;
    fit.beta_bytes_per_ms = unit / slope;
    double ss_res = 0;
    for (const auto& [n, t] : samples) {
        const double r = t - fit.timeMs(static_cast<double>(n));
        ss_res += r * r;
    }
    fit.rms_residual_ms = std::sqrt(ss_res / count);
    fit.r2 = syy > 0 ? 1.0 - ss_res / syy : 1.0;
    fit.ok = true;
    return fit;
}

std::vector<std::pair<int64_t, double>> bucketServiceTimes(const std::vector<BucketSpan>& spans) {
    std::vector<BucketSpan> sorted = spans;
    std::sort(sorted.begin(), sorted.end(),
              [](const BucketSpan& a, const BucketSpan& b) { return a.index < b.index; });
    std::vector<std::pair<int64_t, double>> out;
    double previous_end = -1e300;
    for (const auto& s : sorted) {
        const double from = std::max(s.launch_ms, previous_end);
        if (s.end_ms > from) out.emplace_back(s.bytes, s.end_ms - from);
        previous_end = std::max(previous_end, s.end_ms);
    }
    return out;
}

// Note [bucket-size model]: what bucketed DDP leaves after backward, for any bucket size, from
// one measured backward. The inputs are measured: each parameter's gradient-ready time from
// backward's start (the post-accumulate-grad hooks of a bucketed run, the mean over its ranks and
// measured steps), backward's length, and the all-reduce's t(n) = alpha + n/beta (the run's
// all-reduce sweep where it has one, else its own buckets' times). The model:
//   - buckets are made as BucketedSync makes them (reverse registration order, a first bucket of
//     min(size, 1 MiB), then the size; one dtype group: the model's weights are fp32);
//   - bucket k is ready when its last gradient is, and is launched once it and every bucket
//     before it are (c10d matches collectives by order): launch_k = max(ready_k, launch_{k−1});
//   - the all-reduces run one at a time on one channel, at the fitted speed:
//     end_k = max(launch_k, end_{k−1}) + alpha + bytes_k / beta;
//   - backward is not slowed by the communication (compute and communication share nothing),
//     and the division by the world size costs nothing;
//   - the overhead is what is left after backward: max(0, end_last − backward).
// Small buckets pay alpha many times (the channel falls behind by alpha a bucket); large ones
// start late (the first launch waits for a bucket's worth of gradients, the last bucket's
// transfer is all exposed). The optimum is searched over bucket sizes on this model. The
// course's closed form (courseOptimalBucketBytes) is the same trade-off when every bucket's
// gradients take as long to compute as to transfer: overhead(n_b) = s/(n_b·beta) + n_b·alpha.
// On the CPU (Gloo) compute and communication share the cores, so the measured wait is above the
// model where much communication overlaps backward.
BucketPrediction predictBucketed(const std::vector<GradientReady>& gradients, double backward_ms,
                                 int64_t bucket_bytes, int64_t first_bucket_bytes,
                                 const LatencyBandwidthFit& fit) {
    BucketPrediction p;
    if (gradients.empty() || !fit.ok || bucket_bytes <= 0) return p;
    std::vector<int64_t> bytes;
    for (const auto& g : gradients) bytes.push_back(g.bytes);
    const auto buckets = assignBuckets(
        bytes, bucket_bytes, std::max<int64_t>(1, std::min(bucket_bytes, first_bucket_bytes)));
    p.buckets = static_cast<int>(buckets.size());
    double launch = 0, end = 0;
    for (const auto& bucket : buckets) {
        double ready = 0;
        int64_t size = 0;
        for (int i : bucket) {
            ready = std::max(ready, gradients[static_cast<size_t>(i)].ready_ms);
            size += gradients[static_cast<size_t>(i)].bytes;
        }
        launch = std::max(launch, std::min(ready, backward_ms));
        end = std::max(launch, end) + fit.timeMs(static_cast<double>(size));
    }
    p.comm_end_ms = end;
    p.exposed_ms = std::max(0.0, end - backward_ms);
    return p;
}

double courseOptimalBucketBytes(int64_t gradient_bytes, const LatencyBandwidthFit& fit) {
    if (!fit.ok || gradient_bytes <= 0) return 0;
    return std::sqrt(static_cast<double>(gradient_bytes) * fit.alpha_ms * fit.beta_bytes_per_ms);
}

}  // namespace ts::dist
