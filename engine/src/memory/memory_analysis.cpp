// The memory lab's torch-free half: names, the spec's checks, the trace's analysis (timeline,
// categories, peak), the analytic model and the frontier's bisection.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "memory/memory.h"

namespace ts {

namespace {
template <typename E, size_t N>
std::string_view nameIn(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
    for (const auto& [v, n] : table)
        if (v == e) return n;
    return "?";
}
template <typename E, size_t N>
std::optional<E> lookupIn(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view s) {
    for (const auto& [v, n] : table)
        if (n == s) return v;
    return std::nullopt;
}

constexpr std::array<std::pair<FrontierAxis, std::string_view>, 3> kAxes{
    {{FrontierAxis::None, "none"},
     {FrontierAxis::Context, "context"},
     {FrontierAxis::Batch, "batch"}}};
constexpr std::array<std::pair<AllocAction, std::string_view>, 6> kActions{
    {{AllocAction::Alloc, "alloc"},
     {AllocAction::FreeRequested, "free_requested"},
     {AllocAction::FreeCompleted, "free_completed"},
     {AllocAction::SegmentAlloc, "segment_alloc"},
     {AllocAction::SegmentFree, "segment_free"},
     {AllocAction::Oom, "oom"}}};
constexpr std::array<std::pair<MemoryCategory, std::string_view>, kMemoryCategories> kCategories{
    {{MemoryCategory::Parameters, "parameters"},
     {MemoryCategory::Gradients, "gradients"},
     {MemoryCategory::OptimizerState, "optimizer state"},
     {MemoryCategory::Activations, "activations"},
     {MemoryCategory::Temporaries, "temporaries"},
     {MemoryCategory::Other, "other"}}};
}  // namespace

std::string_view toString(FrontierAxis a) { return nameIn(kAxes, a); }
std::optional<FrontierAxis> parseFrontierAxis(std::string_view s) { return lookupIn(kAxes, s); }
std::string_view toString(AllocAction a) { return nameIn(kActions, a); }
std::optional<AllocAction> parseAllocAction(std::string_view s) { return lookupIn(kActions, s); }
std::string_view toString(MemoryCategory c) { return nameIn(kCategories, c); }
const std::vector<MemoryCategory>& allMemoryCategories() {
    static const std::vector<MemoryCategory> all = [] {
        std::vector<MemoryCategory> v;
        for (const auto& [c, n] : kCategories) v.push_back(c);
        return v;
    }();
    return all;
}

std::string allocationSite(const RawMemoryTrace& t, int32_t stack) {
    if (stack < 0 || static_cast<size_t>(stack) >= t.stacks.size() || t.stacks[stack].empty())
        return {};
    const StackFrame& f = t.stacks[stack].front();
    if (f.filename.empty()) return f.name;
    // The file's folder and name: "cs336_basics/model.py" tells it apart without the whole
    // path (the stack and the snapshot keep that).
    std::string file = f.filename;
    if (const size_t last = file.rfind('/'); last != std::string::npos && last > 0)
        if (const size_t prev = file.rfind('/', last - 1); prev != std::string::npos)
            file = file.substr(prev + 1);
    return f.name.empty() ? fmt::format("{}:{}", file, f.line)
                          : fmt::format("{}:{} ({})", file, f.line, f.name);
}

std::vector<std::string> validateMemory(const MemorySpec& spec) {
    std::vector<std::string> problems = validatePoint(spec.bench);
    if (spec.bench.exec != ExecMode::Eager)
        problems.push_back(fmt::format(
            "the memory lab records eager steps, not {} (the benchmark times compiled ones)",
            toString(spec.bench.exec)));
    if (spec.bench.source == Source::Python && spec.record_stacks)
        problems.push_back(
            "--stacks records TrainScope's C++ stacks; your code's allocations "
            "always carry your Python file and line");
    if (spec.record_steps < 1 || spec.record_steps > kMaxRecordSteps)
        problems.push_back(fmt::format("recorded steps must be 1 to {}, not {}", kMaxRecordSteps,
                                       spec.record_steps));
    if (spec.frontier_max < 0)
        problems.push_back(fmt::format("the frontier's upper end must not be negative, not {}",
                                       spec.frontier_max));
    if (spec.frontier == FrontierAxis::Context && spec.frontier_max > 0 && spec.frontier_max < 16)
        problems.push_back(fmt::format(
            "the context frontier's upper end must be at least 16, not {}", spec.frontier_max));
    return problems;
}

// ---- Categories ----

namespace {
size_t catIndex(MemoryCategory c) { return static_cast<size_t>(c); }

// Known storage by address, for the lookups of every allocation.
class KnownIndex {
public:
    explicit KnownIndex(const std::vector<KnownStorage>& known) {
        for (const auto& k : known) by_addr_.emplace(k.addr, &k);
    }
    // The category of known storage inside [addr, addr + size) for a block of `step`.
    std::optional<MemoryCategory> find(uint64_t addr, int64_t size, int step) const {
        for (auto it = by_addr_.lower_bound(addr);
             it != by_addr_.end() && it->first < addr + static_cast<uint64_t>(size); ++it) {
            const KnownStorage& k = *it->second;
            if (k.category != MemoryCategory::Gradients || k.step == step) return k.category;
        }
        return std::nullopt;
    }

private:
    std::multimap<uint64_t, const KnownStorage*> by_addr_;
};

// `failure`: the trace's last event when it is an out-of-memory (a frontier probe's trace).
MemoryCategory byLifetime(const AllocEvent& a, const AllocEvent* f, const AllocEvent* failure) {
    const bool same_step = f && f->step == a.step;
    if (f && same_step && f->phase == a.phase) return MemoryCategory::Temporaries;
    if (a.phase == Phase::Forward && same_step && f->phase == Phase::Backward)
        return MemoryCategory::Activations;
    // What forward made and still held when backward ran out of memory was saved for backward.
    if (!f && failure && a.phase == Phase::Forward && failure->step == a.step &&
        failure->phase == Phase::Backward)
        return MemoryCategory::Activations;
    return MemoryCategory::Other;
}

MemoryCategory categorizeWith(const RawMemoryTrace& t, const KnownIndex& known, size_t alloc_index,
                              std::optional<size_t> free_index) {
    // What the trace itself says comes first (See Note [importing a snapshot]).
    if (alloc_index < t.given_categories.size() && t.given_categories[alloc_index] >= 0)
        return static_cast<MemoryCategory>(t.given_categories[alloc_index]);
    const AllocEvent& a = t.events.at(alloc_index);
    const AllocEvent* f = free_index ? &t.events.at(*free_index) : nullptr;
    if (auto c = known.find(a.addr, a.size, a.step)) {
        if (*c != MemoryCategory::Gradients) return *c;
        // A gradient's block is made in its step's backward and outlives that step (zeroGrad
        // drops it in the next one). The allocator reuses addresses: a block made earlier in the
        // step at the gradient's address (a forward activation, freed in backward) is not it.
        if (a.phase == Phase::Backward && (!f || f->step != a.step)) return *c;
    }
    const AllocEvent* failure =
        t.events.back().action == AllocAction::Oom ? &t.events.back() : nullptr;
    return byLifetime(a, f, failure);
}
}  // namespace

MemoryCategory categorizeAllocation(const RawMemoryTrace& t, size_t alloc_index,
                                    std::optional<size_t> free_index) {
    return categorizeWith(t, KnownIndex(t.known), alloc_index, free_index);
}

// ---- The analysis ----

MemoryAnalysis analyzeMemory(const RawMemoryTrace& t) {
    MemoryAnalysis a;
    const KnownIndex known(t.known);
    std::unordered_map<uint64_t, size_t> open;  // address → allocation
    for (const auto& b : t.initial) {
        Allocation x;
        x.initial = true;
        x.addr = b.addr;
        x.size = b.size;
        // Blocks live before recording: a gradient of the last warm-up step has step -1.
        x.category = known.find(b.addr, b.size, -1).value_or(MemoryCategory::Other);
        open[b.addr] = a.allocations.size();
        a.allocations.push_back(x);
    }
    // Pass 1: lifetimes. A free of an address we never saw allocated (before the initial
    // snapshot's view) changes nothing.
    std::vector<std::optional<size_t>> freed_alloc(t.events.size());  // free event → allocation
    for (size_t i = 0; i < t.events.size(); ++i) {
        const AllocEvent& e = t.events[i];
        if (e.action == AllocAction::Alloc) {
            Allocation x;
            x.alloc_index = i;
            x.addr = e.addr;
            x.size = e.size;
            x.phase = e.phase;
            x.step = e.step;
            x.range = e.range;
            x.op = e.op;
            x.stack = e.stack;
            open[e.addr] = a.allocations.size();
            a.allocations.push_back(x);
        } else if (e.action == AllocAction::FreeCompleted) {
            auto it = open.find(e.addr);
            if (it == open.end()) continue;
            a.allocations[it->second].free_index = i;
            freed_alloc[i] = it->second;
            open.erase(it);
        }
    }
    for (auto& x : a.allocations)
        if (!x.initial) x.category = categorizeWith(t, known, x.alloc_index, x.free_index);

    // Pass 2: the timeline.
    TimelinePoint now;
    for (const auto& x : a.allocations) {
        if (!x.initial) break;
        now.allocated += x.size;
        now.by_category[catIndex(x.category)] += x.size;
    }
    now.reserved = t.initial_reserved;
    std::vector<size_t> alloc_of(t.events.size(), SIZE_MAX);
    for (size_t k = 0; k < a.allocations.size(); ++k)
        if (!a.allocations[k].initial) alloc_of[a.allocations[k].alloc_index] = k;
    a.peak.allocated = now.allocated;
    a.peak.reserved = now.reserved;
    a.peak.by_category = now.by_category;
    bool have_peak = false;
    for (size_t i = 0; i < t.events.size(); ++i) {
        const AllocEvent& e = t.events[i];
        bool changed = true;
        switch (e.action) {
            case AllocAction::Alloc: {
                const Allocation& x = a.allocations[alloc_of[i]];
                now.allocated += x.size;
                now.by_category[catIndex(x.category)] += x.size;
                break;
            }
            case AllocAction::FreeCompleted:
                if (freed_alloc[i]) {
                    const Allocation& x = a.allocations[*freed_alloc[i]];
                    now.allocated -= x.size;
                    now.by_category[catIndex(x.category)] -= x.size;
                } else {
                    changed = false;
                }
                break;
            case AllocAction::SegmentAlloc:
                now.reserved += e.size;
                break;
            case AllocAction::SegmentFree:
                now.reserved -= e.size;
                break;
            default:
                changed = false;
        }
        if (!changed) continue;
        now.index = i;
        now.time_ns = e.time_ns;
        a.timeline.push_back(now);
        if (!have_peak || now.allocated > a.peak.allocated) {
            have_peak = true;
            a.peak.index = i;
            a.peak.time_ns = e.time_ns;
            a.peak.phase = e.phase;
            a.peak.step = e.step;
            a.peak.allocated = now.allocated;
            a.peak.reserved = now.reserved;
            a.peak.by_category = now.by_category;
        }
    }
    // What was live at the peak, largest first.
    for (size_t k = 0; k < a.allocations.size(); ++k) {
        const Allocation& x = a.allocations[k];
        const bool born = x.initial || (have_peak && x.alloc_index <= a.peak.index);
        const bool alive = !x.free_index || (have_peak && *x.free_index > a.peak.index);
        if (born && alive) a.peak.live.push_back(k);
    }
    std::stable_sort(a.peak.live.begin(), a.peak.live.end(), [&](size_t l, size_t r) {
        return a.allocations[l].size > a.allocations[r].size;
    });

    // Phase bands.
    for (size_t i = 0; i < t.events.size(); ++i) {
        const AllocEvent& e = t.events[i];
        if (!a.bands.empty() && a.bands.back().phase == e.phase && a.bands.back().step == e.step)
            a.bands.back().last = i;
        else
            a.bands.push_back({e.phase, e.step, i, i});
    }
    // The driver's samples at the first event at or after them.
    for (const auto& d : t.driver) {
        auto it = std::lower_bound(t.events.begin(), t.events.end(), d.time_ns,
                                   [](const AllocEvent& e, int64_t ns) { return e.time_ns < ns; });
        if (it == t.events.end()) {
            if (t.events.empty()) continue;
            --it;
        }
        a.driver.emplace_back(static_cast<size_t>(it - t.events.begin()), d.used_bytes);
    }
    return a;
}

std::vector<size_t> largestAllocations(const MemoryAnalysis& a, size_t count) {
    std::vector<size_t> idx;
    for (size_t k = 0; k < a.allocations.size(); ++k)
        if (!a.allocations[k].initial) idx.push_back(k);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t l, size_t r) {
        return a.allocations[l].size > a.allocations[r].size;
    });
    if (idx.size() > count) idx.resize(count);
    return idx;
}

// ---- The analytic model (see Note [memory model]) ----

int64_t parameterTensorCount(const ModelConfig& m) { return 6 * m.num_layers + 3; }

namespace {
bool quadraticAttention(AttentionImpl a) {
    return a == AttentionImpl::Naive || a == AttentionImpl::Tiled || a == AttentionImpl::SdpaMath;
}
}  // namespace

MemoryPrediction predictMemory(const PointConfig& cfg) {
    const ModelConfig& m = cfg.model;
    const int64_t B = cfg.batch_size, T = m.context_length, d = m.d_model, F = m.d_ff,
                  H = m.num_heads, V = m.vocab_size, L = m.num_layers;
    const int64_t f = 4, s = cfg.precision == Precision::FP32 ? 4 : 2;
    const int64_t P = parameterCount(m);
    const bool backward = cfg.mode != Mode::Forward;
    const bool quadratic = quadraticAttention(cfg.attention);
    MemoryPrediction p;
    p.parameters = 4 * P;
    p.gradients = backward ? 4 * P : 0;
    p.optimizer_state = cfg.mode == Mode::Train ? 8 * P + 4 * parameterTensorCount(m) : 0;
    if (backward) {
        const int64_t BTd = B * T * d, BTF = B * T * F;
        int64_t attn =
            quadratic ? B * H * T * T * f + (s != f ? B * H * T * T * s : 0) : B * H * T * f;
        p.activations_per_layer = BTd * (2 * f + 6 * s) + BTF * (2 * s + s + s) + attn;
        // The blocks' share: all their activations, or under checkpointing the segments'
        // inputs (the fp32 residual stream) and one segment recomputed at a time.
        int64_t blocks = L * p.activations_per_layer;
        if (const int64_t k = checkpointSegment(cfg.checkpoint, L); k > 0) {
            blocks = (L + k - 1) / k * BTd * f + k * p.activations_per_layer;
        } else if (cfg.checkpoint.kind == Checkpointing::Kind::Nested && L > 1) {
            const auto depth = static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(L))));
            blocks = (depth + 1) * BTd * f + p.activations_per_layer;
        }
        p.activations = blocks + B * T * d * (f + s) + B * T * V * f;
        if (s != f) p.weight_casts = 2 * (L * (4 * d * d + 3 * d * F) + V * d);
    }
    const int64_t logits = B * T * V * (s + f);
    const int64_t scores = quadratic ? B * H * T * T * (f + s) : 0;
    p.temporaries = std::max(logits, scores);
    using C = MemoryCategory;
    p.by_category[catIndex(C::Parameters)] = p.parameters;
    p.by_category[catIndex(C::Gradients)] = p.gradients;
    p.by_category[catIndex(C::OptimizerState)] = p.optimizer_state;
    p.by_category[catIndex(C::Activations)] = p.activations + p.weight_casts;
    p.by_category[catIndex(C::Temporaries)] = p.temporaries;
    for (int64_t b : p.by_category) p.peak += b;
    return p;
}

std::vector<CategoryComparison> compareWithPrediction(const MemoryResult& r,
                                                      const MemoryAnalysis& a) {
    // An imported snapshot has no model to predict from: nothing is predicted.
    const MemoryPrediction p =
        r.spec.imported.empty() ? predictMemory(r.spec.bench) : MemoryPrediction{};
    std::vector<CategoryComparison> out;
    for (MemoryCategory c : allMemoryCategories())
        out.push_back({c, a.peak.by_category[catIndex(c)], p.by_category[catIndex(c)]});
    return out;
}

std::vector<PhasePeak> phasePeaks(const RawMemoryTrace& t, const MemoryAnalysis& a) {
    std::vector<PhasePeak> out;
    for (Phase ph : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
        PhasePeak p;
        p.phase = ph;
        for (const TimelinePoint& tp : a.timeline) {
            const AllocEvent& e = t.events[tp.index];
            if (e.phase != ph || (p.present && tp.allocated <= p.allocated)) continue;
            p.present = true;
            p.step = e.step;
            p.index = tp.index;
            p.allocated = tp.allocated;
            p.by_category = tp.by_category;
        }
        out.push_back(p);
    }
    PhasePeak step;
    step.present = !a.timeline.empty();
    step.step = a.peak.step;
    step.index = a.peak.index;
    step.allocated = a.peak.allocated;
    step.by_category = a.peak.by_category;
    out.push_back(step);
    return out;
}

std::vector<PhaseComparisonRow> comparePhases(const RawMemoryTrace& ta, const MemoryAnalysis& aa,
                                              const RawMemoryTrace& tb, const MemoryAnalysis& ab) {
    const auto pa = phasePeaks(ta, aa), pb = phasePeaks(tb, ab);
    std::vector<PhaseComparisonRow> out;
    for (size_t k = 0; k < pa.size(); ++k) {
        if (!pa[k].present && !pb[k].present) continue;
        const bool both = pa[k].present && pb[k].present;
        const int64_t total = pb[k].allocated - pa[k].allocated;
        for (MemoryCategory c : allMemoryCategories()) {
            PhaseComparisonRow row{pa[k].phase,
                                   c,
                                   pa[k].present,
                                   pb[k].present,
                                   pa[k].by_category[catIndex(c)],
                                   pb[k].by_category[catIndex(c)],
                                   std::nullopt};
            if (both && total != 0)
                row.share = static_cast<double>(row.b - row.a) / static_cast<double>(total);
            out.push_back(row);
        }
        out.push_back({pa[k].phase, std::nullopt, pa[k].present, pb[k].present, pa[k].allocated,
                       pb[k].allocated, std::nullopt});
    }
    return out;
}

std::string phaseComparisonName(Phase p) {
    return p == Phase::Other ? "step (peak)" : std::string(toString(p));
}

std::optional<FailedAllocation> failedAllocation(const RawMemoryTrace& t, const MemoryAnalysis& a) {
    for (size_t i = t.events.size(); i-- > 0;) {
        const AllocEvent& e = t.events[i];
        if (e.action != AllocAction::Oom) continue;
        FailedAllocation f;
        f.index = i;
        f.requested = e.size;
        f.device_free = static_cast<int64_t>(e.addr);
        f.phase = e.phase;
        f.step = e.step;
        auto name = [&](int32_t k) {
            return k >= 0 && static_cast<size_t>(k) < t.names.size() ? t.names[k] : std::string();
        };
        f.range = name(e.range);
        f.op = name(e.op);
        // The allocator's state just before: the last timeline point at or before the oom entry.
        auto it =
            std::upper_bound(a.timeline.begin(), a.timeline.end(), i,
                             [](size_t idx, const TimelinePoint& p) { return idx < p.index; });
        if (it != a.timeline.begin()) {
            --it;
            f.allocated = it->allocated;
            f.reserved = it->reserved;
            f.by_category = it->by_category;
        } else {
            f.reserved = t.initial_reserved;
            for (const auto& x : a.allocations)
                if (x.initial) {
                    f.allocated += x.size;
                    f.by_category[catIndex(x.category)] += x.size;
                }
        }
        return f;
    }
    return std::nullopt;
}

// ---- The frontier ----

FrontierResult findFrontier(FrontierAxis axis, int64_t lo, int64_t hi, int64_t granule,
                            const std::function<FrontierProbe(int64_t)>& probe) {
    FrontierResult r;
    r.axis = axis;
    r.granule = std::max<int64_t>(granule, 1);
    r.lo = std::max<int64_t>((lo + r.granule - 1) / r.granule * r.granule, r.granule);
    r.hi = std::max(hi / r.granule * r.granule, r.lo);
    // Returns whether the search goes on: false for a failure that is not about memory.
    auto run = [&](int64_t v) -> std::optional<bool> {
        FrontierProbe p = probe(v);
        p.value = v;
        r.probes.push_back(p);
        if (p.fits) return true;
        if (p.status == Status::OOM) return false;
        return std::nullopt;
    };
    auto first = run(r.lo);
    if (!first) return r;
    if (!*first) {
        r.smallest_oom = r.lo;
        return r;
    }
    r.largest_fit = r.lo;
    if (r.hi == r.lo) return r;
    auto top = run(r.hi);
    if (!top) return r;
    if (*top) {
        r.largest_fit = r.hi;
        return r;
    }
    r.smallest_oom = r.hi;
    while (r.smallest_oom - r.largest_fit > r.granule) {
        const int64_t steps = (r.smallest_oom - r.largest_fit) / r.granule;
        const int64_t mid = r.largest_fit + (steps / 2) * r.granule;
        auto ok = run(mid);
        if (!ok) return r;
        (*ok ? r.largest_fit : r.smallest_oom) = mid;
    }
    return r;
}

}  // namespace ts
