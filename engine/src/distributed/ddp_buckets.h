// Bucketed DDP bucket by bucket: each bucket's all-reduce against backward (the rows' spans,
// averaged), and the course's bucket-size question answered from a run's own measurements: the
// all-reduce fitted as latency + size / bandwidth, the communication left after backward
// predicted for every bucket size (see Note [bucket-size model] in
// distributed/src/bucket_model.cpp), the best size, and the prediction beside what each bucketed
// point measured. Torch-free; computed from stored rows, so a run shown again gives the same.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "distributed/distributed.h"

namespace ts {

// One bucket of a DDP point over its measured steps and ranks (means), in ms from the step's
// start.
struct BucketSummary {
    int point = 0;  // the run's point, 0-based
    int index = 0;  // launch order
    int64_t bytes = 0;
    int params = 0;
    int samples = 0;  // rows averaged (ranks × measured steps)
    double ready_ms = 0, launch_ms = 0, end_ms = 0;
    double backward_start_ms = 0, backward_end_ms = 0;  // the same rows' backward
    // Of [launch, end], the part before backward's end (the rows' mean).
    double hidden_ms = 0;
};
// Every DDP point with per-bucket rows (overlap, bucketed), its buckets in launch order.
std::vector<BucketSummary> bucketSummaries(const std::vector<DistributedResult>& results);

// The model at one bucket size beside the point that ran it.
struct BucketModelPoint {
    int point = -1;            // the run's point (0-based); -1 for a size no point ran
    double bucket_mb = 0;      // MiB
    int buckets = 0;           // as the model makes them
    int measured_buckets = 0;  // as the point made them (0: not run)
    double predicted_ms = 0;   // communication left after backward
    double measured_ms = -1;   // the point's comm wait (summarizeDdp); -1: not measured
};

// One model: the bucketed points of one configuration (every setting but the bucket size).
struct BucketModel {
    std::string label;  // "tiny ctx=32 b=2/rank fp32 × 2 gloo"
    dist::CommBackend backend = dist::CommBackend::Gloo;
    int world_size = 0;
    // "all-reduce sweep" (the run's own all-reduce rows of this backend, world and fp32) or
    // "the run's buckets" (each bucket's own time: see bucketServiceTimes).
    std::string fit_source;
    dist::LatencyBandwidthFit fit;
    int profile_point = -1;  // the point whose gradients' ready times the model runs on
    int64_t gradient_bytes = 0;
    double backward_ms = 0;
    std::vector<dist::GradientReady> gradients;    // ready from backward's start, the mean
    std::vector<BucketModelPoint> measured;        // one per bucketed point, by bucket size
    std::vector<std::pair<double, double>> curve;  // (bucket MiB, predicted ms), rising sizes
    double optimal_mb = 0, optimal_ms = 0;         // the curve's least (the smallest such size)
    double course_optimal_mb = 0;                  // sqrt(s·alpha·beta), in MiB
    std::string problem;                           // why there is no prediction ("" when there is)
};
std::vector<BucketModel> bucketModels(const std::vector<DistributedResult>& results);

}  // namespace ts
