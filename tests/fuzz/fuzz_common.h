// What the fuzz targets share: the input as text, and how a broken invariant is reported.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

namespace fuzz {

inline std::string_view text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// A property that must hold whatever the input: abort, so that the driver saves the input.
inline void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz: invariant broken: %s\n", what);
    std::abort();
}

// How often a path was reached, printed at exit when FUZZ_STATS is set: shows whether the
// mutations get past the parser to the checks behind it.
inline void reached(const char* what) {
    struct Counts {
        std::map<std::string, long> n;
        ~Counts() {
            if (std::getenv("FUZZ_STATS"))
                for (const auto& [k, v] : n)
                    std::fprintf(stderr, "fuzz: reached %s %ld times\n", k.c_str(), v);
        }
    };
    static Counts counts;
    ++counts.n[what];
}

}  // namespace fuzz
