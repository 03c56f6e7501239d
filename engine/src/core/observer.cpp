#include "core/observer.h"

#include <fmt/format.h>

namespace ts {

std::string storeFailure(const char* what, size_t index, size_t count, const std::exception& e) {
    return fmt::format(
        "could not store {} {} of {}, so the run stops here (its measurement is shown but not "
        "stored): {}",
        what, index + 1, count, e.what());
}

}  // namespace ts
