// The allocator snapshot as PyTorch writes it (torch.cuda.memory._snapshot(), pickled): the
// file that https://pytorch.org/memory_viz and torch.cuda._memory_viz read. A small pickle
// writer (protocol 2: dicts, lists, tuples, ints, floats, strings, bools, None; lists and dicts
// in batches, strings memoised) that writes as it goes, and a reader of the same subset plus
// the framing opcodes of protocols 3 to 5, so that a file Python wrote reads back too. No
// LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/memory.h"

namespace ts::pickle {

struct Value {
    enum class Kind { None, Bool, Int, Float, String, List, Tuple, Dict };
    Kind kind = Kind::None;
    bool b = false;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<Value> items;                      // List, Tuple
    std::vector<std::pair<Value, Value>> entries;  // Dict, in insertion order

    static Value none() { return {}; }
    static Value boolean(bool v);
    static Value integer(int64_t v);
    static Value real(double v);
    static Value string(std::string v);
    static Value list(std::vector<Value> v = {});
    static Value tuple(std::vector<Value> v);
    static Value dict();
    // Dict: appends a string key (no check for duplicates).
    Value& set(std::string key, Value v);
    // Dict: the value of a string key, or nullptr.
    const Value* find(std::string_view key) const;
    // Dict: the value of a string key; throws std::invalid_argument naming it when missing.
    const Value& at(std::string_view key) const;
    bool operator==(const Value&) const = default;
};

// Note [pickle batches]: a list's items are pushed between a MARK and an APPENDS, a dict's
// keys and values between a MARK and a SETITEMS, at most kBatchSize items (pairs) at a time, as
// Python's pickler does. memory_viz's unpickler (JavaScript) adds an APPENDS's items with one
// call, `list.push(...items)`: every item becomes an argument on the browser's stack, and a
// list written in one batch overflows it ("RangeError: Maximum call stack size exceeded"; a
// snapshot of 140,014 trace entries did). A string of at most kMemoLimit bytes is written once
// and memoised (BINPUT), later copies fetched (BINGET): a million trace entries repeat the
// same keys, actions and frame names, and the file shrinks about fourfold.
inline constexpr size_t kBatchSize = 1000;
inline constexpr size_t kMemoLimit = 256;

// Writes one pickle (protocol 2) as it goes, with no tree in memory: values, and lists, dicts
// (key, value, key, value, ...) and tuples opened with begin*() and closed with end(), in
// batches (See Note [pickle batches]). Throws std::logic_error when misused (end() with nothing
// open, a dict closed after a key, a second top-level value, finish() with a container open).
class Writer {
public:
    Writer();
    void none();
    void boolean(bool v);
    void integer(int64_t v);
    void real(double v);
    void string(std::string_view v);
    void beginList();
    void beginDict();
    void beginTuple();
    void end();
    void value(const Value& v);  // a whole tree
    // The bytes, with STOP; the writer is spent.
    std::string finish();

private:
    void item();  // before each value: the enclosing container's batch
    struct Open {
        Value::Kind kind;
        size_t batch = 0;  // pushes in the current batch (a dict's key and value are two)
        size_t count = 0;  // pushes in all
    };
    std::string out_;
    std::vector<Open> open_;
    bool done_ = false;  // the top-level value was written
    std::unordered_map<std::string, uint32_t> memo_;
};

std::string dumps(const Value& v);
// Throws std::invalid_argument on anything it does not read (an opcode, a truncated file).
Value loads(std::string_view data);

}  // namespace ts::pickle

namespace ts {

// The snapshot dict, pickled: {"segments": [...], "device_traces": [[...], ...]} with the keys
// memory_viz reads. Every trace entry's frames are its C++ stack (when recorded) with the
// op, the model's range and the phase added as frames (file "trainscope/op", ".../range",
// ".../phase"), innermost first. See Note [snapshot categories] for the "category" of each
// entry and block, and the "snapshot" entry that ends the trace.
std::string memorySnapshotPickle(const RawMemoryTrace& t);

}  // namespace ts
