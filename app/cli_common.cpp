#include "cli_common.h"

#include <fmt/format.h>

#include <algorithm>
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

std::optional<int64_t> parseInt(const std::string& s) {
    try {
        size_t used = 0;
        const long long v = std::stoll(s, &used);
        if (used != s.size()) return std::nullopt;
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::unique_ptr<ResultStore> openStore(const std::string& db) {
    try {
        return std::make_unique<ResultStore>(db.empty() ? ResultStore::defaultPath() : db);
    } catch (const std::exception& e) {
        throw BadInput(fmt::format("--db: {}", e.what()));
    }
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
