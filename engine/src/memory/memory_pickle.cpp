#include "memory/memory_pickle.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

namespace ts::pickle {

Value Value::boolean(bool v) {
    Value x;
    x.kind = Kind::Bool;
    x.b = v;
    return x;
}
Value Value::integer(int64_t v) {
    Value x;
    x.kind = Kind::Int;
    x.i = v;
    return x;
}
Value Value::real(double v) {
    Value x;
    x.kind = Kind::Float;
    x.f = v;
    return x;
}
Value Value::string(std::string v) {
    Value x;
    x.kind = Kind::String;
    x.s = std::move(v);
    return x;
}
Value Value::list(std::vector<Value> v) {
    Value x;
    x.kind = Kind::List;
    x.items = std::move(v);
    return x;
}
Value Value::tuple(std::vector<Value> v) {
    Value x;
    x.kind = Kind::Tuple;
    x.items = std::move(v);
    return x;
}
Value Value::dict() {
    Value x;
    x.kind = Kind::Dict;
    return x;
}
Value& Value::set(std::string key, Value v) {
    entries.emplace_back(string(std::move(key)), std::move(v));
    return *this;
}
const Value* Value::find(std::string_view key) const {
    for (const auto& [k, v] : entries)
        if (k.kind == Kind::String && k.s == key) return &v;
    return nullptr;
}
const Value& Value::at(std::string_view key) const {
    if (const Value* v = find(key)) return *v;
    throw std::invalid_argument(fmt::format("no key '{}'", key));
}

// ---- Writing ----

namespace {

// The opcodes we write and read (Python's Lib/pickle.py names them).
namespace op {
constexpr uint8_t MARK = '(', STOP = '.', NONE = 'N', BININT = 'J', BININT1 = 'K', BININT2 = 'M',
                  BINFLOAT = 'G', BINUNICODE = 'X', EMPTY_LIST = ']', APPEND = 'a', APPENDS = 'e',
                  EMPTY_DICT = '}', SETITEM = 's', SETITEMS = 'u', EMPTY_TUPLE = ')', TUPLE = 't',
                  BINPUT = 'q', LONG_BINPUT = 'r', BINGET = 'h', LONG_BINGET = 'j', PROTO = 0x80,
                  TUPLE1 = 0x85, TUPLE2 = 0x86, TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89,
                  LONG1 = 0x8a, SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d, MEMOIZE = 0x94,
                  FRAME = 0x95;
}  // namespace op

void putLE(std::string& out, uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

void write(std::string& out, const Value& v) {
    using K = Value::Kind;
    switch (v.kind) {
        case K::None:
            out.push_back(op::NONE);
            break;
        case K::Bool:
            out.push_back(static_cast<char>(v.b ? op::NEWTRUE : op::NEWFALSE));
            break;
        case K::Int:
            if (v.i >= INT32_MIN && v.i <= INT32_MAX) {
                out.push_back(op::BININT);
                putLE(out, static_cast<uint32_t>(static_cast<int32_t>(v.i)), 4);
            } else {
                // LONG1: little-endian two's complement, as few bytes as keep the sign (≤ 8 here).
                int n = 8;
                while (n > 1) {
                    const int64_t shifted = v.i >> (8 * (n - 1) - 1);
                    if (shifted != 0 && shifted != -1) break;
                    --n;
                }
                out.push_back(static_cast<char>(op::LONG1));
                out.push_back(static_cast<char>(n));
                putLE(out, static_cast<uint64_t>(v.i), n);
            }
            break;
        case K::Float: {
            out.push_back(op::BINFLOAT);
            const uint64_t bits = std::bit_cast<uint64_t>(v.f);
            for (int k = 7; k >= 0; --k) out.push_back(static_cast<char>((bits >> (8 * k)) & 0xff));
            break;
        }
        case K::String:
            out.push_back(op::BINUNICODE);
            putLE(out, v.s.size(), 4);
            out += v.s;
            break;
        case K::List:
            out.push_back(op::EMPTY_LIST);
            if (!v.items.empty()) {
                out.push_back(op::MARK);
                for (const auto& x : v.items) write(out, x);
                out.push_back(op::APPENDS);
            }
            break;
        case K::Tuple:
            if (v.items.empty()) {
                out.push_back(op::EMPTY_TUPLE);
                break;
            }
            out.push_back(op::MARK);
            for (const auto& x : v.items) write(out, x);
            out.push_back(op::TUPLE);
            break;
        case K::Dict:
            out.push_back(op::EMPTY_DICT);
            if (!v.entries.empty()) {
                out.push_back(op::MARK);
                for (const auto& [k, x] : v.entries) {
                    write(out, k);
                    write(out, x);
                }
                out.push_back(op::SETITEMS);
            }
            break;
    }
}

}  // namespace

std::string dumps(const Value& v) {
    std::string out;
    out.push_back(static_cast<char>(op::PROTO));
    out.push_back(2);
    write(out, v);
    out.push_back(op::STOP);
    return out;
}

// ---- Reading ----

namespace {

class Reader {
public:
    explicit Reader(std::string_view d) : d_(d) {}

    Value run() {
        for (;;) {
            const uint8_t code = byte();
            switch (code) {
                case op::PROTO:
                    byte();
                    break;
                case op::FRAME:
                    le(8);
                    break;
                case op::STOP: {
                    if (stack_.size() != 1 || !marks_.empty())
                        fail("the stack does not hold one value at STOP");
                    return *stack_.back();
                }
                case op::MARK:
                    marks_.push_back(stack_.size());
                    break;
                case op::NONE:
                    push(Value::none());
                    break;
                case op::NEWTRUE:
                    push(Value::boolean(true));
                    break;
                case op::NEWFALSE:
                    push(Value::boolean(false));
                    break;
                case op::BININT:
                    push(Value::integer(static_cast<int32_t>(le(4))));
                    break;
                case op::BININT1:
                    push(Value::integer(byte()));
                    break;
                case op::BININT2:
                    push(Value::integer(static_cast<int64_t>(le(2))));
                    break;
                case op::LONG1: {
                    const int n = byte();
                    if (n > 8) fail("an integer of more than 64 bits");
                    uint64_t u = le(n);
                    if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1)
                        u |= ~uint64_t{0} << (8 * n);  // sign-extend
                    push(Value::integer(static_cast<int64_t>(u)));
                    break;
                }
                case op::BINFLOAT: {
                    uint64_t bits = 0;
                    for (int k = 0; k < 8; ++k) bits = (bits << 8) | byte();
                    push(Value::real(std::bit_cast<double>(bits)));
                    break;
                }
                case op::BINUNICODE:
                    push(Value::string(bytes(le(4))));
                    break;
                case op::SHORT_BINUNICODE:
                    push(Value::string(bytes(byte())));
                    break;
                case op::BINUNICODE8:
                    push(Value::string(bytes(le(8))));
                    break;
                case op::EMPTY_LIST:
                    push(Value::list());
                    break;
                case op::EMPTY_DICT:
                    push(Value::dict());
                    break;
                case op::EMPTY_TUPLE:
                    push(Value::tuple({}));
                    break;
                case op::APPEND: {
                    Value x = pop();
                    top(Value::Kind::List).items.push_back(std::move(x));
                    break;
                }
                case op::APPENDS: {
                    std::vector<Value> xs = popMark();
                    auto& l = top(Value::Kind::List).items;
                    for (auto& x : xs) l.push_back(std::move(x));
                    break;
                }
                case op::SETITEM: {
                    Value v = pop(), k = pop();
                    top(Value::Kind::Dict).entries.emplace_back(std::move(k), std::move(v));
                    break;
                }
                case op::SETITEMS: {
                    std::vector<Value> xs = popMark();
                    if (xs.size() % 2) fail("SETITEMS with an odd number of values");
                    auto& e = top(Value::Kind::Dict).entries;
                    for (size_t k = 0; k < xs.size(); k += 2)
                        e.emplace_back(std::move(xs[k]), std::move(xs[k + 1]));
                    break;
                }
                case op::TUPLE:
                    push(Value::tuple(popMark()));
                    break;
                case op::TUPLE1:
                case op::TUPLE2:
                case op::TUPLE3: {
                    std::vector<Value> xs(code - op::TUPLE1 + 1);
                    for (size_t k = xs.size(); k-- > 0;) xs[k] = pop();
                    push(Value::tuple(std::move(xs)));
                    break;
                }
                case op::BINPUT:
                    memo(byte());
                    break;
                case op::LONG_BINPUT:
                    memo(le(4));
                    break;
                case op::MEMOIZE:
                    memo(memo_.size());
                    break;
                case op::BINGET:
                    get(byte());
                    break;
                case op::LONG_BINGET:
                    get(le(4));
                    break;
                default:
                    fail(fmt::format("opcode 0x{:02x} is not read", code));
            }
        }
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::invalid_argument(fmt::format("pickle at byte {}: {}", pos_, why));
    }
    uint8_t byte() {
        if (pos_ >= d_.size()) fail("truncated");
        return static_cast<uint8_t>(d_[pos_++]);
    }
    uint64_t le(int n) {
        uint64_t v = 0;
        for (int k = 0; k < n; ++k) v |= static_cast<uint64_t>(byte()) << (8 * k);
        return v;
    }
    std::string bytes(uint64_t n) {
        if (n > d_.size() - pos_) fail("truncated string");
        std::string s(d_.substr(pos_, n));
        pos_ += n;
        return s;
    }
    void push(Value v) { stack_.push_back(std::make_shared<Value>(std::move(v))); }
    Value pop() {
        if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
            fail("stack underflow");
        Value v = *stack_.back();
        stack_.pop_back();
        return v;
    }
    std::vector<Value> popMark() {
        if (marks_.empty()) fail("no MARK");
        const size_t m = marks_.back();
        marks_.pop_back();
        std::vector<Value> xs;
        for (size_t k = m; k < stack_.size(); ++k) xs.push_back(*stack_[k]);
        stack_.resize(m);
        return xs;
    }
    Value& top(Value::Kind kind) {
        if (stack_.empty() || stack_.back()->kind != kind)
            fail("an item added to the wrong kind of value");
        return *stack_.back();
    }
    // The memo shares the node with the stack, so later APPENDs to a memoised list show.
    void memo(uint64_t key) {
        if (stack_.empty()) fail("memo of an empty stack");
        memo_[key] = stack_.back();
    }
    void get(uint64_t key) {
        auto it = memo_.find(key);
        if (it == memo_.end()) fail(fmt::format("memo {} is not set", key));
        stack_.push_back(std::make_shared<Value>(*it->second));
    }

    std::string_view d_;
    size_t pos_ = 0;
    std::vector<std::shared_ptr<Value>> stack_;
    std::vector<size_t> marks_;
    std::unordered_map<uint64_t, std::shared_ptr<Value>> memo_;
};

}  // namespace

Value loads(std::string_view data) { return Reader(data).run(); }

}  // namespace ts::pickle

namespace ts {

using pickle::Value;

namespace {

Value frame(const std::string& name, const std::string& file, int64_t line) {
    Value f = Value::dict();
    f.set("name", Value::string(name))
        .set("filename", Value::string(file))
        .set("line", Value::integer(line));
    return f;
}

Value framesOf(const RawMemoryTrace& t, Phase phase, int step, int32_t range, int32_t op_name,
               int32_t stack) {
    auto name = [&](int32_t i) -> std::string {
        return i >= 0 && static_cast<size_t>(i) < t.names.size() ? t.names[i] : std::string();
    };
    Value frames = Value::list();
    if (!name(op_name).empty()) frames.items.push_back(frame(name(op_name), "trainscope/op", 0));
    if (stack >= 0 && static_cast<size_t>(stack) < t.stacks.size())
        for (const auto& f : t.stacks[stack])
            frames.items.push_back(frame(f.name, f.filename, f.line));
    if (!name(range).empty()) frames.items.push_back(frame(name(range), "trainscope/range", 0));
    frames.items.push_back(frame(step >= 0 ? fmt::format("{} (step {})", toString(phase), step)
                                           : std::string(toString(phase)),
                                 "trainscope/phase", 0));
    return frames;
}

}  // namespace

Value memorySnapshotValue(const RawMemoryTrace& t) {
    // The allocation behind every block live at the end, for its frames.
    const MemoryAnalysis a = analyzeMemory(t);
    std::unordered_map<uint64_t, const Allocation*> live;
    for (const auto& x : a.allocations)
        if (!x.free_index) live[x.addr] = &x;

    Value segments = Value::list();
    for (const auto& s : t.segments) {
        Value blocks = Value::list();
        int64_t allocated = 0, requested = 0;
        for (const auto& b : s.blocks) {
            Value frames = Value::list();
            if (b.allocated) {
                allocated += b.size;
                requested += b.requested;
                auto it = live.find(b.addr);
                if (it != live.end() && !it->second->initial) {
                    const Allocation& x = *it->second;
                    frames = framesOf(t, x.phase, x.step, x.range, x.op, x.stack);
                }
            }
            Value blk = Value::dict();
            blk.set("address", Value::integer(static_cast<int64_t>(b.addr)))
                .set("size", Value::integer(b.size))
                .set("requested_size", Value::integer(b.requested))
                .set("state", Value::string(b.allocated ? "active_allocated" : "inactive"))
                .set("frames", std::move(frames));
            blocks.items.push_back(std::move(blk));
        }
        Value seg = Value::dict();
        seg.set("device", Value::integer(t.device))
            .set("address", Value::integer(static_cast<int64_t>(s.addr)))
            .set("total_size", Value::integer(s.total_size))
            .set("allocated_size", Value::integer(allocated))
            .set("active_size", Value::integer(allocated))
            .set("requested_size", Value::integer(requested))
            .set("stream", Value::integer(static_cast<int64_t>(s.stream)))
            .set("segment_type", Value::string(s.large ? "large" : "small"))
            .set("segment_pool_id", Value::tuple({Value::integer(0), Value::integer(0)}))
            .set("is_expandable", Value::boolean(false))
            .set("frames", Value::list())
            .set("blocks", std::move(blocks));
        segments.items.push_back(std::move(seg));
    }

    Value trace = Value::list();
    for (const auto& e : t.events) {
        Value entry = Value::dict();
        entry.set("action", Value::string(std::string(toString(e.action))))
            .set("addr", Value::integer(static_cast<int64_t>(e.addr)))
            .set("size", Value::integer(e.size))
            .set("stream", Value::integer(static_cast<int64_t>(e.stream)))
            .set("time_us", Value::integer(e.time_ns / 1000));
        if (e.action == AllocAction::Oom)
            entry.set("device_free", Value::integer(static_cast<int64_t>(e.addr)));
        entry.set("frames", framesOf(t, e.phase, e.step, e.range, e.op, e.stack));
        trace.items.push_back(std::move(entry));
    }
    Value traces = Value::list();
    for (int d = 0; d < t.device; ++d) traces.items.push_back(Value::list());
    traces.items.push_back(std::move(trace));

    Value snapshot = Value::dict();
    snapshot.set("segments", std::move(segments)).set("device_traces", std::move(traces));
    return snapshot;
}

std::string memorySnapshotPickle(const RawMemoryTrace& t) {
    return pickle::dumps(memorySnapshotValue(t));
}

}  // namespace ts
