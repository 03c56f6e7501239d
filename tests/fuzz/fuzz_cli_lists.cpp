// The CLI's parsers of flag values (app/cli_common.cpp) and the names every flag accepts, plus
// printable() on labels. Rejections are BadInput; results must keep their promises.
#include <cmath>
#include <limits>

#include "attention/attention_lab.h"
#include "cli_common.h"
#include "core/config.h"
#include "core/lab.h"
#include "fuzz_common.h"

namespace {

using ts::cli::BadInput;

template <typename F>
void refusedOrFine(F&& f) {
    try {
        f();
    } catch (const BadInput&) {
    }
}

void lists(const std::string& s) {
    for (const auto& item : ts::cli::splitList(s)) {
        fuzz::require(!item.empty() && item.find(',') == std::string::npos,
                      "list items are non-empty, comma-free");
        fuzz::require(item.front() != ' ' && item.back() != ' ', "list items are trimmed");
        ts::parsePrecision(item), ts::parseMode(item), ts::parseAttentionImpl(item),
            ts::parseAttentionPass(item);
        ts::modelPreset(item);
        ts::validateDevice(item);
    }
    refusedOrFine([&] { ts::cli::requireList("--size", s); });
}

void numbers(const std::string& s) {
    refusedOrFine([&] {
        const int64_t v = ts::cli::parseIntIn("--steps", s, 1, 1000000);
        fuzz::require(v >= 1 && v <= 1000000, "parseIntIn stays in its range");
    });
    refusedOrFine([&] { fuzz::require(ts::cli::parseRunId(s) >= 1, "run ids are positive"); });
    refusedOrFine([&] { ts::cli::parseSeed("--seed", s); });
    refusedOrFine([&] {
        fuzz::require(std::isfinite(ts::cli::parseFinite("--lr", s)), "parseFinite is finite");
    });
    refusedOrFine([&] {
        for (int64_t v :
             ts::cli::parseIntList("--context-length", s, 0, std::numeric_limits<int64_t>::max()))
            fuzz::require(v >= 0, "parseIntList stays in its range");
    });
}

void label(const std::string& s) {
    for (unsigned char c : ts::printable(s))
        fuzz::require(c >= 0x20 && c != 0x7f, "printable() has no control bytes");
    for (unsigned char c : ts::printableLines(s))
        fuzz::require(c == '\n' || (c >= 0x20 && c != 0x7f),
                      "printableLines() keeps newlines alone");
    ts::csvEscape(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string s(fuzz::text(data, size));
    lists(s);
    numbers(s);
    label(s);
    return 0;
}
