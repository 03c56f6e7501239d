// Fake results for the model and export tests: what the engine would report, made by hand.
#pragma once

#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/config.h"

namespace fake {

inline ts::StepSample step(int index, bool warmup, double fwd, double bwd, double opt,
                           int64_t mem = 0) {
    ts::StepSample s;
    s.index = index;
    s.warmup = warmup;
    s.forward_ms = fwd;
    s.backward_ms = bwd;
    s.optimizer_ms = opt;
    s.total_ms = fwd + bwd + opt;
    s.loss = 9.2 - 0.01 * index;
    s.memory_allocated = mem;
    s.memory_reserved = mem * 2;
    s.memory_peak = mem + mem / 2;
    return s;
}

inline ts::PointConfig config(const std::string& size, int64_t ctx, ts::Precision p,
                              ts::AttentionImpl a = ts::AttentionImpl::Naive) {
    ts::PointConfig c;
    c.model = *ts::modelPreset(size);
    c.model.context_length = ctx;
    c.precision = p;
    c.attention = a;
    c.warmup = 1;
    c.steps = 4;
    c.batch_size = 2;
    c.device = "cuda:0";
    return c;
}

// A finished point whose measured steps take `totalMs` each, ± `spread`.
inline ts::BenchResult result(const ts::PointConfig& c, double totalMs, double spread = 0.1,
                              ts::Status status = ts::Status::Ok) {
    ts::BenchResult r;
    r.config = c;
    r.status = status;
    r.parameter_count = ts::parameterCount(c.model);
    if (status == ts::Status::OOM) {
        r.error = "CUDA out of memory. Tried to allocate 2.00 GiB";
        r.oom_bytes = int64_t(2) << 30;
        return r;
    }
    for (int i = 0; i < c.warmup + c.steps; ++i) {
        const bool warm = i < c.warmup;
        const double t = warm ? totalMs * 10 : totalMs + (i % 2 ? spread : -spread);
        r.steps.push_back(step(i, warm, t * 0.3, t * 0.6, t * 0.1, int64_t(100 + i) << 20));
    }
    ts::summarize(r);
    r.peak_memory = int64_t(200) << 20;
    r.environment.device_name = "NVIDIA Test GPU";
    r.environment.driver_version = "550.1";
    r.environment.cuda_version = "12.4";
    r.environment.torch_version = "2.11.0";
    r.environment.git_commit = "abc123";
    r.environment.date = "2026-01-01T00:00:00Z";
    return r;
}

}  // namespace fake
