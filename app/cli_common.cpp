#include "cli_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <csignal>
#include <sstream>
#include <utility>

#include "core/store.h"

namespace ts::cli {

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

namespace {
// from_chars takes no '+', stoll did: keep accepting "+5".
std::string_view withoutPlus(std::string_view s) {
    return s.size() > 1 && s.front() == '+' && s[1] != '-' ? s.substr(1) : s;
}
}  // namespace

std::optional<int64_t> parseInt(const std::string& s) {
    const std::string_view t = withoutPlus(s);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || t.empty()) return std::nullopt;
    return v;
}

int64_t parseIntIn(std::string_view what, const std::string& text, int64_t lo, int64_t hi) {
    const std::string_view t = withoutPlus(text);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    const bool whole = !t.empty() && end == t.data() + t.size();
    if (!whole || (ec != std::errc() && ec != std::errc::result_out_of_range))
        throw BadInput(fmt::format("{}: '{}' is not a whole number", what, text));
    // Beyond int64, from_chars leaves v alone: the sign says which end was passed.
    const bool too_small = ec == std::errc::result_out_of_range ? t.front() == '-' : v < lo;
    if (ec == std::errc::result_out_of_range || v > hi || v < lo)
        throw BadInput(too_small ? fmt::format("{}: {} is out of range (at least {})", what, text, lo)
                                 : fmt::format("{}: {} is out of range (at most {})", what, text, hi));
    return v;
}

uint64_t parseSeed(std::string_view what, const std::string& text) {
    const std::string_view t = withoutPlus(text);
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (!t.empty() && t.front() == '-')
        throw BadInput(fmt::format("{}: {} is out of range (at least 0)", what, text));
    if (t.empty() || end != t.data() + t.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        throw BadInput(fmt::format("{}: '{}' is not a whole number", what, text));
    if (ec == std::errc::result_out_of_range)
        throw BadInput(fmt::format("{}: {} is out of range (at most {})", what, text,
                                   std::numeric_limits<uint64_t>::max()));
    return v;
}

double parseFinite(std::string_view what, const std::string& text) {
    double v = 0;
    const char* first = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw BadInput(fmt::format("{}: '{}' is not a number", what, text));
    if (!std::isfinite(v)) throw BadInput(fmt::format("{}: {} is not a finite number", what, text));
    return v;
}

std::vector<std::string> requireList(std::string_view what, const std::string& value) {
    auto items = splitList(value);
    if (items.empty()) throw BadInput(fmt::format("{}: no value given", what));
    return items;
}

std::vector<int64_t> parseIntList(std::string_view what, const std::string& value, int64_t lo, int64_t hi) {
    std::vector<int64_t> out;
    for (const auto& item : requireList(what, value)) out.push_back(parseIntIn(what, item, lo, hi));
    return out;
}

int64_t parseRunId(const std::string& text) {
    return parseIntIn("run id", text, 1, std::numeric_limits<int64_t>::max());
}

namespace {
std::unique_ptr<ResultStore> open(const std::string& db, ResultStore::Access access) {
    try {
        return std::make_unique<ResultStore>(db.empty() ? ResultStore::defaultPath() : db, access);
    } catch (const StoreDamaged&) {
        throw;  // not a mistake in the command: exit 3, like damage found later
    } catch (const std::exception& e) {
        throw BadInput(fmt::format("--db: {}", e.what()));
    }
}
}  // namespace

std::unique_ptr<ResultStore> openStore(const std::string& db) {
    auto store = open(db, ResultStore::Access::ReadIfNeeded);
    // Opened for reading only: say why a run or a delete cannot write to it.
    if (!store->readOnlyReason().empty())
        throw BadInput(fmt::format("--db: results store {} can only be read here, so nothing can be stored in it "
                                   "(use --no-store or another --db): {}",
                                   store->path(), store->readOnlyReason()));
    return store;
}

std::unique_ptr<ResultStore> openStoreForReading(const std::string& db) {
    return open(db, ResultStore::Access::ReadIfNeeded);
}

CancelToken& interruptToken() {
    static CancelToken token;
    return token;
}

extern "C" void onInterrupt(int) { interruptToken().cancel(); }

void catchInterrupts() {
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
}

namespace {
std::vector<std::pair<int, AddCommand>>& commands() {
    static std::vector<std::pair<int, AddCommand>> all;
    return all;
}
}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommand add) { commands().emplace_back(order, add); }

std::vector<AddCommand> registeredCommands() {
    auto all = commands();
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<AddCommand> out;
    for (const auto& [order, add] : all) out.push_back(add);
    return out;
}

}  // namespace ts::cli
