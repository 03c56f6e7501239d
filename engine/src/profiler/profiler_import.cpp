// A torch.profiler Chrome trace read into a profile (See Note [importing a trace] in
// profiler.h). Torch-free.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "profiler/profiler.h"

namespace ts {

namespace {

using nlohmann::json;

int64_t usToNs(const json& v) { return static_cast<int64_t>(std::llround(v.get<double>() * 1e3)); }

// A number in the trace's args, which Kineto writes as numbers (and some tools as text).
template <typename T>
T traceNumber(const json& args, const char* key, T fallback) {
    auto it = args.find(key);
    if (it == args.end()) return fallback;
    if (it->is_number()) return it->get<T>();
    if (it->is_string()) {
        try {
            return static_cast<T>(std::stoll(it->get<std::string>()));
        } catch (const std::exception&) {
            return fallback;
        }
    }
    return fallback;
}

// A thread (or stream) id: a number, or the number a string starts with; none for "Spans".
std::optional<uint64_t> traceId(const json& e, const char* key) {
    auto it = e.find(key);
    if (it == e.end()) return std::nullopt;
    if (it->is_number_integer()) return static_cast<uint64_t>(it->get<int64_t>());
    if (it->is_string()) {
        const std::string s = it->get<std::string>();
        if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) {
            try {
                return std::stoull(s);
            } catch (const std::exception&) {
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

std::string isoDate(int64_t epoch_ns) {
    const std::time_t t = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
    std::tm tm{};
    if (!gmtime_r(&t, &tm)) return {};
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

struct Interval {
    uint64_t thread = 0;
    int64_t start = 0, end = 0;
};

bool startsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

// The phase ranges PyTorch's own records imply, where the trace names none: per step (or the
// whole trace as one), "optimizer" over each Optimizer.step#, "backward" on each thread over
// its autograd ops, "forward" on the step's thread up to the first of them.
void addImpliedPhases(RawTrace& raw, const std::vector<Interval>& steps,
                      const std::vector<Interval>& optimizer_steps,
                      const std::vector<Interval>& zero_grads) {
    std::vector<Interval> whole = steps;
    if (whole.empty()) {
        // No ProfilerStep#: the whole trace, on the thread with the most ops.
        std::map<uint64_t, size_t> ops;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (const auto& e : raw.cpu) {
            ++ops[e.thread];
            lo = std::min(lo, e.start_ns);
            hi = std::max(hi, e.end_ns);
        }
        if (ops.empty()) return;
        const auto main = std::max_element(ops.begin(), ops.end(), [](auto& a, auto& b) {
                              return a.second < b.second;
                          })->first;
        whole.push_back({main, lo, hi});
    }
    std::vector<CpuEvent> added;
    auto range = [&](const char* name, uint64_t thread, int64_t start, int64_t end) {
        CpuEvent r;
        r.name = name;
        r.thread = thread;
        r.start_ns = start;
        r.end_ns = end;
        r.range = true;
        added.push_back(std::move(r));
    };
    for (const Interval& s : whole) {
        int64_t first_backward = INT64_MAX;
        std::map<uint64_t, std::pair<int64_t, int64_t>> backward;  // thread → span
        for (const auto& e : raw.cpu) {
            if (e.range || e.start_ns < s.start || e.start_ns >= s.end) continue;
            if (!startsWith(e.name, "autograd::engine::evaluate_function")) continue;
            auto [it, fresh] = backward.emplace(e.thread, std::make_pair(e.start_ns, e.end_ns));
            if (!fresh)
                it->second = {std::min(it->second.first, e.start_ns),
                              std::max(it->second.second, e.end_ns)};
            first_backward = std::min(first_backward, e.start_ns);
        }
        int64_t first_optimizer = INT64_MAX;
        for (const auto& o : optimizer_steps)
            if (o.start >= s.start && o.start < s.end) {
                range("optimizer", o.thread, o.start, o.end);
                first_optimizer = std::min(first_optimizer, o.start);
            }
        for (const auto& [thread, span] : backward)
            range("backward", thread, span.first, span.second);
        const int64_t forward_end = std::min({first_backward, first_optimizer, s.end});
        int64_t forward_start = s.start;
        for (const auto& z : zero_grads)
            if (z.start >= s.start && z.end <= forward_end)
                forward_start = std::max(forward_start, z.end);
        if (forward_end > forward_start) range("forward", s.thread, forward_start, forward_end);
    }
    for (auto& r : added) raw.cpu.push_back(std::move(r));
}

}  // namespace

ProfileResult importChromeTrace(std::string_view text, const std::string& name, int rank,
                                int* imported_rank) {
    if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
        static_cast<unsigned char>(text[1]) == 0x8b)
        throw std::invalid_argument("the file is gzip-compressed: gunzip it first");
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        throw std::invalid_argument(
            fmt::format("not a Chrome trace: the JSON {} (byte {})",
                        e.byte >= text.size() ? "ends before it is complete (a truncated file?)"
                                              : "cannot be read",
                        e.byte));
    }
    const json* events = nullptr;
    if (doc.is_object()) {
        auto it = doc.find("traceEvents");
        if (it == doc.end() || !it->is_array())
            throw std::invalid_argument(
                "not a Chrome trace: no \"traceEvents\" list (torch.profiler's export_chrome_trace "
                "writes one)");
        events = &*it;
    } else if (doc.is_array()) {
        events = &doc;  // the Chrome trace format's bare list of events
    } else {
        throw std::invalid_argument("not a Chrome trace: neither an object nor a list of events");
    }

    // A merged trace of ranks: one rank's events (pid = rank).
    std::optional<uint64_t> only_pid;
    std::string title = name;
    const json* ranks = nullptr;
    if (doc.is_object())
        if (auto it = doc.find("ranks"); it != doc.end() && it->is_array() && !it->empty())
            ranks = &*it;
    if (ranks) {
        const int n = static_cast<int>(ranks->size());
        const int r = rank < 0 ? 0 : rank;
        if (r >= n)
            throw std::invalid_argument(
                fmt::format("--rank {}: the trace holds ranks 0 to {}", rank, n - 1));
        only_pid = r;
        title = fmt::format("{} (rank {} of {})", name, r, n);
        if (imported_rank) *imported_rank = r;
    } else {
        if (rank >= 0)
            throw std::invalid_argument(
                fmt::format("--rank {}: the trace is one process's, not a distributed run's "
                            "merged trace of ranks",
                            rank));
        if (imported_rank) *imported_rank = -1;
    }

    RawTrace raw;
    std::vector<Interval> steps, optimizer_steps, zero_grads;
    bool phase_ranges = false;
    size_t skipped = 0;
    for (const json& e : *events) {
        if (!e.is_object()) continue;
        // An event of the wrong shape (a name that is a number) is left out, not fatal.
        try {
            if (e.value("ph", "") != "X") continue;
            if (only_pid && traceId(e, "pid") != only_pid) continue;
            const std::string cat = e.value("cat", "");
            const std::string ename = e.value("name", "");
            auto ts = e.find("ts");
            auto dur = e.find("dur");
            if (ts == e.end() || !ts->is_number() || (dur != e.end() && !dur->is_number())) {
                ++skipped;
                continue;
            }
            const int64_t start = usToNs(*ts);
            const int64_t length = dur == e.end() ? 0 : std::max<int64_t>(0, usToNs(*dur));
            const json args = e.value("args", json::object());
            const bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
                             cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
            if (gpu) {
                KernelEvent k;
                k.name = ename;
                k.start_ns = start;
                k.duration_ns = length;
                k.launcher = traceNumber<uint64_t>(args, "External id", 0);
                k.correlation = traceNumber<uint64_t>(args, "correlation", 0);
                k.stream = traceNumber<int64_t>(args, "stream", traceId(e, "tid").value_or(0));
                raw.kernels.push_back(std::move(k));
                continue;
            }
            const bool op = cat == "cpu_op" || cat == "operator" || cat == "Operator";
            const bool annotation = cat == "user_annotation";
            const bool runtime = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime";
            if (!op && !annotation && !runtime) continue;
            const auto thread = traceId(e, "tid");
            if (!thread) continue;
            if (annotation && startsWith(ename, kProfilerStepPrefix)) {
                steps.push_back({*thread, start, start + length});
                continue;
            }
            if (annotation && startsWith(ename, "Optimizer.step#"))
                optimizer_steps.push_back({*thread, start, start + length});
            if (annotation && startsWith(ename, "Optimizer.zero_grad#"))
                zero_grads.push_back({*thread, start, start + length});
            CpuEvent c;
            c.name = ename;
            c.thread = *thread;
            c.start_ns = start;
            c.end_ns = start + length;
            c.range = annotation;
            if (annotation && (ename == "forward" || ename == "backward" || ename == "optimizer"))
                phase_ranges = true;
            if (runtime) {
                c.runtime_correlation = traceNumber<uint64_t>(args, "correlation", 0);
            } else {
                c.correlation = traceNumber<uint64_t>(args, "External id", 0);
                c.sequence_nr = traceNumber<int64_t>(args, "Sequence number", -1);
                c.fwd_thread = traceNumber<uint64_t>(args, "Fwd thread id", 0);
                if (auto dims = args.find("Input Dims"); dims != args.end() && dims->is_array())
                    for (const json& d : *dims) {
                        std::vector<int64_t> shape;
                        if (d.is_array())
                            for (const json& x : d)
                                if (x.is_number_integer()) shape.push_back(x.get<int64_t>());
                        c.shapes.push_back(std::move(shape));
                    }
            }
            raw.cpu.push_back(std::move(c));
        } catch (const json::exception&) {
            ++skipped;
        }
    }
    bool any_op = !raw.kernels.empty();
    for (const auto& c : raw.cpu) any_op = any_op || !c.range;
    if (!any_op)
        throw std::invalid_argument(
            skipped > 0
                ? fmt::format("an empty trace: no op or kernel could be read ({} event(s) of "
                              "the wrong shape)",
                              skipped)
                : "an empty trace: it holds no op or kernel (cpu_op, kernel, gpu_memcpy ...)");
    std::sort(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.start < b.start; });
    if (!phase_ranges) addImpliedPhases(raw, steps, optimizer_steps, zero_grads);

    ProfileResult r;
    r.spec.imported = title;
    r.spec.bench.warmup = 0;
    r.gpu = !raw.kernels.empty();
    r.trace = attribute(raw);
    // A step per ProfilerStep#, its phases the wall time of its phase ranges in it.
    for (size_t i = 0; i < steps.size(); ++i) {
        StepSample s;
        s.index = static_cast<int>(i);
        s.total_ms = static_cast<double>(steps[i].end - steps[i].start) / 1e6;
        for (const auto& range : r.trace.ranges) {
            if (range.start_ns < steps[i].start || range.start_ns >= steps[i].end) continue;
            const double ms = static_cast<double>(range.end_ns - range.start_ns) / 1e6;
            if (range.name == "forward") s.forward_ms += ms;
            if (range.name == "backward") s.backward_ms += ms;
            if (range.name == "optimizer") s.optimizer_ms += ms;
        }
        r.steps.push_back(s);
    }
    r.spec.profile_steps = std::max<int>(1, static_cast<int>(steps.size()));
    if (doc.is_object()) {
        if (auto it = doc.find("deviceProperties");
            it != doc.end() && it->is_array() && !it->empty() && it->front().is_object())
            r.environment.device_name = it->front().value("name", "");
        if (auto it = doc.find("baseTimeNanoseconds"); it != doc.end() && it->is_number())
            r.environment.date = isoDate(it->get<int64_t>());
    }
    if (r.environment.device_name.empty() && !r.gpu) r.environment.device_name = "CPU";
    return r;
}

}  // namespace ts
