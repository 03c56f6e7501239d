// The allocator snapshot as PyTorch writes it (torch.cuda.memory._snapshot(), pickled): the
// file that https://pytorch.org/memory_viz and torch.cuda._memory_viz read. A small pickle
// writer (protocol 2: dicts, lists, tuples, ints, floats, strings, bools, None) and a reader
// of the same subset plus the memo and framing opcodes of protocols 3 to 5, so that a file
// Python wrote reads back too. No LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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

std::string dumps(const Value& v);
// Throws std::invalid_argument on anything it does not read (an opcode, a truncated file).
Value loads(std::string_view data);

}  // namespace ts::pickle

namespace ts {

// The snapshot dict: {"segments": [...], "device_traces": [[...], ...]} with the keys
// memory_viz reads. Every trace entry's frames are its C++ stack (when recorded) with the
// op, the model's range and the phase added as frames (file "trainscope/op", ".../range",
// ".../phase"), innermost first.
pickle::Value memorySnapshotValue(const RawMemoryTrace& t);
std::string memorySnapshotPickle(const RawMemoryTrace& t);

}  // namespace ts
