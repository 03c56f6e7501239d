#include "cli_common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>
#include <utility>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/lab.h"
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
// A whole number of type T in [lo, hi], or BadInput naming `what`, the text and the limit.
template <typename T>
T wholeNumberIn(std::string_view what, const std::string& text, T lo, T hi) {
    std::string_view t = text;
    if (t.size() > 1 && t.front() == '+' && t[1] != '-') t.remove_prefix(1);  // as stoll took it
    // Unsigned from_chars takes no '-': read the digits, and the sign makes them too small.
    const bool negative_unsigned = std::is_unsigned_v<T> && t.size() > 1 && t.front() == '-';
    if (negative_unsigned) t.remove_prefix(1);
    T v{};
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    const bool beyond = ec == std::errc::result_out_of_range;
    if (t.empty() || end != t.data() + t.size() || (ec != std::errc() && !beyond))
        throw BadInput(fmt::format("{}: '{}' is not a whole number", what, text));
    // Beyond the type, from_chars leaves v alone: the sign says which end was passed.
    const bool too_small = negative_unsigned ? beyond || v != 0
                           : beyond          ? t.front() == '-'
                                             : v < lo;
    if (too_small)
        throw BadInput(fmt::format("{}: {} is out of range (at least {})", what, text, lo));
    if (beyond || v > hi)
        throw BadInput(fmt::format("{}: {} is out of range (at most {})", what, text, hi));
    return v;
}
}  // namespace

int64_t parseIntIn(std::string_view what, const std::string& text, int64_t lo, int64_t hi) {
    return wholeNumberIn(what, text, lo, hi);
}

uint64_t parseSeed(std::string_view what, const std::string& text) {
    return wholeNumberIn(what, text, uint64_t{0}, std::numeric_limits<uint64_t>::max());
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

std::vector<int64_t> parseIntList(std::string_view what, const std::string& value, int64_t lo,
                                  int64_t hi) {
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
        throw BadInput(fmt::format(
            "--db: results store {} can only be read here, so nothing can be stored in it "
            "(use --no-store or another --db): {}",
            store->path(), store->readOnlyReason()));
    return store;
}

std::unique_ptr<ResultStore> openStoreForReading(const std::string& db) {
    return open(db, ResultStore::Access::ReadIfNeeded);
}

namespace {
// The store a command would write to: --db, else the default (no folder is made for it here).
std::string storePathOf(const std::string& db) {
    if (!db.empty()) return db;
    try {
        return ResultStore::defaultPath();
    } catch (const std::exception&) {
        return {};  // no HOME: there is no default store to protect
    }
}
}  // namespace

void checkOutputFile(std::string_view flag, const std::string& path, const std::string& db) {
    namespace fs = std::filesystem;
    if (path.empty()) throw BadInput(fmt::format("{}: no file given", flag));
    if (const std::string problem = outputTargetProblem(path, storePathOf(db)); !problem.empty())
        throw BadInput(fmt::format("{}: {}", flag, problem));
    std::error_code ec;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw BadInput(fmt::format("{}: the folder of '{}' does not exist", flag, path));
}

bool writeOutputFile(std::string_view flag, const std::string& path, std::string_view content,
                     const std::string& db) {
    try {
        if (const std::string problem = outputTargetProblem(path, storePathOf(db));
            !problem.empty())
            throw std::runtime_error(problem);
        writeFileAtomically(path, content);
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %.*s: nothing written: %s\n", static_cast<int>(flag.size()),
                     flag.data(), e.what());
        return false;
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

void addCudaProfilerRangeOption(CLI::App& cmd, bool& on, const std::string& steps) {
    cmd.add_flag("--cuda-profiler-range", on,
                 "Call cudaProfilerStart/Stop around " + steps +
                     ", for `nsys profile --capture-range=cudaProfilerApi`; nothing on the CPU. "
                     "Warm-up and measured steps are NVTX ranges \"warmup\" and \"measured\" "
                     "either way");
}

void noteCudaProfilerRangeOff(bool on, const std::string& device) {
    if (on && device.rfind("cuda", 0) != 0)
        std::fprintf(stderr,
                     "note: --cuda-profiler-range does nothing for a run on %s: "
                     "cudaProfilerStart and cudaProfilerStop are for a CUDA device\n",
                     device.c_str());
}

void addDbOption(CLI::App& cmd, std::string& db) {
    cmd.add_option(
        "--db", db,
        "Results store (default: $TRAINSCOPE_DB or ~/.local/share/trainscope/results.db)");
}

void addStoreOptions(CLI::App& cmd, std::string& db, std::string& label, bool& no_store,
                     const std::string& what) {
    addDbOption(cmd, db);
    cmd.add_option("--label", label, "A label for this run in the store");
    cmd.add_flag("--no-store", no_store, "Do not store " + what);
}

StoredRun::~StoredRun() {
    if (!store || id == 0) return;
    try {
        store->finishRun(id);
    } catch (const std::exception&) {
        // A store deleted or replaced mid-run has said so already; the run stays unfinished.
    }
}

std::string readInputFile(std::string_view what, const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw BadInput(fmt::format("{}: cannot read '{}': no such file", what, path));
    if (fs::is_directory(st))
        throw BadInput(fmt::format("{}: '{}' is a directory, not a file", what, path));
    if (!fs::is_regular_file(st))
        throw BadInput(fmt::format("{}: '{}' is not a regular file", what, path));
    if (const auto size = fs::file_size(path, ec); !ec && size > (uintmax_t{4} << 30))
        throw BadInput(fmt::format("{}: '{}' has {} bytes, more than 4 GiB", what, path, size));
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) throw BadInput(fmt::format("{}: cannot read '{}'", what, path));
    return text.str();
}

StoredRun startStoredRun(std::string_view lab, const std::string& db, const std::string& label,
                         bool no_store, bool quiet, const std::string& spec_json,
                         const ts::Environment& env, int planned) {
    StoredRun run;
    if (no_store) return run;
    run.store = openStore(db);
    run.id = run.store->createRun(std::string(lab), label, spec_json, env.device_name, planned,
                                  ts::toJson(env).dump());
    if (!quiet)
        std::fprintf(stderr, "run %lld → %s\n", static_cast<long long>(run.id),
                     run.store->path().c_str());
    return run;
}

void FormatChoice::add(CLI::App& cmd, std::vector<std::string> names,
                       const std::vector<std::pair<std::string, std::string>>& flags,
                       CLI::App* group) {
    names_ = std::move(names);
    CLI::App& where = group ? *group : cmd;
    where
        .add_option(
            "--format", format_,
            fmt::format("Output format: {} (default {})", fmt::join(names_, " | "), names_.front()))
        ->check(CLI::IsMember(names_));
    for (const auto& [name, help] : flags)
        where.add_flag("--" + name, flags_[name], fmt::format("{} (--format {})", help, name));
}

std::string FormatChoice::get() const {
    std::vector<std::string> asked;
    if (!format_.empty()) asked.push_back("--format " + format_);
    std::string chosen = format_;
    for (const auto& [name, set] : flags_) {
        if (!set) continue;
        asked.push_back("--" + name);
        if (!chosen.empty() && chosen != name)
            throw BadInput(
                fmt::format("{} ask for two output formats: give one", fmt::join(asked, " and ")));
        chosen = name;
    }
    return chosen.empty() ? names_.front() : chosen;
}

void addTableOption(CLI::App& cmd, std::string& table, const std::string& tables) {
    cmd.add_option("--table", table,
                   fmt::format("CSV: which table, each its own CSV: {} (default: the first the "
                               "run has)",
                               tables));
}

std::string chooseCsvTable(const std::vector<ts::CsvTable>& tables, const std::string& table) {
    try {
        return ts::pickCsvTable(tables, table, "these results");
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
}

ts::TableFormat tableFormat(bool markdown, bool csv) {
    return csv        ? ts::TableFormat::Csv
           : markdown ? ts::TableFormat::Markdown
                      : ts::TableFormat::Text;
}

int runExitCode(bool run_failed, bool interrupted, bool point_failed) {
    if (run_failed) return kRunFailed;
    if (interrupted) return kInterrupted;
    return point_failed ? kRunFailed : kOk;
}

namespace {
std::vector<std::pair<std::string, AddCommand>>& commands() {
    static std::vector<std::pair<std::string, AddCommand>> all;
    return all;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string_view lab, AddCommand add) {
    commands().emplace_back(std::string(lab), add);
}

std::vector<AddCommand> registeredCommands() {
    // In the engine's lab order (engine/src/labs.cpp); a lab the registry does not know last.
    auto rank = [](const std::string& id) {
        const auto& all = ts::labs();
        for (size_t i = 0; i < all.size(); ++i)
            if (all[i].id == id) return i;
        return all.size();
    };
    auto all = commands();
    std::stable_sort(all.begin(), all.end(),
                     [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
    std::vector<AddCommand> out;
    for (const auto& [lab, add] : all) out.push_back(add);
    return out;
}

}  // namespace ts::cli
