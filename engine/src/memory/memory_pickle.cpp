#include "memory/memory_pickle.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <optional>
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

}  // namespace

Writer::Writer() {
    out_.push_back(static_cast<char>(op::PROTO));
    out_.push_back(2);
}

void Writer::item() {
    if (open_.empty()) {
        if (done_) throw std::logic_error("pickle: a second top-level value");
        done_ = true;
        return;
    }
    Open& o = open_.back();
    if (o.kind == Value::Kind::List || o.kind == Value::Kind::Dict) {
        const size_t per = o.kind == Value::Kind::List ? 1 : 2;
        if (o.batch == kBatchSize * per) {
            out_.push_back(o.kind == Value::Kind::List ? op::APPENDS : op::SETITEMS);
            o.batch = 0;
        }
        if (o.batch == 0) out_.push_back(op::MARK);
        ++o.batch;
    }
    ++o.count;
}

void Writer::none() {
    item();
    out_.push_back(op::NONE);
}

void Writer::boolean(bool v) {
    item();
    out_.push_back(static_cast<char>(v ? op::NEWTRUE : op::NEWFALSE));
}

void Writer::integer(int64_t v) {
    item();
    if (v >= 0 && v < 256) {
        out_.push_back(op::BININT1);
        putLE(out_, static_cast<uint64_t>(v), 1);
    } else if (v >= 0 && v < 65536) {
        out_.push_back(op::BININT2);
        putLE(out_, static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        out_.push_back(op::BININT);
        putLE(out_, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    } else {
        // LONG1: little-endian two's complement, as few bytes as keep the sign (≤ 8 here).
        int n = 8;
        while (n > 1) {
            const int64_t shifted = v >> (8 * (n - 1) - 1);
            if (shifted != 0 && shifted != -1) break;
            --n;
        }
        out_.push_back(static_cast<char>(op::LONG1));
        out_.push_back(static_cast<char>(n));
        putLE(out_, static_cast<uint64_t>(v), n);
    }
}

void Writer::real(double v) {
    item();
    out_.push_back(op::BINFLOAT);
    const uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int k = 7; k >= 0; --k) out_.push_back(static_cast<char>((bits >> (8 * k)) & 0xff));
}

void Writer::string(std::string_view v) {
    item();
    const bool memoised = v.size() <= kMemoLimit;
    std::string key;
    if (memoised) {
        key.assign(v);
        if (auto it = memo_.find(key); it != memo_.end()) {
            out_.push_back(it->second < 256 ? op::BINGET : op::LONG_BINGET);
            putLE(out_, it->second, it->second < 256 ? 1 : 4);
            return;
        }
    }
    out_.push_back(op::BINUNICODE);
    putLE(out_, v.size(), 4);
    out_ += v;
    if (memoised) {
        const auto id = static_cast<uint32_t>(memo_.size());
        memo_.emplace(std::move(key), id);
        out_.push_back(id < 256 ? op::BINPUT : op::LONG_BINPUT);
        putLE(out_, id, id < 256 ? 1 : 4);
    }
}

void Writer::beginList() {
    item();
    out_.push_back(op::EMPTY_LIST);
    open_.push_back({Value::Kind::List});
}

void Writer::beginDict() {
    item();
    out_.push_back(op::EMPTY_DICT);
    open_.push_back({Value::Kind::Dict});
}

void Writer::beginTuple() {
    item();
    out_.push_back(op::MARK);
    open_.push_back({Value::Kind::Tuple});
}

void Writer::end() {
    if (open_.empty()) throw std::logic_error("pickle: end() with nothing open");
    const Open o = open_.back();
    if (o.kind == Value::Kind::Dict && o.batch % 2)
        throw std::logic_error("pickle: a dict closed after a key");
    open_.pop_back();
    if (o.kind == Value::Kind::List) {
        if (o.batch > 0) out_.push_back(op::APPENDS);
    } else if (o.kind == Value::Kind::Dict) {
        if (o.batch > 0) out_.push_back(op::SETITEMS);
    } else if (o.count == 0) {
        out_.back() = static_cast<char>(op::EMPTY_TUPLE);  // in place of beginTuple's MARK
    } else {
        out_.push_back(op::TUPLE);
    }
}

void Writer::value(const Value& v) {
    using K = Value::Kind;
    switch (v.kind) {
        case K::None:
            none();
            break;
        case K::Bool:
            boolean(v.b);
            break;
        case K::Int:
            integer(v.i);
            break;
        case K::Float:
            real(v.f);
            break;
        case K::String:
            string(v.s);
            break;
        case K::List:
        case K::Tuple:
            if (v.kind == K::List) {
                beginList();
            } else {
                beginTuple();
            }
            for (const auto& x : v.items) value(x);
            end();
            break;
        case K::Dict:
            beginDict();
            for (const auto& [k, x] : v.entries) {
                value(k);
                value(x);
            }
            end();
            break;
    }
}

std::string Writer::finish() {
    if (!open_.empty()) throw std::logic_error("pickle: finish() with a container open");
    if (!done_) throw std::logic_error("pickle: finish() before any value");
    out_.push_back(op::STOP);
    return std::move(out_);
}

std::string dumps(const Value& v) {
    Writer w;
    w.value(v);
    return w.finish();
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

using pickle::Writer;

namespace {

void writeFrame(Writer& w, std::string_view name, std::string_view file, int64_t line) {
    w.beginDict();
    w.string("name");
    w.string(name);
    w.string("filename");
    w.string(file);
    w.string("line");
    w.integer(line);
    w.end();
}

void writeFrames(Writer& w, const RawMemoryTrace& t, Phase phase, int step, int32_t range,
                 int32_t op_name, int32_t stack) {
    auto name = [&](int32_t i) -> std::string_view {
        return i >= 0 && static_cast<size_t>(i) < t.names.size() ? std::string_view(t.names[i])
                                                                 : std::string_view();
    };
    w.beginList();
    if (!name(op_name).empty()) writeFrame(w, name(op_name), "trainscope/op", 0);
    if (stack >= 0 && static_cast<size_t>(stack) < t.stacks.size())
        for (const auto& f : t.stacks[stack]) writeFrame(w, f.name, f.filename, f.line);
    if (!name(range).empty()) writeFrame(w, name(range), "trainscope/range", 0);
    writeFrame(w,
               step >= 0 ? fmt::format("{} (step {})", toString(phase), step)
                         : std::string(toString(phase)),
               "trainscope/phase", 0);
    w.end();
}

// Note [snapshot categories]: memory_viz colours the Active Memory Timeline by the "category"
// of each trace entry when any entry has one (the legend lists them in the order they first
// appear), as PyTorch's own profile_plot writes them. Every alloc, free_requested and
// free_completed entry carries its allocation's TrainScope category ("parameters",
// "activations", ... as toString(MemoryCategory) names them); the allocated blocks of the
// segments carry theirs too, though memory_viz draws a block that is live before the trace and
// never freed in it as "unknown" whatever it says. The viewer insists on "unknown" being among
// the categories (it tries to add it itself and fails on a misspelt name), so the trace ends
// as c10's own does when a snapshot is taken while recording: with a "snapshot" entry (the
// active bytes at that moment), in category "unknown". Segment and oom entries have none.
constexpr std::string_view kUnknownCategory = "unknown";

// Each event's category: its allocation's, for alloc, free_requested and free_completed.
std::vector<std::optional<MemoryCategory>> eventCategories(const RawMemoryTrace& t,
                                                           const MemoryAnalysis& a) {
    std::vector<std::optional<MemoryCategory>> cat(t.events.size());
    std::unordered_map<uint64_t, MemoryCategory> live;
    for (const auto& x : a.allocations) {
        if (x.initial) {
            live[x.addr] = x.category;
        } else {
            cat[x.alloc_index] = x.category;
        }
        if (x.free_index) cat[*x.free_index] = x.category;
    }
    for (size_t i = 0; i < t.events.size(); ++i) {
        const AllocEvent& e = t.events[i];
        if (e.action == AllocAction::Alloc && cat[i]) {
            live[e.addr] = *cat[i];
        } else if (e.action == AllocAction::FreeRequested) {
            if (auto it = live.find(e.addr); it != live.end()) cat[i] = it->second;
        }
    }
    return cat;
}

}  // namespace

std::string memorySnapshotPickle(const RawMemoryTrace& t) {
    const MemoryAnalysis a = analyzeMemory(t);
    // The allocation behind every block live at the end, for its frames and category.
    std::unordered_map<uint64_t, const Allocation*> live;
    for (const auto& x : a.allocations)
        if (!x.free_index) live[x.addr] = &x;

    Writer w;
    w.beginDict();
    w.string("segments");
    w.beginList();
    int64_t active_total = 0;
    for (const auto& s : t.segments) {
        int64_t allocated = 0, requested = 0;
        for (const auto& b : s.blocks)
            if (b.allocated) {
                allocated += b.size;
                requested += b.requested;
            }
        active_total += allocated;
        w.beginDict();
        w.string("device");
        w.integer(t.device);
        w.string("address");
        w.integer(static_cast<int64_t>(s.addr));
        w.string("total_size");
        w.integer(s.total_size);
        w.string("allocated_size");
        w.integer(allocated);
        w.string("active_size");
        w.integer(allocated);
        w.string("requested_size");
        w.integer(requested);
        w.string("stream");
        w.integer(static_cast<int64_t>(s.stream));
        w.string("segment_type");
        w.string(s.large ? "large" : "small");
        w.string("segment_pool_id");
        w.beginTuple();
        w.integer(0);
        w.integer(0);
        w.end();
        w.string("is_expandable");
        w.boolean(false);
        w.string("frames");
        w.beginList();
        w.end();
        w.string("blocks");
        w.beginList();
        for (const auto& b : s.blocks) {
            const auto it = b.allocated ? live.find(b.addr) : live.end();
            const Allocation* x = it != live.end() ? it->second : nullptr;
            w.beginDict();
            w.string("address");
            w.integer(static_cast<int64_t>(b.addr));
            w.string("size");
            w.integer(b.size);
            w.string("requested_size");
            w.integer(b.requested);
            w.string("state");
            w.string(b.allocated ? "active_allocated" : "inactive");
            if (x) {
                w.string("category");
                w.string(toString(x->category));
            }
            w.string("frames");
            if (x && !x->initial) {
                writeFrames(w, t, x->phase, x->step, x->range, x->op, x->stack);
            } else {
                w.beginList();
                w.end();
            }
            w.end();
        }
        w.end();  // blocks
        w.end();  // the segment
    }
    w.end();  // segments

    const auto categories = eventCategories(t, a);
    auto entry = [&w](std::string_view action, uint64_t addr, int64_t size, uint64_t stream,
                      int64_t time_ns) {
        w.beginDict();
        w.string("action");
        w.string(action);
        w.string("addr");
        w.integer(static_cast<int64_t>(addr));
        w.string("size");
        w.integer(size);
        w.string("stream");
        w.integer(static_cast<int64_t>(stream));
        w.string("time_us");
        w.integer(time_ns / 1000);
    };
    w.string("device_traces");
    w.beginList();
    for (int d = 0; d < t.device; ++d) {
        w.beginList();
        w.end();
    }
    w.beginList();
    for (size_t i = 0; i < t.events.size(); ++i) {
        const AllocEvent& e = t.events[i];
        entry(toString(e.action), e.addr, e.size, e.stream, e.time_ns);
        if (e.action == AllocAction::Oom) {
            w.string("device_free");
            w.integer(static_cast<int64_t>(e.addr));
        }
        if (categories[i]) {
            w.string("category");
            w.string(toString(*categories[i]));
        }
        w.string("frames");
        writeFrames(w, t, e.phase, e.step, e.range, e.op, e.stack);
        w.end();
    }
    // See Note [snapshot categories].
    entry("snapshot", 0, active_total, 0, t.events.empty() ? 0 : t.events.back().time_ns);
    w.string("category");
    w.string(kUnknownCategory);
    w.string("frames");
    w.beginList();
    w.end();
    w.end();
    w.end();  // this device's trace
    w.end();  // device_traces
    w.end();  // the snapshot
    return w.finish();
}

}  // namespace ts
