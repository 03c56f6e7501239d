// What the CLI's commands share: exit codes, the bad-input error, list parsing, the store,
// Ctrl-C, and the registry through which each lab's command file (cli_<lab>.cpp) adds its
// subcommand without an edit anywhere else.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/observer.h"
#include "core/result.h"

namespace CLI {
class App;
}

namespace ts {
class ResultStore;
enum class TableFormat;
struct CsvTable;
}  // namespace ts

namespace ts::cli {

inline constexpr int kOk = 0, kBadInput = 2, kRunFailed = 3, kInterrupted = 130;

// Bad input: the message names the bad value; main() prints it and exits with kBadInput.
struct BadInput : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// "a, b,c" → {"a", "b", "c"}; blanks trimmed, empty items dropped.
std::vector<std::string> splitList(const std::string& s);
// The checked forms: each throws BadInput naming `what` (a flag), the text and the limit.
// A whole number in [lo, hi].
int64_t parseIntIn(std::string_view what, const std::string& text, int64_t lo, int64_t hi);
// A seed: 0 to 2^64 - 1 ("-1" is refused, not wrapped around).
uint64_t parseSeed(std::string_view what, const std::string& text);
// A finite number ("inf" and "nan" are refused).
double parseFinite(std::string_view what, const std::string& text);
// splitList, refusing a list with no item ("--size ," or "--size ''").
std::vector<std::string> requireList(std::string_view what, const std::string& value);
// Each item of a comma list checked with parseIntIn.
std::vector<int64_t> parseIntList(std::string_view what, const std::string& value, int64_t lo,
                                  int64_t hi);
// The id of a stored run (`runs show ID`).
int64_t parseRunId(const std::string& text);

// Opens the store at `db` (empty: the default) for writing; a failure is bad input naming
// --db (damage is not: StoreDamaged goes on, exit 3).
std::unique_ptr<ResultStore> openStore(const std::string& db);
// The same for list/show/export: a store that cannot be written here opens read-only.
std::unique_ptr<ResultStore> openStoreForReading(const std::string& db);

// A file the user asked a command to write (--output, --trace, --snapshot): refused up front,
// before any work, as bad input naming `flag`: no file given, a folder, a folder that does not
// exist, the results store at `db` (empty: the default) or its journal files, or any other
// SQLite database (outputTargetProblem).
void checkOutputFile(std::string_view flag, const std::string& path, const std::string& db);
// Writes `content` whole or not at all (writeFileAtomically), after checking the target again
// (it may have changed during the run). False, with the reason on stderr, when it cannot.
bool writeOutputFile(std::string_view flag, const std::string& path, std::string_view content,
                     const std::string& db);

// The whole of a file the user gave a command to read (`profile import FILE`): bad input naming
// `what` when it does not exist, is a folder or no regular file, is larger than 4 GiB or cannot
// be read.
std::string readInputFile(std::string_view what, const std::string& path);

// The store options every lab's command shares: --db, --label and --no-store (what is not
// stored: `what`, "the results").
void addStoreOptions(CLI::App& cmd, std::string& db, std::string& label, bool& no_store,
                     const std::string& what = "the results");
// --cuda-profiler-range (See Note [capture ranges], runtime/step_ranges.h): cudaProfilerStart
// and Stop around `steps` (what the lab calls its measured steps).
void addCudaProfilerRangeOption(CLI::App& cmd, bool& on, const std::string& steps);
// The note on stderr when --cuda-profiler-range is given for a run on a device that is not
// CUDA's: it does nothing there (the NVTX ranges are pushed all the same).
void noteCudaProfilerRangeOff(bool on, const std::string& device);
// --db alone (`runs`, reading).
void addDbOption(CLI::App& cmd, std::string& db);

// A lab's run in the store, as every lab's command starts it: the store at `db` opened (as
// openStore does) and the run created with its spec, announced on stderr ("run 3 → path")
// unless `quiet`; nothing when `no_store`.
// A run in the store for one command. When the command is done with it (the object goes, on
// any return or exception) the run is marked ended; a process killed first leaves it unfinished
// (see Note [unfinished runs] in engine/src/core/store.h).
struct StoredRun {
    std::unique_ptr<ts::ResultStore> store;
    int64_t id = 0;
    ts::ResultStore* get() const { return store.get(); }
    StoredRun() = default;
    StoredRun(StoredRun&&) = default;
    StoredRun& operator=(StoredRun&&) = default;
    ~StoredRun();
};
// `env`: where the run is measured (stored with it); `planned`: the points it means to measure
// (0: not known).
StoredRun startStoredRun(std::string_view lab, const std::string& db, const std::string& label,
                         bool no_store, bool quiet, const std::string& spec_json,
                         const ts::Environment& env, int planned = 0);
// Note [one spelling]: every command names its output format with --format NAME ("table",
// "markdown", "csv", "jsonl", "json": those it has), its batch with --batch-size and its measured
// steps or iterations with --steps. The spellings commands had before (--markdown, --csv,
// --jsonl, --json; --batch; --iters) stay as aliases, so that old scripts keep working; a
// format flag and a --format that differ are refused.
class FormatChoice {
public:
    // Adds --format to `cmd` (one of `names`, the first the default) and, for each of `flags`
    // (a name and its help), --NAME as the alias of --format NAME; to `group` where given (an
    // option group that lists them under "output").
    void add(CLI::App& cmd, std::vector<std::string> names,
             const std::vector<std::pair<std::string, std::string>>& flags,
             CLI::App* group = nullptr);
    // The format asked for (the default where none was); BadInput naming both where --format
    // and a flag, or two flags, differ.
    std::string get() const;

private:
    std::vector<std::string> names_;
    std::string format_;
    std::map<std::string, bool> flags_;  // CLI11 binds to these: a map's values stay put
};
// --table NAME: which of a run's tables a CSV holds (see Note [tables other programs read]).
void addTableOption(CLI::App& cmd, std::string& table, const std::string& tables);
// The CSV table named `table` of `tables`, or the first where `table` is empty; BadInput naming
// the tables there are where it is none of them.
std::string chooseCsvTable(const std::vector<ts::CsvTable>& tables, const std::string& table);

// The table format --markdown and --csv ask for (aligned text otherwise).
ts::TableFormat tableFormat(bool markdown, bool csv);
// A lab run's exit code, decided alike by every command: a failure the run reported (a point
// or row that could not be stored, an output file not written) is 3; then Ctrl-C, 130; then a
// point that failed, 3; else 0.
int runExitCode(bool run_failed, bool interrupted, bool point_failed);

// Ctrl-C and SIGTERM cancel this token from now on.
CancelToken& interruptToken();
void catchInterrupts();

// A lab's subcommand: `add` registers it on the app; when it runs it sets `exit_code`.
using AddCommand = void (*)(CLI::App& app, int& exit_code);
// Registers lab `lab`'s command at start-up (a static object in the command's file, by the
// lab's id in the engine's registry: "bench").
struct CommandRegistration {
    CommandRegistration(std::string_view lab, AddCommand add);
};
// Every registered command, in the engine's lab order (engine/src/labs.cpp).
std::vector<AddCommand> registeredCommands();

// The whole command line, what `main` does (app/main_cli.cpp): parses argv, runs the command and
// returns the exit code. The tests' fork server (tests/common/cli_fork_server.cpp) runs it in
// children forked after LibTorch's start-up.
int runCommandLine(int argc, char** argv);

}  // namespace ts::cli
