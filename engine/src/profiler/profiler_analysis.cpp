// Attribution of ops and kernels to phases and ranges, categories, and the tables computed
// from an attributed trace. Torch-free, so it is tested on synthetic events.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <unordered_map>

#include "core/json.h"
#include "profiler/profiler.h"

namespace ts {

namespace {
// The step's three ranges (TrainingStep's names); whatever else is outside them.
std::optional<Phase> phaseOfRange(std::string_view name) {
    const auto p = parsePhase(name);
    return p && *p != Phase::Other ? p : std::nullopt;
}
}  // namespace

std::vector<std::string> validateProfile(const ProfileSpec& spec) {
    PointConfig point = spec.bench;
    point.steps = 1;  // the profile runs profile_steps instead
    std::vector<std::string> problems = validatePoint(point);
    // TrainScope's compiled step is CUDA graphs, captured in the first warm-up step under the
    // profiler so that the replays' kernels can be named (See Note [a graph's kernels named by
    // its capture]).
    if (point.exec == ExecMode::Compiled && point.source == Source::TrainScope &&
        spec.bench.warmup < 1)
        problems.push_back(
            "compiled mode captures its CUDA graphs in the first warm-up step, which the profiler "
            "records to name the replays' kernels: give at least one warm-up step");
    if (spec.profile_steps < 1 || spec.profile_steps > kMaxProfileSteps)
        problems.push_back(fmt::format("profile steps must be between 1 and {}, not {}",
                                       kMaxProfileSteps, spec.profile_steps));
    return problems;
}

double matmulFlops(std::string_view op, const std::vector<std::vector<int64_t>>& shapes) {
    // Which inputs are the two factors: mm(a, b), bmm(a, b); addmm(c, a, b), baddbmm(c, a, b).
    size_t first;
    bool batched;
    if (op == "aten::mm")
        first = 0, batched = false;
    else if (op == "aten::addmm")
        first = 1, batched = false;
    else if (op == "aten::bmm")
        first = 0, batched = true;
    else if (op == "aten::baddbmm")
        first = 1, batched = true;
    else
        return 0;
    if (shapes.size() < first + 2) return 0;
    const auto& a = shapes[first];
    const auto& b = shapes[first + 1];
    const size_t rank = batched ? 3 : 2;
    if (a.size() != rank || b.size() != rank) return 0;
    const size_t m = rank - 2;  // index of M in a, of K in b
    if (a[m + 1] != b[m]) return 0;
    const double batch = batched ? static_cast<double>(a[0]) : 1.0;
    return 2.0 * batch * static_cast<double>(a[m]) * static_cast<double>(a[m + 1]) *
           static_cast<double>(b[m + 1]);
}

namespace {

std::string shapesText(const std::vector<std::vector<int64_t>>& shapes) {
    if (shapes.empty()) return {};
    std::string out = "[";
    for (size_t i = 0; i < shapes.size(); ++i) {
        if (i) out += ", ";
        out += "[";
        for (size_t j = 0; j < shapes[i].size(); ++j)
            out += (j ? ", " : "") + std::to_string(shapes[i][j]);
        out += "]";
    }
    return out + "]";
}

struct Node {
    size_t event;                // index into trace.cpu
    long parent = -1;            // index into nodes
    std::optional<Phase> phase;  // from a phase range on the own thread
    std::string path;            // model ranges on the own thread
    int64_t children_ns = 0;
};

}  // namespace

AttributedTrace attribute(const RawTrace& trace) {
    const auto& cpu = trace.cpu;
    // Events by thread, outer before inner: start ascending, then end descending.
    std::vector<size_t> order(cpu.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const auto &a = cpu[x], &b = cpu[y];
        if (a.thread != b.thread) return a.thread < b.thread;
        if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
        if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
        return a.range && !b.range;  // a range around an op of the same extent holds it
    });
    std::vector<Node> nodes(cpu.size());
    std::vector<long> node_of(cpu.size());
    std::vector<long> stack;
    for (size_t n = 0; n < order.size(); ++n) {
        const auto& e = cpu[order[n]];
        Node& node = nodes[n];
        node.event = order[n];
        node_of[order[n]] = static_cast<long>(n);
        if (n > 0 && cpu[order[n - 1]].thread != e.thread) stack.clear();
        while (!stack.empty()) {
            const auto& top = cpu[nodes[stack.back()].event];
            if (top.start_ns <= e.start_ns && e.end_ns <= top.end_ns) break;
            stack.pop_back();
        }
        if (!stack.empty()) {
            const Node& p = nodes[stack.back()];
            node.parent = stack.back();
            node.phase = p.phase;
            node.path = p.path;
            nodes[stack.back()].children_ns += e.end_ns - e.start_ns;
        }
        if (e.range) {
            if (auto ph = phaseOfRange(e.name))
                node.phase = ph;
            else
                node.path = node.path.empty() ? e.name : node.path + "/" + e.name;
        }
        stack.push_back(static_cast<long>(n));
    }

    // Phase ranges of every thread, for ops on threads that have none (autograd's).
    struct Span {
        int64_t start, end;
        Phase phase;
    };
    std::vector<Span> spans;
    for (const auto& e : cpu)
        if (e.range)
            if (auto ph = phaseOfRange(e.name)) spans.push_back({e.start_ns, e.end_ns, *ph});
    auto phaseAt = [&](int64_t t) {
        const Span* best = nullptr;
        for (const auto& s : spans)
            if (s.start <= t && t <= s.end && (!best || s.end - s.start < best->end - best->start))
                best = &s;
        return best ? best->phase : Phase::Other;
    };

    // Forward ops' range by (thread, sequence number), for their backward nodes.
    std::map<std::pair<uint64_t, int64_t>, std::string> forward_path;
    for (const auto& node : nodes) {
        const auto& e = cpu[node.event];
        if (!e.range && e.sequence_nr >= 0 && e.fwd_thread == 0 && !node.path.empty())
            forward_path.emplace(std::make_pair(e.thread, e.sequence_nr), node.path);
    }

    AttributedTrace out;
    std::vector<long> op_index(nodes.size(), -1);
    std::vector<std::string> resolved_path(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n) {
        const Node& node = nodes[n];
        const auto& e = cpu[node.event];
        std::string path = node.path;
        if (path.empty()) {
            // A backward node names its forward op; its children inherit what it found.
            if (e.sequence_nr >= 0 && e.fwd_thread != 0) {
                if (auto it = forward_path.find({e.fwd_thread, e.sequence_nr});
                    it != forward_path.end())
                    path = it->second;
            } else if (node.parent >= 0) {
                path = resolved_path[node.parent];
            }
        }
        resolved_path[n] = path;
        if (e.range) {
            out.ranges.push_back({e.name, e.thread, e.start_ns, e.end_ns});
            continue;
        }
        ProfiledOp op;
        op.name = e.name;
        op.thread = e.thread;
        op.start_ns = e.start_ns;
        op.end_ns = e.end_ns;
        op.self_ns = std::max<int64_t>(0, e.end_ns - e.start_ns - node.children_ns);
        op.phase = node.phase ? *node.phase : phaseAt(e.start_ns);
        op.range = path;
        op.flops = matmulFlops(e.name, e.shapes);
        op.shapes = shapesText(e.shapes);
        bool inside_op = false;
        for (long p = node.parent; p >= 0 && !inside_op; p = nodes[p].parent)
            inside_op = !cpu[nodes[p].event].range;
        op.top_level = !inside_op;
        op_index[n] = static_cast<long>(out.ops.size());
        out.ops.push_back(std::move(op));
    }

    std::unordered_map<uint64_t, size_t> launcher, runtime;  // correlation → node
    for (size_t n = 0; n < nodes.size(); ++n) {
        const auto& e = cpu[nodes[n].event];
        if (!e.range && e.correlation != 0) launcher.emplace(e.correlation, n);
        if (e.runtime_correlation != 0) runtime.emplace(e.runtime_correlation, n);
    }
    for (const auto& k : trace.kernels) {
        ProfiledKernel pk;
        pk.name = k.name;
        pk.start_ns = k.start_ns;
        pk.duration_ns = k.duration_ns;
        pk.stream = k.stream;
        long from = -1;
        if (auto it = launcher.find(k.launcher); k.launcher != 0 && it != launcher.end())
            from = static_cast<long>(it->second);
        else if (auto rt = runtime.find(k.correlation); k.correlation != 0 && rt != runtime.end())
            from = static_cast<long>(rt->second);
        if (from >= 0) {
            const ProfiledOp& op = out.ops[op_index[from]];
            pk.phase = op.phase;
            pk.range = op.range;
            // The launching op: the runtime call's innermost op when it has one.
            pk.op = op.name;
            if (cpu[nodes[from].event].runtime_correlation != 0)
                for (long p = nodes[from].parent; p >= 0; p = nodes[p].parent)
                    if (op_index[p] >= 0) {
                        pk.op = out.ops[op_index[p]].name;
                        break;
                    }
            // The launching op and every op around it spent this device time.
            for (long p = from; p >= 0; p = nodes[p].parent)
                if (op_index[p] >= 0) out.ops[op_index[p]].device_ns += k.duration_ns;
        }
        out.kernels.push_back(std::move(pk));
    }
    std::sort(out.kernels.begin(), out.kernels.end(),
              [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    return out;
}

// ---- A graph's kernels, named by its capture (See Note [a graph's kernels named by its capture])
// ----

namespace {
bool makesGraphNode(std::string_view call) {
    static const std::set<std::string_view> calls = {
        "cudaLaunchKernel",  "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
        "cuLaunchKernel",    "cuLaunchKernelEx",    "cudaMemsetAsync",
        "cudaMemset2DAsync", "cudaMemcpyAsync",     "cudaMemcpy2DAsync",
        "cuMemsetD8Async",   "cuMemsetD32Async",    "cuMemcpyAsync",
        "cuMemcpyDtoDAsync", "cuMemcpyHtoDAsync",   "cuMemcpyDtoHAsync"};
    return calls.count(call) > 0;
}
constexpr std::string_view kGraphLaunch = "cudaGraphLaunch";
}  // namespace

std::vector<ProfiledKernel> graphCaptureLaunches(const RawTrace& capture) {
    RawTrace raw;
    raw.cpu = capture.cpu;
    for (const auto& e : capture.cpu)
        if (e.runtime_correlation != 0 && makesGraphNode(e.name)) {
            KernelEvent k;
            k.name = e.name;
            k.start_ns = e.start_ns;
            k.correlation = e.runtime_correlation;
            raw.kernels.push_back(std::move(k));
        }
    return attribute(raw).kernels;  // by start
}

GraphNaming nameGraphKernels(AttributedTrace& replay, const std::vector<ProfiledKernel>& launches) {
    GraphNaming g;
    std::map<Phase, std::vector<const ProfiledKernel*>> captured;
    for (const auto& l : launches) captured[l.phase].push_back(&l);
    std::map<Phase, std::vector<ProfiledKernel*>> replayed;  // by start: replay.kernels is
    for (auto& k : replay.kernels)
        if (k.op == kGraphLaunch) replayed[k.phase].push_back(&k);
    for (auto& [phase, kernels] : replayed) {
        g.replayed += static_cast<int64_t>(kernels.size());
        const auto it = captured.find(phase);
        const size_t n = it == captured.end() ? 0 : it->second.size();
        if (n == 0 || kernels.size() % n != 0) {
            g.problems.push_back(fmt::format(
                "{}: {} kernels replayed, {} calls captured (not a whole number of replays); "
                "its kernels keep the phase alone",
                toString(phase), kernels.size(), n));
            continue;
        }
        // A GEMM kernel comes from a GEMM op, or the order is not the capture's.
        size_t gemms = 0, agree = 0;
        for (size_t i = 0; i < kernels.size(); ++i)
            if (categorize(kernels[i]->name) == Category::Gemm) {
                ++gemms;
                agree += categorize(it->second[i % n]->op) == Category::Gemm;
            }
        if (gemms > 0 && agree * 10 < gemms * 9) {
            g.problems.push_back(fmt::format(
                "{}: only {} of {} GEMM kernels would be named by a GEMM op; its kernels keep "
                "the phase alone",
                toString(phase), agree, gemms));
            continue;
        }
        for (size_t i = 0; i < kernels.size(); ++i) {
            kernels[i]->range = it->second[i % n]->range;
            kernels[i]->op = it->second[i % n]->op;
        }
        g.named += static_cast<int64_t>(kernels.size());
    }
    return g;
}

// ---- Categories ----

namespace {
constexpr std::array<std::string_view, 8> kCategoryNames = {
    "GEMM",      "attention",     "element-wise", "normalisation", "reduction/softmax",
    "optimizer", "memcpy/memset", "other"};

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool hasAny(const std::string& s, std::initializer_list<std::string_view> words) {
    for (auto w : words)
        if (s.find(w) != std::string::npos) return true;
    return false;
}
}  // namespace

std::string_view toString(Category c) { return kCategoryNames[static_cast<size_t>(c)]; }

const std::vector<Category>& allCategories() {
    static const std::vector<Category> all = {Category::Gemm,
                                              Category::Attention,
                                              Category::Elementwise,
                                              Category::Normalization,
                                              Category::ReductionSoftmax,
                                              Category::Optimizer,
                                              Category::Memory,
                                              Category::Other};
    return all;
}

// First match wins, in this order: copies, the optimizer (its fused kernels multiply and
// add), attention (fused kernels hold GEMMs and a softmax), GEMMs, norms, reductions, then
// element-wise kernels and ops.
Category categorize(std::string_view name) {
    const std::string s = lower(name);
    if (hasAny(s, {"memcpy", "memset", "aten::copy_", "aten::to", "aten::_to_copy", "aten::fill_",
                   "aten::zero_"}))
        return Category::Memory;
    if (hasAny(s, {"adam", "multi_tensor_apply", "foreach", "optimizer"}))
        return Category::Optimizer;
    if (hasAny(s, {"flash", "fmha", "attention", "sdpa", "cudnn_generated_fort_native_sdpa"}))
        return Category::Attention;
    if (hasAny(s, {"gemm", "cutlass", "cublas", "nvjet", "xmma", "aten::mm", "aten::addmm",
                   "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "mkldnn_matmul",
                   "dot_kernel", "mmbackward"}))
        return Category::Gemm;
    if (hasAny(s, {"norm"})) return Category::Normalization;
    if (hasAny(s, {"softmax", "reduce", "aten::sum", "aten::mean", "aten::max", "aten::min",
                   "nll_loss", "cross_entropy", "aten::amax", "logsumexp"}))
        return Category::ReductionSoftmax;
    if (hasAny(s, {"elementwise", "vectorized", "aten::", "pointwise", "silu", "mul", "add", "cat",
                   "copy", "index", "embedding", "where", "masked_fill", "triu"}))
        return Category::Elementwise;
    return Category::Other;
}

// ---- Tables ----

bool matches(const EventFilter& f, Phase phase, const std::string& range) {
    if (f.phase && *f.phase != phase) return false;
    if (f.range.empty()) return true;
    size_t begin = 0;
    while (begin <= range.size()) {
        size_t end = range.find('/', begin);
        if (end == std::string::npos) end = range.size();
        if (range.compare(begin, end - begin, f.range) == 0) return true;
        begin = end + 1;
    }
    return false;
}

std::vector<KernelRow> kernelTable(const std::vector<ProfiledKernel>& kernels,
                                   const EventFilter& filter) {
    std::map<std::string, std::vector<double>> by_name;
    double total = 0;
    for (const auto& k : kernels) {
        if (!matches(filter, k.phase, k.range)) continue;
        const double us = static_cast<double>(k.duration_ns) / 1000.0;
        by_name[k.name].push_back(us);
        total += us;
    }
    std::vector<KernelRow> rows;
    for (auto& [name, times] : by_name) {
        const Stats s = computeStats(times);
        KernelRow r;
        r.name = name;
        r.category = categorize(name);
        r.instances = static_cast<int64_t>(times.size());
        r.total_us = std::accumulate(times.begin(), times.end(), 0.0);
        r.percent = total > 0 ? 100.0 * r.total_us / total : 0;
        r.avg_us = s.mean;
        r.median_us = s.median;
        r.min_us = s.min;
        r.max_us = s.max;
        r.std_us = s.std;
        rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.total_us > b.total_us; });
    return rows;
}

std::vector<OpRow> opTable(const std::vector<ProfiledOp>& ops, const EventFilter& filter,
                           bool gpu) {
    std::map<std::string, OpRow> by_name;
    for (const auto& op : ops) {
        if (!matches(filter, op.phase, op.range)) continue;
        OpRow& r = by_name[op.name];
        if (r.calls == 0) {
            r.name = op.name;
            r.shapes = op.shapes;
        }
        ++r.calls;
        r.cpu_self_us += static_cast<double>(op.self_ns) / 1000.0;
        r.cpu_total_us += static_cast<double>(op.end_ns - op.start_ns) / 1000.0;
        r.device_us += static_cast<double>(op.device_ns) / 1000.0;
        r.flops += op.flops;
    }
    std::vector<OpRow> rows;
    for (auto& [name, r] : by_name) {
        const double us = gpu ? r.device_us : r.cpu_total_us;
        r.tflops = r.flops > 0 && us > 0 ? r.flops / (us * 1e-6) / 1e12 : 0;
        rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        if (a.device_us != b.device_us) return a.device_us > b.device_us;
        return a.cpu_self_us > b.cpu_self_us;
    });
    return rows;
}

std::vector<CategoryRow> categoryRollup(const ProfileResult& r) {
    std::map<std::pair<Phase, Category>, double> time;
    std::map<Phase, double> phase_total;
    auto add = [&](Phase p, const std::string& name, double us) {
        time[{p, categorize(name)}] += us;
        phase_total[p] += us;
    };
    if (r.gpu)
        for (const auto& k : r.trace.kernels)
            add(k.phase, k.name, static_cast<double>(k.duration_ns) / 1000.0);
    else
        for (const auto& op : r.trace.ops)
            add(op.phase, op.name, static_cast<double>(op.self_ns) / 1000.0);
    std::vector<CategoryRow> rows;
    for (Phase p : allPhases())
        for (Category c : allCategories())
            if (auto it = time.find({p, c}); it != time.end())
                rows.push_back(
                    {p, c, it->second, phase_total[p] > 0 ? it->second / phase_total[p] : 0});
    return rows;
}

std::vector<PhaseTime> phaseTimes(const ProfileResult& r) {
    std::vector<PhaseTime> rows;
    for (Phase p : allPhases()) rows.push_back({p, 0, 0, 0});
    auto at = [&](Phase p) -> PhaseTime& { return rows[static_cast<size_t>(p)]; };
    if (r.gpu) {
        for (const auto& k : r.trace.kernels) {
            at(k.phase).profiled_us += static_cast<double>(k.duration_ns) / 1000.0;
            ++at(k.phase).kernels;
        }
    } else {
        for (const auto& op : r.trace.ops)
            if (op.top_level)
                at(op.phase).profiled_us += static_cast<double>(op.end_ns - op.start_ns) / 1000.0;
    }
    for (const auto& s : r.steps) {
        if (s.warmup) continue;
        at(Phase::Forward).measured_us += s.forward_ms * 1000.0;
        at(Phase::Backward).measured_us += s.backward_ms * 1000.0;
        at(Phase::Optimizer).measured_us += s.optimizer_ms * 1000.0;
    }
    return rows;
}

std::string chromeTraceJson(const ProfileResult& r) {
    int64_t t0 = INT64_MAX;
    for (const auto& e : r.trace.ranges) t0 = std::min(t0, e.start_ns);
    for (const auto& e : r.trace.ops) t0 = std::min(t0, e.start_ns);
    for (const auto& e : r.trace.kernels) t0 = std::min(t0, e.start_ns);
    if (t0 == INT64_MAX) t0 = 0;
    auto us = [t0](int64_t ns) { return static_cast<double>(ns - t0) / 1000.0; };
    nlohmann::json events = nlohmann::json::array();
    constexpr int kCpuPid = 0, kGpuPid = 1;
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", kCpuPid}, {"args", {{"name", "CPU"}}}});
    if (r.gpu)
        events.push_back(
            {{"ph", "M"}, {"name", "process_name"}, {"pid", kGpuPid}, {"args", {{"name", "GPU"}}}});
    for (const auto& e : r.trace.ranges)
        events.push_back({{"ph", "X"},
                          {"cat", "range"},
                          {"name", e.name},
                          {"pid", kCpuPid},
                          {"tid", e.thread},
                          {"ts", us(e.start_ns)},
                          {"dur", static_cast<double>(e.end_ns - e.start_ns) / 1000.0}});
    for (const auto& e : r.trace.ops) {
        nlohmann::json args = {{"phase", toString(e.phase)}, {"range", e.range}};
        if (!e.shapes.empty()) args["shapes"] = e.shapes;
        if (e.flops > 0) args["flops"] = e.flops;
        events.push_back({{"ph", "X"},
                          {"cat", "op"},
                          {"name", e.name},
                          {"pid", kCpuPid},
                          {"tid", e.thread},
                          {"ts", us(e.start_ns)},
                          {"dur", static_cast<double>(e.end_ns - e.start_ns) / 1000.0},
                          {"args", args}});
    }
    std::vector<int64_t> streams;
    for (const auto& k : r.trace.kernels)
        if (std::find(streams.begin(), streams.end(), k.stream) == streams.end())
            streams.push_back(k.stream);
    for (int64_t s : streams)
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", kGpuPid},
                          {"tid", s},
                          {"args", {{"name", fmt::format("stream {}", s)}}}});
    for (const auto& k : r.trace.kernels)
        events.push_back(
            {{"ph", "X"},
             {"cat", "kernel"},
             {"name", k.name},
             {"pid", kGpuPid},
             {"tid", k.stream},
             {"ts", us(k.start_ns)},
             {"dur", static_cast<double>(k.duration_ns) / 1000.0},
             {"args", {{"phase", toString(k.phase)}, {"range", k.range}, {"op", k.op}}}});
    return dumpJson(nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}});
}

}  // namespace ts
