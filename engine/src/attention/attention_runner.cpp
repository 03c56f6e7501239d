// The attention benchmark (attention_bench.h): per problem (shape, dtype, causal) one set of
// random inputs and, lazily, one float64 reference; per implementation a correctness check,
// then warm-up and measured steps timed with device events.
#include "trainscope/engine/attention_bench.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/Event.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "attention.h"
#include "attention_tiled.h"
#include "trainscope/engine/environment.h"
#include "trainscope/engine/json.h"

namespace ts {

namespace {

using Clock = std::chrono::steady_clock;

struct ImplName {
    AttentionImpl impl;
    std::string_view name;
};
constexpr ImplName kImplNames[] = {
    {AttentionImpl::Naive, "naive"},           {AttentionImpl::Tiled, "tiled"},
    {AttentionImpl::Sdpa, "sdpa"},             {AttentionImpl::SdpaFlash, "sdpa-flash"},
    {AttentionImpl::SdpaEfficient, "sdpa-efficient"}, {AttentionImpl::SdpaCudnn, "sdpa-cudnn"},
    {AttentionImpl::SdpaMath, "sdpa-math"},    {AttentionImpl::Flash, "flash"},
};

at::ScalarType scalarType(Precision p) {
    switch (p) {
        case Precision::BF16: return at::kBFloat16;
        case Precision::FP16: return at::kHalf;
        default: return at::kFloat;
    }
}

// Correctness gate of the benchmark (the kernel tests hold the kernels to a stricter,
// per-case bound): relative Frobenius error against float64.
double tolerance(Precision p) {
    switch (p) {
        case Precision::BF16: return 3e-2;
        case Precision::FP16: return 5e-3;
        default: return 1e-4;
    }
}

// Enables exactly one of LibTorch's fused attention backends for its lifetime.
class SdpaBackendScope {
public:
    explicit SdpaBackendScope(AttentionImpl impl) {
        auto& c = at::globalContext();
        prev_ = {c.userEnabledFlashSDP(), c.userEnabledMemEfficientSDP(), c.userEnabledCuDNNSDP(),
                 c.userEnabledMathSDP()};
        if (impl == AttentionImpl::Sdpa) return;
        active_ = true;
        set(impl == AttentionImpl::SdpaFlash, impl == AttentionImpl::SdpaEfficient, impl == AttentionImpl::SdpaCudnn,
            impl == AttentionImpl::SdpaMath);
    }
    ~SdpaBackendScope() {
        if (active_) set(prev_[0], prev_[1], prev_[2], prev_[3]);
    }
    SdpaBackendScope(const SdpaBackendScope&) = delete;
    SdpaBackendScope& operator=(const SdpaBackendScope&) = delete;

private:
    static void set(bool flash, bool efficient, bool cudnn, bool math) {
        auto& c = at::globalContext();
        c.setSDPUseFlash(flash);
        c.setSDPUseMemEfficient(efficient);
        c.setSDPUseCuDNN(cudnn);
        c.setSDPUseMath(math);
    }
    std::array<bool, 4> prev_{};
    bool active_ = false;
};

at::Tensor runImpl(AttentionImpl impl, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
    switch (impl) {
        case AttentionImpl::Naive: return naiveAttention(q, k, v, causal);
        case AttentionImpl::Tiled: return tiledAttention(q, k, v, causal);
        case AttentionImpl::Flash: return flashAttention(q, k, v, causal);
        default: {
            SdpaBackendScope scope(impl);
            return sdpaAttention(q, k, v, causal);
        }
    }
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// A forced SDPA backend that cannot take these inputs, or the flash kernels refusing them.
bool isUnsupported(const std::string& msg) {
    return msg.find("No available kernel") != std::string::npos || msg.find("Invalid backend") != std::string::npos ||
           msg.find("flash attention") != std::string::npos ||
           msg.find("not built with CUDA") != std::string::npos;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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

    at::Tensor pick(const at::Tensor& t) const { return t.index_select(0, bidx).index_select(1, hidx); }

    void ensureReference(bool causal) {
        if (have_ref) return;
        const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
        const at::Tensor q64 = pick(q).to(at::kDouble), k64 = pick(k).to(at::kDouble), v64 = pick(v).to(at::kDouble);
        const TiledTiles tiles{1024, 1024};
        auto f = tiledForward(q64, k64, v64, causal, scale, tiles);
        auto g = tiledBackward(pick(dout).to(at::kDouble), q64, k64, v64, f.out, f.lse, causal, scale, tiles);
        ref_out = f.out, ref_dq = g.dq, ref_dk = g.dk, ref_dv = g.dv;
        have_ref = true;
    }
};

at::Tensor uniqueIndex(int64_t n, const at::Device& device) {
    std::vector<int64_t> idx{0};
    if (n > 1) idx.push_back(n - 1);
    return at::tensor(idx, at::TensorOptions().dtype(at::kLong)).to(device);
}

void releaseCachedMemory(const c10::Device& device) {
    if (device.is_cuda()) {
        at::accelerator::synchronizeDevice(device.index());
        at::accelerator::emptyCache();
    }
}

// Device events on the current stream (a steady clock on the CPU).
class Marks {
public:
    explicit Marks(const c10::Device& d) : device_(d) {
        if (d.is_cuda())
            for (auto& e : events_) e = std::make_unique<c10::Event>(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
    }
    void mark(int i) {
        if (device_.is_cuda()) events_[i]->record(at::accelerator::getCurrentStream(device_.index()));
        else times_[i] = Clock::now();
    }
    void finish(int last) {
        if (device_.is_cuda()) events_[last]->synchronize();
    }
    double ms(int i, int j) const {
        if (device_.is_cuda()) return events_[i]->elapsedTime(*events_[j]);
        return std::chrono::duration<double, std::milli>(times_[j] - times_[i]).count();
    }

private:
    c10::Device device_;
    std::array<std::unique_ptr<c10::Event>, 3> events_;
    std::array<Clock::time_point, 3> times_;
};

int64_t allocatedNow(const c10::Device& d, bool peak) {
    if (!d.is_cuda()) return 0;
    const auto stats = at::accelerator::getDeviceStats(d.index());
    const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return peak ? stats.allocated_bytes[agg].peak : stats.allocated_bytes[agg].current;
}

bool wants(const AttentionBenchSpec& s, AttentionPass p) {
    return std::find(s.passes.begin(), s.passes.end(), p) != s.passes.end();
}

// Checks, then times one implementation on one problem. Throws on OOM and other errors.
void measure(AttentionCell& cell, const AttentionBenchSpec& spec, Problem& prob, const c10::Device& device,
             const CancelToken& cancel) {
    const bool grad = wants(spec, AttentionPass::Backward) || wants(spec, AttentionPass::ForwardBackward);
    at::Tensor q = prob.q.detach().requires_grad_(grad), k = prob.k.detach().requires_grad_(grad),
               v = prob.v.detach().requires_grad_(grad);
    if (spec.check) {
        at::Tensor qc = prob.q.detach().requires_grad_(true), kc = prob.k.detach().requires_grad_(true),
                   vc = prob.v.detach().requires_grad_(true);
        at::Tensor out = runImpl(cell.impl, qc, kc, vc, cell.causal);
        out.backward(prob.dout);
        prob.ensureReference(cell.causal);
        cell.tolerance = tolerance(cell.dtype);
        cell.err_out = relErr(prob.pick(out.detach()), prob.ref_out);
        cell.err_grad = std::max({relErr(prob.pick(qc.grad()), prob.ref_dq), relErr(prob.pick(kc.grad()), prob.ref_dk),
                                  relErr(prob.pick(vc.grad()), prob.ref_dv)});
        const bool finite = at::isfinite(out).all().item<bool>() && at::isfinite(qc.grad()).all().item<bool>() &&
                            at::isfinite(kc.grad()).all().item<bool>() && at::isfinite(vc.grad()).all().item<bool>();
        if (!finite || !(cell.err_out <= cell.tolerance) || !(cell.err_grad <= cell.tolerance)) {
            cell.status = CellStatus::Failed;
            cell.error = fmt::format("wrong result: relative error O {:.2e}, gradients {:.2e} (tolerance {:.0e}{})",
                                     cell.err_out, cell.err_grad, cell.tolerance, finite ? "" : ", non-finite values");
            return;
        }
    }
    std::vector<double> fwd, bwd, total;
    Marks marks(device);
    for (int i = 0; i < spec.warmup + spec.steps; ++i) {
        if (cancel.cancelled()) {
            cell.status = CellStatus::Cancelled;
            return;
        }
        for (at::Tensor* t : {&q, &k, &v})
            if (t->requires_grad()) t->mutable_grad() = at::Tensor();
        if (i == spec.warmup && device.is_cuda()) at::accelerator::resetPeakStats(device.index());
        marks.mark(0);
        at::Tensor out;
        {
            std::optional<at::NoGradGuard> no_grad;
            if (!grad) no_grad.emplace();
            out = runImpl(cell.impl, q, k, v, cell.causal);
        }
        marks.mark(1);
        const int64_t before_backward = allocatedNow(device, false);
        if (grad) out.backward(prob.dout);
        marks.mark(2);
        marks.finish(2);
        if (i < spec.warmup) continue;
        fwd.push_back(marks.ms(0, 1));
        bwd.push_back(marks.ms(1, 2));
        total.push_back(marks.ms(0, 2));
        cell.memory_before_backward = std::max(cell.memory_before_backward, before_backward);
    }
    cell.peak_memory = allocatedNow(device, true);
    auto tflops = [&](double ms, AttentionPass p) {
        return ms > 0 ? attentionFlops(cell.batch, cell.heads, cell.seq, cell.head_dim, cell.causal, p) / (ms * 1e9) : 0.0;
    };
    cell.forward_ms = median(fwd);
    cell.forward_tflops = tflops(cell.forward_ms, AttentionPass::Forward);
    if (grad) {
        cell.backward_ms = median(bwd);
        cell.forward_backward_ms = median(total);
        cell.backward_tflops = tflops(cell.backward_ms, AttentionPass::Backward);
        cell.forward_backward_tflops = tflops(cell.forward_backward_ms, AttentionPass::ForwardBackward);
    }
}

std::string fmtBytes(int64_t b) {
    if (b <= 0) return "-";
    if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / 1073741824.0);
    return fmt::format("{:.1f} MiB", b / 1048576.0);
}

}  // namespace

std::string_view toString(AttentionImpl i) {
    for (const auto& n : kImplNames)
        if (n.impl == i) return n.name;
    return "?";
}

std::optional<AttentionImpl> parseAttentionImpl(std::string_view s) {
    for (const auto& n : kImplNames)
        if (n.name == s) return n.impl;
    return std::nullopt;
}

const std::vector<AttentionImpl>& allAttentionImpls() {
    static const std::vector<AttentionImpl> all = [] {
        std::vector<AttentionImpl> v;
        for (const auto& n : kImplNames) v.push_back(n.impl);
        return v;
    }();
    return all;
}

std::string_view toString(AttentionPass p) {
    switch (p) {
        case AttentionPass::Forward: return "forward";
        case AttentionPass::Backward: return "backward";
        case AttentionPass::ForwardBackward: return "forward-backward";
    }
    return "?";
}

std::optional<AttentionPass> parseAttentionPass(std::string_view s) {
    for (auto p : {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward})
        if (toString(p) == s) return p;
    return std::nullopt;
}

std::string_view toString(CellStatus s) {
    switch (s) {
        case CellStatus::Ok: return "ok";
        case CellStatus::OOM: return "OOM";
        case CellStatus::Failed: return "failed";
        case CellStatus::Unsupported: return "unsupported";
        case CellStatus::Cancelled: return "cancelled";
    }
    return "?";
}

std::optional<AttentionBenchSpec> attentionPreset(std::string_view name) {
    AttentionBenchSpec s;
    if (name == "a") {
        s.impls = {AttentionImpl::Naive, AttentionImpl::Tiled, AttentionImpl::Sdpa, AttentionImpl::Flash};
        s.seq_lens = {256, 1024, 4096, 8192, 16384};
        s.head_dims = {16, 32, 64, 128};
        s.dtypes = {Precision::FP32};
        s.causal = {false};
        s.batches = {8};
        s.heads = {1};
        s.passes = {AttentionPass::Forward, AttentionPass::Backward};
        s.warmup = 2;
        s.steps = 10;
        return s;
    }
    if (name == "b") {
        s.impls = {AttentionImpl::Naive, AttentionImpl::SdpaFlash, AttentionImpl::SdpaCudnn, AttentionImpl::Flash};
        s.seq_lens = {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
        s.head_dims = {16, 32, 64, 128};
        s.dtypes = {Precision::BF16, Precision::FP32};
        s.causal = {true};
        s.batches = {1};
        s.heads = {1};
        s.passes = {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward};
        s.warmup = 2;
        s.steps = 5;
        return s;
    }
    return std::nullopt;
}

std::vector<std::string> validateAttentionSpec(const AttentionBenchSpec& s) {
    std::vector<std::string> e;
    auto positive = [&](const std::vector<int64_t>& v, const char* what) {
        if (v.empty()) e.push_back(fmt::format("no {} given", what));
        for (int64_t x : v)
            if (x < 1) e.push_back(fmt::format("{} {} must be at least 1", what, x));
    };
    positive(s.seq_lens, "sequence length");
    positive(s.head_dims, "head dim");
    positive(s.batches, "batch size");
    positive(s.heads, "head count");
    if (s.impls.empty()) e.push_back("no implementation given");
    if (s.dtypes.empty()) e.push_back("no dtype given");
    if (s.causal.empty()) e.push_back("no causal setting given");
    if (s.passes.empty()) e.push_back("no pass given");
    if (s.warmup < 0) e.push_back(fmt::format("warm-up {} must be 0 or more", s.warmup));
    if (s.steps < 1) e.push_back(fmt::format("steps {} must be at least 1", s.steps));
    if (s.device != "cpu" && s.device != "cuda" && s.device.rfind("cuda:", 0) != 0)
        e.push_back(fmt::format("device '{}' is not cpu, cuda or cuda:N", s.device));
    return e;
}

double attentionFlops(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim, bool causal, AttentionPass pass) {
    double f = 4.0 * batch * heads * static_cast<double>(seq) * seq * head_dim;
    if (causal) f /= 2;
    switch (pass) {
        case AttentionPass::Forward: return f;
        case AttentionPass::Backward: return 2.5 * f;
        case AttentionPass::ForwardBackward: return 3.5 * f;
    }
    return f;
}

AttentionBenchResult runAttentionBench(const AttentionBenchSpec& spec, AttentionObserver& obs, const CancelToken& cancel) {
    if (const auto errors = validateAttentionSpec(spec); !errors.empty()) throw std::invalid_argument(errors.front());
    AttentionBenchResult result;
    result.environment = currentEnvironment(spec.device);
    c10::Device device(spec.device);
    if (device.is_cuda() && !device.has_index()) device = c10::Device(c10::kCUDA, 0);  // "cuda" = the first GPU
    const int count = static_cast<int>(spec.batches.size() * spec.heads.size() * spec.dtypes.size() * spec.causal.size() *
                                       spec.head_dims.size() * spec.seq_lens.size() * spec.impls.size());
    int index = 0, problem = 0;
    for (int64_t batch : spec.batches)
        for (int64_t heads : spec.heads)
            for (Precision dtype : spec.dtypes)
                for (bool causal : spec.causal)
                    for (int64_t d : spec.head_dims)
                        for (int64_t seq : spec.seq_lens) {
                            ++problem;
                            std::optional<Problem> prob;
                            std::string input_error;
                            bool input_oom = false;
                            try {
                                at::manual_seed(spec.seed + static_cast<uint64_t>(problem));
                                const auto opts = at::TensorOptions().device(device).dtype(scalarType(dtype));
                                Problem p;
                                p.q = at::randn({batch, heads, seq, d}, opts);
                                p.k = at::randn({batch, heads, seq, d}, opts);
                                p.v = at::randn({batch, heads, seq, d}, opts);
                                p.dout = at::randn({batch, heads, seq, d}, opts);
                                p.bidx = uniqueIndex(batch, device);
                                p.hidx = uniqueIndex(heads, device);
                                prob = std::move(p);
                            } catch (const c10::OutOfMemoryError& e) {
                                input_oom = true;
                                input_error = "inputs: " + firstLine(e.what());
                            } catch (const std::exception& e) {
                                input_error = "inputs: " + firstLine(e.what());
                            }
                            for (AttentionImpl impl : spec.impls) {
                                AttentionCell cell;
                                cell.impl = impl, cell.batch = batch, cell.heads = heads, cell.seq = seq;
                                cell.head_dim = d, cell.dtype = dtype, cell.causal = causal;
                                if (cancel.cancelled()) {
                                    result.cancelled = true;
                                    return result;
                                }
                                obs.cellStarted(index, count, cell);
                                if (!prob) {
                                    cell.status = input_oom ? CellStatus::OOM : CellStatus::Failed;
                                    cell.error = input_error;
                                } else {
                                    try {
                                        measure(cell, spec, *prob, device, cancel);
                                    } catch (const c10::OutOfMemoryError& e) {
                                        cell.status = CellStatus::OOM;
                                        cell.error = firstLine(e.what());
                                    } catch (const std::exception& e) {
                                        const std::string msg = firstLine(e.what());
                                        cell.status = isUnsupported(msg) ? CellStatus::Unsupported : CellStatus::Failed;
                                        cell.error = msg;
                                    }
                                    if (cell.status != CellStatus::Ok) releaseCachedMemory(device);
                                }
                                obs.cellFinished(index, count, cell);
                                result.cells.push_back(cell);
                                ++index;
                                if (cell.status == CellStatus::Cancelled) {
                                    result.cancelled = true;
                                    return result;
                                }
                            }
                            prob.reset();
                            releaseCachedMemory(device);
                        }
    return result;
}

std::string attentionMarkdown(const std::vector<AttentionCell>& cells, const std::vector<AttentionPass>& passes) {
    auto has = [&](AttentionPass p) { return std::find(passes.begin(), passes.end(), p) != passes.end(); };
    std::string out = "| impl | dtype | causal | b×h | d | seq |";
    std::string rule = "|---|---|---|---|---|---:|";
    for (auto p : {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward})
        if (has(p)) {
            out += fmt::format(" {} ms | TFLOP/s |", toString(p));
            rule += "---:|---:|";
        }
    out += " mem before bwd | peak mem | check |\n";
    rule += "---:|---:|---|\n";
    out += rule;
    for (const auto& c : cells) {
        out += fmt::format("| {} | {} | {} | {}×{} | {} | {} |", toString(c.impl), toString(c.dtype), c.causal ? "yes" : "no",
                           c.batch, c.heads, c.head_dim, c.seq);
        const bool ok = c.status == CellStatus::Ok;
        const std::string mark = ok ? "" : std::string(toString(c.status));
        auto col = [&](double ms, double tf) {
            out += ok ? fmt::format(" {:.3f} | {:.1f} |", ms, tf) : fmt::format(" {} | |", mark);
        };
        if (has(AttentionPass::Forward)) col(c.forward_ms, c.forward_tflops);
        if (has(AttentionPass::Backward)) col(c.backward_ms, c.backward_tflops);
        if (has(AttentionPass::ForwardBackward)) col(c.forward_backward_ms, c.forward_backward_tflops);
        std::string check = c.err_out < 0 ? "-" : fmt::format("{:.1e}/{:.1e}", c.err_out, c.err_grad);
        if (!ok) check = c.error.substr(0, 80);
        out += fmt::format(" {} | {} | {} |\n", ok ? fmtBytes(c.memory_before_backward) : "",
                           ok ? fmtBytes(c.peak_memory) : "", check);
    }
    return out;
}

std::string attentionCsvHeader() {
    return "impl,dtype,causal,batch,heads,head_dim,seq,status,forward_ms,backward_ms,forward_backward_ms,"
           "forward_tflops,backward_tflops,forward_backward_tflops,memory_before_backward,peak_memory,err_out,"
           "err_grad,tolerance,error";
}

std::string attentionCsvRow(const AttentionCell& c) {
    std::string err = c.error;
    std::replace(err.begin(), err.end(), '"', '\'');
    return fmt::format("{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.2f},{:.2f},{:.2f},{},{},{:.3e},{:.3e},{:.0e},\"{}\"",
                       toString(c.impl), toString(c.dtype), c.causal ? 1 : 0, c.batch, c.heads, c.head_dim, c.seq,
                       toString(c.status), c.forward_ms, c.backward_ms, c.forward_backward_ms, c.forward_tflops,
                       c.backward_tflops, c.forward_backward_tflops, c.memory_before_backward, c.peak_memory, c.err_out,
                       c.err_grad, c.tolerance, err);
}

std::string attentionJsonLine(const AttentionCell& c) { return toJson(c).dump(); }

}  // namespace ts
