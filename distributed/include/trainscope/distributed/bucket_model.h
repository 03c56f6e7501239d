// Bucketed DDP measured bucket by bucket, and the course's bucket-size question modelled: an
// all-reduce's time as latency + size / bandwidth, fitted by least squares, and the
// communication a bucket size leaves after backward, predicted from when each gradient became
// ready. Torch-free: the rows that carry the measurements are plain values.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ts::dist {

// One bucket's all-reduce in one step on one rank, in ms from the step's start (the host's
// clock around the work on Gloo, CUDA events on NCCL: see Note [per-bucket timing] in ddp.cpp).
struct BucketSpan {
    int index = 0;      // launch order: bucket 0 holds the last parameters
    int64_t bytes = 0;  // the bucket's payload
    int params = 0;
    double ready_ms = 0;   // its last gradient accumulated
    double launch_ms = 0;  // its all-reduce issued (after every bucket before it: c10d's order)
    double end_ms = 0;     // its all-reduce done (the data averaged on this rank)
};

// One parameter's gradient: its bytes and when it was accumulated, in ms from the step's start
// (registration order).
struct GradientReady {
    int64_t bytes = 0;
    double ready_ms = 0;
};

// t(n) = alpha + n / beta, fitted by least squares to (bytes, ms) pairs.
struct LatencyBandwidthFit {
    bool ok = false;
    int points = 0;
    double alpha_ms = 0;           // the time of an empty all-reduce: latency, a call's overhead
    double beta_bytes_per_ms = 0;  // the payload bandwidth (algbw), bytes per ms (= 1e-6 GB/s)
    double rms_residual_ms = 0;    // sqrt(mean((t − fit)²)) over the points
    double r2 = 0;                 // 1 − SS_res / SS_tot (1 when every time is the same)
    // The least-squares line had a latency below 0 or a slope not above 0 (times that do not
    // grow with size: noise, a loaded CPU), so the line is the best one through the origin:
    // alpha 0, beta the mean bandwidth.
    bool through_origin = false;
    double timeMs(double bytes) const { return alpha_ms + bytes / beta_bytes_per_ms; }
    double betaGbps() const { return beta_bytes_per_ms * 1e-6; }
};
// Needs two distinct sizes and positive times (else ok is false); where the free line's latency
// is below 0 or its slope not above 0, the line through the origin (through_origin).
LatencyBandwidthFit fitLatencyBandwidth(const std::vector<std::pair<int64_t, double>>& samples);

// A step's collectives as the fit's samples: each bucket's own time, end − max(launch, the end of
// the bucket before it), so that a bucket queued behind another is not charged its wait.
std::vector<std::pair<int64_t, double>> bucketServiceTimes(const std::vector<BucketSpan>& spans);

// What bucketed DDP of one bucket size is predicted to leave after backward.
struct BucketPrediction {
    int buckets = 0;
    double comm_end_ms = 0;  // the last all-reduce's end, from backward's start
    double exposed_ms = 0;   // max(0, comm_end − backward): the wait after backward
};
// See Note [bucket-size model] in bucket_model.cpp. `gradients` in registration order with their
// ready times from backward's start; buckets as BucketedSync makes them (assignBuckets, a first
// bucket of min(bucket, first_bucket_bytes)).
BucketPrediction predictBucketed(const std::vector<GradientReady>& gradients, double backward_ms,
                                 int64_t bucket_bytes, int64_t first_bucket_bytes,
                                 const LatencyBandwidthFit& fit);
// The course's closed form (all gradients s bytes, compute per bucket = its transfer time,
// per-call overhead alpha): overhead(n_b) = s/(n_b·beta) + n_b·alpha, least at
// bucket = sqrt(s·alpha·beta) bytes.
double courseOptimalBucketBytes(int64_t gradient_bytes, const LatencyBandwidthFit& fit);

}  // namespace ts::dist
