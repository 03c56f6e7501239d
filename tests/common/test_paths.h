// A folder or program a test needs, from CTest's environment (the test's CMakeLists.txt sets it
// with set_property(TEST ... ENVIRONMENT)) rather than compiled in: a path inside a -D made
// every clone in another folder recompile the test (See Note [a clone's path in no object]).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ts::testing {

// The value of `name`; a test started outside CTest without it stops with a message naming it.
inline std::string testPath(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') {
        std::fprintf(stderr,
                     "%s is not set: run this test through ctest, or set it to what the test's "
                     "CMakeLists.txt sets\n",
                     name);
        std::exit(2);
    }
    return value;
}

}  // namespace ts::testing
