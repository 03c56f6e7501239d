// What the CLI's commands share: exit codes, the bad-input error, list parsing, the store,
// Ctrl-C, and the registry through which each lab's command file (cli_<lab>.cpp) adds its
// subcommand without an edit anywhere else.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/observer.h"

namespace CLI {
class App;
}

namespace ts {
class ResultStore;
}

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

// Ctrl-C and SIGTERM cancel this token from now on.
CancelToken& interruptToken();
void catchInterrupts();

// A lab's subcommand: `add` registers it on the app; when it runs it sets `exit_code`.
using AddCommand = void (*)(CLI::App& app, int& exit_code);
// Registers a command at start-up (a static object in the command's file); `order` sorts
// the commands in --help.
struct CommandRegistration {
    CommandRegistration(int order, AddCommand add);
};
// Every registered command, in order.
std::vector<AddCommand> registeredCommands();

}  // namespace ts::cli
