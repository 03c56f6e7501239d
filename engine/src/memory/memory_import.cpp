// A memory_viz snapshot read into a memory run (See Note [importing a snapshot] in memory.h).
// Torch-free.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "memory/memory.h"
#include "memory/memory_pickle.h"

namespace ts {

namespace {

using pickle::Value;

int64_t intOf(const Value* v, int64_t fallback = 0) {
    if (!v) return fallback;
    if (v->kind == Value::Kind::Int) return v->i;
    if (v->kind == Value::Kind::Bool) return v->b ? 1 : 0;
    if (v->kind == Value::Kind::Float) return static_cast<int64_t>(v->f);
    return fallback;
}

std::string textOf(const Value* v) {
    return v && v->kind == Value::Kind::String ? v->s : std::string();
}

std::string lowerText(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// TrainScope's own names ("optimizer state") and PyTorch's memory profiler's (PARAMETER,
// OPTIMIZER_STATE, AUTOGRAD_DETAIL, ...), in any case; what is neither is "other".
std::optional<MemoryCategory> categoryNamed(const std::string& name) {
    if (name.empty()) return std::nullopt;
    std::string s = lowerText(name);
    std::replace(s.begin(), s.end(), '_', ' ');
    for (MemoryCategory c : allMemoryCategories())
        if (toString(c) == s) return c;
    if (s == "parameter") return MemoryCategory::Parameters;
    if (s == "gradient") return MemoryCategory::Gradients;
    if (s == "activation") return MemoryCategory::Activations;
    if (s == "temporary") return MemoryCategory::Temporaries;
    return MemoryCategory::Other;  // input, autograd detail, unknown
}

// "forward (step 1)" → (forward, 1); "backward" → (backward, -1).
std::optional<std::pair<Phase, int>> phaseFrame(const std::string& name) {
    const auto paren = name.find(" (step ");
    const auto phase = parsePhase(name.substr(0, paren));
    if (!phase) return std::nullopt;
    int step = -1;
    if (paren != std::string::npos) {
        try {
            step = std::stoi(name.substr(paren + 7));
        } catch (const std::exception&) {
            step = -1;
        }
    }
    return std::make_pair(*phase, step);
}

class SnapshotReader {
public:
    int32_t name(const std::string& s) {
        if (s.empty()) return -1;
        auto [it, fresh] = names_.emplace(s, static_cast<int32_t>(trace.names.size()));
        if (fresh) trace.names.push_back(s);
        return it->second;
    }
    int32_t stack(std::vector<StackFrame> frames) {
        if (frames.empty()) return -1;
        std::string key;
        for (const auto& f : frames)
            key += f.name + '\x1f' + f.filename + '\x1f' + std::to_string(f.line) + '\x1e';
        auto [it, fresh] =
            stacks_.emplace(std::move(key), static_cast<int32_t>(trace.stacks.size()));
        if (fresh) trace.stacks.push_back(std::move(frames));
        return it->second;
    }
    RawMemoryTrace trace;

private:
    std::map<std::string, int32_t> names_, stacks_;
};

}  // namespace

MemoryResult importMemorySnapshot(std::string_view bytes, const std::string& file) {
    if (bytes.empty()) throw std::invalid_argument("an empty file");
    if (static_cast<unsigned char>(bytes[0]) != 0x80)
        throw std::invalid_argument(
            "not a memory snapshot: not a Python pickle (torch.cuda.memory._dump_snapshot writes "
            "one)");
    Value root;
    try {
        root = pickle::loads(bytes);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("not a memory snapshot: {}", e.what()));
    }
    if (root.kind != Value::Kind::Dict || !root.find("device_traces") || !root.find("segments"))
        throw std::invalid_argument(
            "not a memory snapshot: no \"segments\" and \"device_traces\" (the dict "
            "torch.cuda.memory._snapshot() returns)");
    const Value& traces = root.at("device_traces");
    const Value& segments = root.at("segments");
    if (traces.kind != Value::Kind::List || segments.kind != Value::Kind::List)
        throw std::invalid_argument(
            "not a memory snapshot: \"segments\" and \"device_traces\" "
            "must be lists");
    // The device with the most trace entries (a snapshot of one GPU has the others empty).
    int device = 0;
    for (size_t d = 0; d < traces.items.size(); ++d)
        if (traces.items[d].kind == Value::Kind::List &&
            traces.items[d].items.size() > traces.items[static_cast<size_t>(device)].items.size())
            device = static_cast<int>(d);

    SnapshotReader reader;
    RawMemoryTrace& t = reader.trace;
    t.device = device;
    std::vector<int8_t> given;
    bool any_given = false;
    int64_t t0 = -1;
    const std::vector<Value> none;
    const auto& entries = static_cast<size_t>(device) < traces.items.size()
                              ? traces.items[static_cast<size_t>(device)].items
                              : none;
    for (const Value& e : entries) {
        if (e.kind != Value::Kind::Dict) continue;
        std::string action = textOf(e.find("action"));
        // Expandable segments map and unmap instead of allocating segments.
        if (action == "segment_map") action = "segment_alloc";
        if (action == "segment_unmap") action = "segment_free";
        const auto a = parseAllocAction(action);
        if (!a) continue;  // "snapshot", "user_defined", ...
        AllocEvent ev;
        ev.action = *a;
        ev.addr = static_cast<uint64_t>(intOf(*a == AllocAction::Oom && e.find("device_free")
                                                  ? e.find("device_free")
                                                  : e.find("addr")));
        ev.size = intOf(e.find("size"));
        ev.stream = static_cast<uint64_t>(intOf(e.find("stream")));
        const int64_t us = intOf(e.find("time_us"), -1);
        if (us >= 0) {
            if (t0 < 0) t0 = us;
            ev.time_ns = (us - t0) * 1000;
        }
        // The frames: TrainScope's markers (its own snapshots: op, range, phase), the rest the
        // stack, innermost first.
        bool phase_known = false;
        std::vector<StackFrame> frames;
        if (const Value* fs = e.find("frames"); fs && fs->kind == Value::Kind::List)
            for (const Value& f : fs->items) {
                if (f.kind != Value::Kind::Dict) continue;
                StackFrame sf{textOf(f.find("name")), textOf(f.find("filename")),
                              intOf(f.find("line"))};
                if (sf.filename == "trainscope/op") {
                    ev.op = reader.name(sf.name);
                } else if (sf.filename == "trainscope/range") {
                    ev.range = reader.name(sf.name);
                } else if (sf.filename == "trainscope/phase") {
                    if (auto p = phaseFrame(sf.name)) {
                        std::tie(ev.phase, ev.step) = *p;
                        phase_known = true;
                    }
                } else {
                    frames.push_back(std::move(sf));
                }
            }
        // TrainScope's runner puts "phase|step|module" in the allocator's user metadata.
        if (const std::string meta = textOf(e.find("user_metadata")); !meta.empty()) {
            const auto bar = meta.find('|');
            if (auto p = parsePhase(meta.substr(0, bar))) {
                ev.phase = *p;
                phase_known = true;
                if (bar != std::string::npos) {
                    const auto bar2 = meta.find('|', bar + 1);
                    try {
                        ev.step = std::stoi(meta.substr(bar + 1, bar2 - bar - 1));
                    } catch (const std::exception&) {
                        ev.step = -1;
                    }
                    if (bar2 != std::string::npos) ev.range = reader.name(meta.substr(bar2 + 1));
                }
            }
        }
        ev.stack = reader.stack(std::move(frames));
        // Its category: the snapshot's own where it names one; else, with no phase to judge
        // by, "other" (See Note [importing a snapshot]).
        int8_t c = -1;
        if (auto named = categoryNamed(textOf(e.find("category")))) {
            c = static_cast<int8_t>(*named);
            any_given = true;
        } else if (!phase_known && *a == AllocAction::Alloc) {
            c = static_cast<int8_t>(MemoryCategory::Other);
            any_given = true;
        }
        given.push_back(c);
        t.events.push_back(ev);
    }
    if (any_given) t.given_categories = std::move(given);

    // The segments at the end, and the blocks live then that the trace never allocated: they
    // were live before it began.
    std::map<uint64_t, int64_t> allocated_in_trace;  // live at the end, allocated in the trace
    for (const auto& ev : t.events) {
        if (ev.action == AllocAction::Alloc) allocated_in_trace[ev.addr] = ev.size;
        if (ev.action == AllocAction::FreeCompleted) allocated_in_trace.erase(ev.addr);
    }
    std::map<uint64_t, int64_t> freed_first;  // freed in the trace before any alloc there
    {
        std::map<uint64_t, bool> seen;
        for (const auto& ev : t.events) {
            if (ev.action == AllocAction::Alloc) seen[ev.addr] = true;
            if (ev.action == AllocAction::FreeCompleted && !seen.count(ev.addr))
                freed_first.emplace(ev.addr, ev.size);
        }
    }
    for (const Value& s : segments.items) {
        if (s.kind != Value::Kind::Dict) continue;
        if (const Value* d = s.find("device"); d && intOf(d) != device) continue;
        MemorySegment seg;
        seg.addr = static_cast<uint64_t>(intOf(s.find("address")));
        seg.total_size = intOf(s.find("total_size"));
        seg.stream = static_cast<uint64_t>(intOf(s.find("stream")));
        seg.large = textOf(s.find("segment_type")) != "small";
        if (const Value* bs = s.find("blocks"); bs && bs->kind == Value::Kind::List)
            for (const Value& b : bs->items) {
                if (b.kind != Value::Kind::Dict) continue;
                SegmentBlock blk;
                blk.addr = static_cast<uint64_t>(intOf(b.find("address")));
                blk.size = intOf(b.find("size"));
                blk.requested = intOf(b.find("requested_size"), blk.size);
                blk.allocated = textOf(b.find("state")).starts_with("active");
                if (blk.allocated && !allocated_in_trace.count(blk.addr) &&
                    !freed_first.count(blk.addr))
                    t.initial.push_back({blk.addr, blk.requested});
                seg.blocks.push_back(blk);
            }
        t.initial_reserved += seg.total_size;
        t.segments.push_back(std::move(seg));
    }
    for (const auto& [addr, size] : freed_first) t.initial.push_back({addr, size});
    // Reserved when the trace began: the segments at the end less what the trace added.
    for (const auto& ev : t.events) {
        if (ev.action == AllocAction::SegmentAlloc) t.initial_reserved -= ev.size;
        if (ev.action == AllocAction::SegmentFree) t.initial_reserved += ev.size;
    }
    t.initial_reserved = std::max<int64_t>(0, t.initial_reserved);
    if (t.events.empty() && t.segments.empty())
        throw std::invalid_argument(
            "an empty snapshot: no trace entry and no segment (record with "
            "torch.cuda.memory._record_memory_history() before taking it)");

    MemoryResult r;
    r.spec.imported = file;
    r.spec.record_steps = 1;  // unused: the snapshot has no steps of TrainScope's
    r.gpu = true;
    r.trace = std::move(t);
    r.environment.device_name = fmt::format("cuda:{} (imported snapshot)", device);
    return r;
}

}  // namespace ts
