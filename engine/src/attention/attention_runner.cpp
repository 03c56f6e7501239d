// The attention lab's runner: per problem (shape, dtype, causal) one set of random inputs and,
// lazily, one float64 reference; per implementation a correctness check, then warm-up and
// measured steps timed with device marks. Each finished cell is stored, then reported.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "attention/attention_json.h"
#include "attention/attention_lab.h"
#include "core/json_read.h"
#include "core/store.h"
#include "nn/attention.h"
#include "nn/attention_tiled.h"
#include "runtime/device.h"
#include "runtime/environment.h"
#include "runtime/host_memory.h"
#include "runtime/python_runner.h"
#include "runtime/step_ranges.h"

namespace ts {

std::vector<std::string> checkAttentionRunnable(const AttentionBenchSpec& s) {
    return checkRunnable({s.device, s.dtypes, s.impls});
}

namespace {

at::ScalarType scalarType(Precision p) {
    switch (p) {
        case Precision::BF16:
            return at::kBFloat16;
        case Precision::FP16:
            return at::kHalf;
        default:
            return at::kFloat;
    }
}

// Correctness gate of the benchmark (the kernel tests hold the kernels to a stricter,
// per-case bound): relative Frobenius error against float64.
double tolerance(Precision p) {
    switch (p) {
        case Precision::BF16:
            return 3e-2;
        case Precision::FP16:
            return 5e-3;
        default:
            return 1e-4;
    }
}

// A forced SDPA backend that cannot take these inputs, or the flash kernels refusing them.
bool isUnsupported(const std::string& msg) {
    return msg.find("No available kernel") != std::string::npos ||
           msg.find("Invalid backend") != std::string::npos ||
           msg.find("flash attention") != std::string::npos ||
           msg.find("not built with CUDA") != std::string::npos;
}

double relErr(const at::Tensor& a, const at::Tensor& ref) {
    const at::Tensor r = ref.to(at::kDouble);
    const double denom = r.norm().item<double>();
    const double num = (a.to(at::kDouble) - r).norm().item<double>();
    return denom > 0 ? num / denom : num;
}

// One problem's inputs, and the float64 reference on a few (batch, head) slices: the first and
// last batch element × the first and last head, so that grid indexing errors show.
struct Problem {
    at::Tensor q, k, v, dout;
    at::Tensor bidx, hidx;
    bool have_ref = false;
    at::Tensor ref_out, ref_dq, ref_dk, ref_dv;

    at::Tensor pick(const at::Tensor& t) const {
        return t.index_select(0, bidx).index_select(1, hidx);
    }

    void ensureReference(bool causal) {
        if (have_ref) return;
        const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
        const at::Tensor q64 = pick(q).to(at::kDouble), k64 = pick(k).to(at::kDouble),
                         v64 = pick(v).to(at::kDouble);
        const TiledTiles tiles{1024, 1024};
        auto f = tiledForward(q64, k64, v64, causal, scale, tiles);
        auto g = tiledBackward(pick(dout).to(at::kDouble), q64, k64, v64, f.out, f.lse, causal,
                               scale, tiles);
        ref_out = f.out, ref_dq = g.dq, ref_dk = g.dk, ref_dv = g.dv;
        have_ref = true;
    }
};

at::Tensor uniqueIndex(int64_t n, const at::Device& device) {
    std::vector<int64_t> idx{0};
    if (n > 1) idx.push_back(n - 1);
    return at::tensor(idx, at::TensorOptions().dtype(at::kLong)).to(device);
}

bool wants(const AttentionBenchSpec& s, AttentionPass p) {
    return std::find(s.passes.begin(), s.passes.end(), p) != s.passes.end();
}

// Checks, then times one implementation on one problem. Throws on OOM and other errors.
void measure(AttentionCell& cell, const AttentionBenchSpec& spec, Problem& prob,
             const c10::Device& device, const CancelToken& cancel, Observer& obs) {
    const bool grad =
        wants(spec, AttentionPass::Backward) || wants(spec, AttentionPass::ForwardBackward);
    at::Tensor q = prob.q.detach().requires_grad_(grad), k = prob.k.detach().requires_grad_(grad),
               v = prob.v.detach().requires_grad_(grad);
    if (spec.check) {
        at::Tensor qc = prob.q.detach().requires_grad_(true),
                   kc = prob.k.detach().requires_grad_(true),
                   vc = prob.v.detach().requires_grad_(true);
        at::Tensor out = attend(qc, kc, vc, cell.impl, cell.causal);
        out.backward(prob.dout);
        prob.ensureReference(cell.causal);
        cell.tolerance = tolerance(cell.dtype);
        cell.err_out = relErr(prob.pick(out.detach()), prob.ref_out);
        cell.err_grad = std::max({relErr(prob.pick(qc.grad()), prob.ref_dq),
                                  relErr(prob.pick(kc.grad()), prob.ref_dk),
                                  relErr(prob.pick(vc.grad()), prob.ref_dv)});
        const bool finite = at::isfinite(out).all().item<bool>() &&
                            at::isfinite(qc.grad()).all().item<bool>() &&
                            at::isfinite(kc.grad()).all().item<bool>() &&
                            at::isfinite(vc.grad()).all().item<bool>();
        if (!finite || !(cell.err_out <= cell.tolerance) || !(cell.err_grad <= cell.tolerance)) {
            cell.status = Status::Failed;
            cell.error = fmt::format(
                "wrong result: relative error O {:.2e}, gradients {:.2e} (tolerance {:.0e}{})",
                cell.err_out, cell.err_grad, cell.tolerance, finite ? "" : ", non-finite values");
            return;
        }
    }
    std::vector<double> fwd, bwd, total;
    DeviceTimer marks(device, 3);
    // See Note [capture ranges]: each cell's warm-up and measured steps.
    StepRanges ranges(device, spec.cuda_profiler_range, &obs);
    for (int i = 0; i < spec.warmup + spec.steps; ++i) {
        if (cancel.cancelled()) {
            cell.status = Status::Cancelled;
            return;
        }
        const StepRanges::Step step_range = ranges.step(i, i < spec.warmup);
        for (at::Tensor* t : {&q, &k, &v})
            if (t->requires_grad()) t->mutable_grad() = at::Tensor();
        if (i == spec.warmup) resetPeakMemory(device);
        marks.mark(0);
        at::Tensor out;
        {
            std::optional<at::NoGradGuard> no_grad;
            if (!grad) no_grad.emplace();
            out = attend(q, k, v, cell.impl, cell.causal);
        }
        marks.mark(1);
        const int64_t before_backward = memoryStats(device).allocated;
        if (grad) out.backward(prob.dout);
        marks.mark(2);
        marks.wait(2);
        if (i < spec.warmup) continue;
        fwd.push_back(marks.ms(0, 1));
        bwd.push_back(marks.ms(1, 2));
        total.push_back(marks.ms(0, 2));
        cell.memory_before_backward = std::max(cell.memory_before_backward, before_backward);
    }
    ranges.finish();
    cell.peak_memory = memoryStats(device).peak;
    auto tflops = [&](double ms, AttentionPass p) {
        return ms > 0 ? attentionFlops(cell.batch, cell.heads, cell.seq, cell.head_dim, cell.causal,
                                       p) /
                            (ms * 1e9)
                      : 0.0;
    };
    auto summarize = [](const std::vector<double>& v, double& median, double& mean, double& sd) {
        const Stats st = computeStats(v);
        median = st.median, mean = st.mean, sd = st.std;
    };
    summarize(fwd, cell.forward_ms, cell.forward_mean_ms, cell.forward_std_ms);
    cell.forward_tflops = tflops(cell.forward_ms, AttentionPass::Forward);
    if (grad) {
        summarize(bwd, cell.backward_ms, cell.backward_mean_ms, cell.backward_std_ms);
        summarize(total, cell.forward_backward_ms, cell.forward_backward_mean_ms,
                  cell.forward_backward_std_ms);
        cell.backward_tflops = tflops(cell.backward_ms, AttentionPass::Backward);
        cell.forward_backward_tflops =
            tflops(cell.forward_backward_ms, AttentionPass::ForwardBackward);
    }
}

// One problem of the spec: everything of a cell but the implementation.
struct Shape {
    int64_t batch, heads, seq, head_dim;
    Precision dtype;
    bool causal;
};

// The problems in the spec's order (batch, heads, dtype, causal, head dim, sequence length;
// outermost first).
std::vector<Shape> problems(const AttentionBenchSpec& s) {
    std::vector<Shape> out;
    for (int64_t batch : s.batches)
        for (int64_t heads : s.heads)
            for (Precision dtype : s.dtypes)
                for (bool causal : s.causal)
                    for (int64_t d : s.head_dims)
                        for (int64_t seq : s.seq_lens)
                            out.push_back({batch, heads, seq, d, dtype, causal});
    return out;
}

// Random inputs of one problem (seeded per problem), or the failure that stopped them.
std::optional<Problem> makeProblem(const Shape& p, uint64_t seed, const c10::Device& device,
                                   Failure& failure) {
    try {
        at::manual_seed(seed);
        const auto opts = at::TensorOptions().device(device).dtype(scalarType(p.dtype));
        Problem prob;
        prob.q = at::randn({p.batch, p.heads, p.seq, p.head_dim}, opts);
        prob.k = at::randn({p.batch, p.heads, p.seq, p.head_dim}, opts);
        prob.v = at::randn({p.batch, p.heads, p.seq, p.head_dim}, opts);
        prob.dout = at::randn({p.batch, p.heads, p.seq, p.head_dim}, opts);
        prob.bidx = uniqueIndex(p.batch, device);
        prob.hidx = uniqueIndex(p.heads, device);
        return prob;
    } catch (const std::exception& e) {
        failure = describeFailure(e);
        failure.message = "inputs: " + failure.message;
        return std::nullopt;
    }
}

// Note [attention cells the CPU cannot hold]: on a GPU an out-of-memory is a cell's result: the
// allocator refuses, the cell says OOM. On the CPU, Linux promises memory it does not have and the
// OOM killer ends the process (or another one) later. So a CPU cell is estimated before it
// allocates, and one that cannot fit the memory this process can get is an OOM cell that was not
// tried, its estimate in the message. The estimate is a lower bound: q, k, v, the output gradient,
// q, k and v's gradients and the output (8 tensors of batch × heads × seq × head dim), and for the
// naive attention its scores and probabilities (2 of batch × heads × seq²).
double cpuCellLowerBound(const Shape& p, bool scores) {
    const double elt = p.dtype == Precision::FP32 ? 4.0 : 2.0;
    const double b = static_cast<double>(p.batch), h = static_cast<double>(p.heads),
                 s = static_cast<double>(p.seq), d = static_cast<double>(p.head_dim);
    double bytes = 8.0 * b * h * s * d * elt;
    if (scores) bytes += 2.0 * b * h * s * s * elt;
    return bytes;
}

// `scores`: the naive attention's, which it materialises; false for the inputs alone.
std::string cpuCellMemoryProblem(const Shape& p, bool scores, int64_t available) {
    const double need = cpuCellLowerBound(p, scores);
    if (available <= 0 || need <= static_cast<double>(available)) return {};
    return fmt::format(
        "not tried: needs at least {:.1f} GiB on the CPU (inputs, output and gradients{}), more "
        "than the {:.1f} GiB this machine has free",
        need / 1073741824.0, scores ? ", scores and probabilities" : "",
        static_cast<double>(available) / 1073741824.0);
}

// Checks and times one cell; its status says how it ended.
void runCell(AttentionCell& cell, const AttentionBenchSpec& spec, std::optional<Problem>& prob,
             const Failure& input_failure, const c10::Device& device, const CancelToken& cancel,
             Observer& obs) {
    if (!prob) {
        cell.status = input_failure.status;
        cell.error = input_failure.message;
        return;
    }
    try {
        measure(cell, spec, *prob, device, cancel, obs);
    } catch (const std::exception& e) {
        const Failure f = describeFailure(e);
        cell.status =
            f.status == Status::Failed && isUnsupported(f.message) ? Status::Unsupported : f.status;
        cell.error = f.message;
    }
    if (cell.status != Status::Ok) releaseCachedMemory(device);
}

// See Note [attention in Python]: the runner's spec for the Python implementations' cells.
nlohmann::json pythonSpec(const AttentionBenchSpec& spec, const std::vector<Shape>& shapes) {
    nlohmann::json problems = nlohmann::json::array();
    for (const Shape& p : shapes)
        problems.push_back({{"batch", p.batch},
                            {"heads", p.heads},
                            {"seq", p.seq},
                            {"head_dim", p.head_dim},
                            {"dtype", toString(p.dtype)},
                            {"causal", p.causal}});
    std::vector<std::string> passes;
    for (auto p : spec.passes) passes.emplace_back(toString(p));
    return {{"code", spec.code},     {"impls", spec.python_impls},
            {"problems", problems},  {"passes", passes},
            {"warmup", spec.warmup}, {"steps", spec.steps},
            {"device", spec.device}, {"seed", spec.seed},
            {"check", spec.check},   {"cuda_profiler_range", spec.cuda_profiler_range}};
}

AttentionCell cellOf(const Shape& shape, const std::string& python_impl) {
    AttentionCell cell;
    cell.python_impl = python_impl;
    cell.batch = shape.batch, cell.heads = shape.heads, cell.seq = shape.seq;
    cell.head_dim = shape.head_dim, cell.dtype = shape.dtype, cell.causal = shape.causal;
    return cell;
}

// A cell line of the runner read into `cell` (its problem already set); TFLOP/s from the times.
void readPythonCell(AttentionCell& cell, const nlohmann::json& j) {
    // The runner writes statuses in lower case ("oom"), as its other lines do.
    std::string text = j.value("status", "failed");
    if (text == "oom") text = "OOM";
    cell.status = parseStatus(text).value_or(Status::Failed);
    cell.error = j.value("error", "");
    cell.traceback = j.value("traceback", "");
    // Non-finite numbers come as "NaN" and "Infinity" (as jsonio writes them): an error of NaN
    // is a result, not "not checked".
    auto num = [&](const char* key, double fallback) {
        const auto it = j.find(key);
        if (it == j.end() || !(it->is_number() || it->is_string())) return fallback;
        try {
            return jsonio::toDouble(*it, key);
        } catch (const std::exception&) {
            return fallback;
        }
    };
    cell.forward_ms = num("forward_ms", 0), cell.backward_ms = num("backward_ms", 0);
    cell.forward_backward_ms = num("forward_backward_ms", 0);
    cell.forward_mean_ms = num("forward_mean_ms", 0),
    cell.forward_std_ms = num("forward_std_ms", 0);
    cell.backward_mean_ms = num("backward_mean_ms", 0);
    cell.backward_std_ms = num("backward_std_ms", 0);
    cell.forward_backward_mean_ms = num("forward_backward_mean_ms", 0);
    cell.forward_backward_std_ms = num("forward_backward_std_ms", 0);
    cell.first_call_ms = num("first_call_ms", 0);
    cell.memory_before_backward = static_cast<int64_t>(num("memory_before_backward", 0));
    cell.peak_memory = static_cast<int64_t>(num("peak_memory", 0));
    cell.err_out = num("err_out", -1), cell.err_grad = num("err_grad", -1);
    cell.tolerance = num("tolerance", 0);
    auto tflops = [&](double ms, AttentionPass p) {
        return ms > 0 ? attentionFlops(cell.batch, cell.heads, cell.seq, cell.head_dim, cell.causal,
                                       p) /
                            (ms * 1e9)
                      : 0.0;
    };
    cell.forward_tflops = tflops(cell.forward_ms, AttentionPass::Forward);
    cell.backward_tflops = tflops(cell.backward_ms, AttentionPass::Backward);
    cell.forward_backward_tflops = tflops(cell.forward_backward_ms, AttentionPass::ForwardBackward);
}

}  // namespace

AttentionBenchResult runAttentionBench(const AttentionBenchSpec& spec, AttentionObserver& obs,
                                       const CancelToken& cancel, ResultStore* store,
                                       int64_t run_id) {
    if (const auto errors = validateAttentionSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    AttentionBenchResult result;
    result.environment = currentEnvironment(spec.device);
    const c10::Device device = parseDevice(spec.device);
    const int count = static_cast<int>(attentionCellCount(spec));
    ProgressMeter meter(obs);
    int index = 0;
    // Stores the finished cell, tells the observer; false when the run must stop (a cell that
    // could not be stored, as in the benchmark's runSweep, or a stop).
    auto finish = [&](const AttentionCell& cell) {
        if (store) {
            try {
                storeAttentionCell(*store, run_id, index, cell);
            } catch (const std::exception& e) {
                result.store_error =
                    storeFailure("cell", static_cast<size_t>(index), static_cast<size_t>(count), e);
                obs.log(LogLevel::Error, result.store_error);
            }
        }
        obs.cellFinished(index, count, cell);
        meter.report(index + 1, count);
        result.cells.push_back(cell);
        ++index;
        if (cell.status == Status::Cancelled) result.cancelled = true;
        return result.store_error.empty() && cell.status != Status::Cancelled;
    };
    uint64_t problem_seed = spec.seed;
    const int64_t host_available = device.is_cpu() ? availableMemoryBytes() : 0;
    const std::vector<Shape> shapes = problems(spec);
    for (const Shape& shape : spec.impls.empty() ? std::vector<Shape>{} : shapes) {
        Failure input_failure;
        // See Note [attention cells the CPU cannot hold]: the inputs are not allocated when no
        // cell of the problem could fit (the bound without scores is every implementation's).
        std::optional<Problem> prob;
        ++problem_seed;
        if (auto why = cpuCellMemoryProblem(shape, /*scores=*/false, host_available); !why.empty())
            input_failure = {Status::OOM, why};
        else
            prob = makeProblem(shape, problem_seed, device, input_failure);
        for (AttentionImpl impl : spec.impls) {
            if (cancel.cancelled()) {
                result.cancelled = true;
                return result;
            }
            AttentionCell cell;
            cell.impl = impl, cell.batch = shape.batch, cell.heads = shape.heads,
            cell.seq = shape.seq;
            cell.head_dim = shape.head_dim, cell.dtype = shape.dtype, cell.causal = shape.causal;
            obs.cellStarted(index, count, cell);
            if (auto why =
                    cpuCellMemoryProblem(shape, impl == AttentionImpl::Naive, host_available);
                prob && !why.empty()) {
                cell.status = Status::OOM;
                cell.error = why;
            } else {
                runCell(cell, spec, prob, input_failure, device, cancel, obs);
            }
            if (!finish(cell)) return result;
        }
        prob.reset();
        releaseCachedMemory(device);
    }
    if (spec.python_impls.empty() || cancel.cancelled()) {
        result.cancelled = result.cancelled || cancel.cancelled();
        return result;
    }
    // See Note [attention in Python]: one runner for every Python cell. What this process
    // cached goes back first, so the runner gets the device's memory.
    releaseCachedMemory(device);
    const size_t python_count = shapes.size() * spec.python_impls.size();
    size_t received = 0;
    bool stop = false;
    PythonJob job;
    job.python = spec.python;
    job.command = "attention";
    job.spec = pythonSpec(spec, shapes);
    const PythonOutcome out = runPython(
        job,
        [&](const nlohmann::json& j) {
            const std::string event = j.value("event", "");
            if (event == "ready") {
                const nlohmann::json impls = j.value("impls", nlohmann::json::object());
                for (const auto& [name, what] : impls.items()) {
                    const std::string status = what.value("status", "");
                    const std::string desc = what.value("what", "");
                    obs.log(
                        status == "ok" ? LogLevel::Info : LogLevel::Warning,
                        fmt::format("attention: {}{}: {}", name, desc.empty() ? "" : " = " + desc,
                                    status == "ok" ? "found" : what.value("message", status)));
                }
                if (const std::string where = j.value("where", ""); !where.empty())
                    obs.log(LogLevel::Info,
                            fmt::format("attention: your code from {}{}", where,
                                        j.value("edition", "").empty()
                                            ? ""
                                            : " (the course's " + j.value("edition", "") +
                                                  " edition's adapters)"));
                return;
            }
            if (event != "cell" || stop) return;
            const int64_t problem = j.value("problem", int64_t{-1});
            const std::string impl = j.value("impl", "");
            if (problem < 0 || problem >= static_cast<int64_t>(shapes.size()) ||
                !isPythonAttentionImpl(impl) || !j.contains("cell") || !j["cell"].is_object()) {
                obs.log(LogLevel::Warning,
                        "attention: the Python runner sent a cell line that does not read");
                return;
            }
            AttentionCell cell = cellOf(shapes[static_cast<size_t>(problem)], impl);
            obs.cellStarted(index, count, cell);
            readPythonCell(cell, j["cell"]);
            ++received;
            if (!finish(cell)) stop = true;
        },
        cancel);
    if (!result.store_error.empty()) return result;
    if (out.state == PythonOutcome::State::Cancelled || cancel.cancelled()) {
        result.cancelled = true;
        return result;
    }
    if (received < python_count) {
        // The runner ended early (no torch, a crash, a hang): the cells it did not send say why.
        const std::string why = out.ok() ? "the Python runner ended without this cell" : out.text();
        obs.log(LogLevel::Error, "attention: the Python implementations did not finish: " +
                                     std::string(firstLine(why)));
        for (size_t k = received; k < python_count; ++k) {
            AttentionCell cell = cellOf(shapes[k / spec.python_impls.size()],
                                        spec.python_impls[k % spec.python_impls.size()]);
            cell.status = Status::Failed;
            cell.error = firstLine(why);
            cell.traceback = out.traceback;
            if (!finish(cell)) break;
        }
    }
    return result;
}

}  // namespace ts
