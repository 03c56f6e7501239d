// trainscope-cli: the headless front end of the engine. One subcommand per lab (cli_<lab>.cpp,
// in the engine's lab order: bench, attention, profile, ...), and
//   trainscope-cli runs ...  list, show, export and delete stored runs of every lab
//   trainscope-cli info      what this machine can run
// Exit codes: 0 success, 2 bad input (message on stderr), 3 a run that failed, 130 stopped.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "core/atomic_file.h"
#include "core/json.h"
#include "core/lab.h"
#include "core/store.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"

namespace {

using namespace ts::cli;

ts::RunInfo requireRun(const ts::ResultStore& store, int64_t id) {
    auto info = store.run(id);
    if (!info) throw BadInput(fmt::format("run {} does not exist in {}", id, store.path()));
    return *info;
}

int runsList(const std::string& db, bool as_json) {
    auto store = openStoreForReading(db);
    const auto runs = store->listRuns();
    if (as_json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : runs)
            arr.push_back({{"id", r.id},
                           {"kind", r.lab},
                           {"label", r.label},
                           {"created", r.created},
                           {"device", r.device_name},
                           {"points", r.point_count},
                           {"ok", r.ok_count},
                           {"planned", r.planned},
                           {"finished", r.finished()}});
        std::cout << ts::dumpJson(arr, 2) << '\n';
        return kOk;
    }
    if (runs.empty()) {
        std::cout << "no runs in " << store->path() << '\n';
        return kOk;
    }
    std::cout << fmt::format("{:>5}  {:<20}  {:<9}  {:>6}  {:>4}  {:<12}  {:<28}  {}\n", "id",
                             "created", "kind", "points", "ok", "ended", "device", "label");
    for (const auto& r : runs) {
        // See Note [unfinished runs]: "no" is a run killed before it ended (or still running).
        const std::string ended = r.finished() ? "yes"
                                  : r.planned > 0
                                      ? fmt::format("no ({}/{})", r.point_count, r.planned)
                                      : "no";
        std::cout << fmt::format("{:>5}  {:<20}  {:<9}  {:>6}  {:>4}  {:<12}  {:<28}  {}\n", r.id,
                                 ts::printable(r.created), ts::printable(r.lab), r.point_count,
                                 r.ok_count, ended, ts::printable(r.device_name).substr(0, 28),
                                 ts::printable(r.label));
    }
    return kOk;
}

// A stored run in a format, and the rows left out of it because they cannot be read (each
// named). Throws before anything is printed or written when the run does not exist or is of
// a lab this build does not know.
struct Report {
    std::string text;
    std::vector<std::string> bad_rows;
};

Report runReport(const ts::ResultStore& store, int64_t id, ts::ReportFormat format,
                 const std::string& table) {
    const auto info = requireRun(store, id);
    const ts::Lab* lab = ts::findLab(info.lab);
    if (!lab)
        throw BadInput(fmt::format(
            "run {} is of kind '{}', which this TrainScope does not know; update TrainScope", id,
            info.lab));
    Report report;
    std::vector<ts::StoredRow> good;
    for (auto& row : store.rows(id, info.lab)) {
        if (const std::string problem = lab->row_problem ? lab->row_problem(row) : "";
            !problem.empty())
            report.bad_rows.push_back(ts::rowError(info, row, problem.c_str()));
        else
            good.push_back(std::move(row));
    }
    // Every field of a stored row (a device or host name, an error) is text from a file anyone
    // could have edited: no control characters reach the terminal or the export.
    // See Note [tables other programs read]: a CSV is one table, --table's (the first by default).
    if (format == ts::ReportFormat::Csv) {
        try {
            report.text = ts::printableLines(ts::runCsv(*lab, info, good, table));
        } catch (const std::invalid_argument& e) {
            throw BadInput(e.what());
        }
        return report;
    }
    if (!table.empty()) throw BadInput("--table: chooses the CSV table; give --format csv too");
    report.text = ts::printableLines(lab->report(info, good, format));
    return report;
}

// The rows a report left out, on stderr: the run is damaged, so the command fails (exit 3)
// after showing what could be read.
int badRowsExit(const Report& report) {
    for (const auto& bad : report.bad_rows)
        std::fprintf(stderr, "trainscope-cli: left out, cannot be read: %s\n", bad.c_str());
    return report.bad_rows.empty() ? kOk : kRunFailed;
}

int runsShow(const std::string& db, int64_t id, ts::ReportFormat format, const std::string& table) {
    auto store = openStoreForReading(db);
    const Report report = runReport(*store, id, format, table);
    std::cout << report.text;
    return badRowsExit(report);
}

// Where --environment writes: "run3.csv" → "run3.environment.json".
std::string environmentPath(const std::string& out) {
    const std::filesystem::path p(out);
    return (p.parent_path() / (p.stem().string() + ".environment.json")).string();
}

// The run's environment and settings as one JSON document: what a CSV leaves out (see Note
// [tables other programs read]).
std::string environmentJson(const ts::RunInfo& info, const std::string& table) {
    auto parsed = [](const std::string& text) {
        try {
            return nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception&) {
            return nlohmann::json::object();
        }
    };
    nlohmann::json j = {{"run", info.id},
                        {"kind", info.lab},
                        {"label", info.label},
                        {"created", info.created},
                        {"environment", parsed(info.environment_json)},
                        {"spec", parsed(info.spec_json)}};
    if (!table.empty()) j["table"] = table;
    return ts::dumpJson(j, 2) + "\n";
}

int runsExport(const std::string& db, int64_t id, ts::ReportFormat format, const std::string& out,
               const std::string& table, bool with_environment) {
    auto store = openStoreForReading(db);
    const Report report = runReport(*store, id, format, table);  // before the target is touched
    if (with_environment && out.empty())
        throw BadInput("--environment: writes beside the file; give -o/--output too");
    if (out.empty()) {
        std::cout << report.text;
        return badRowsExit(report);
    }
    // A missing folder or a folder as the target is the user's mistake (exit 2); so is the
    // store itself. A write that fails on the way (a full disk) is the run's failure (exit 3).
    checkOutputFile("--output", out, store->path());
    const std::string env_path = environmentPath(out);
    if (with_environment) checkOutputFile("--environment", env_path, store->path());
    ts::writeFileAtomically(out, report.text);
    std::fprintf(stderr, "wrote %s\n", out.c_str());
    if (with_environment) {
        ts::writeFileAtomically(env_path, environmentJson(requireRun(*store, id), table));
        std::fprintf(stderr, "wrote %s\n", env_path.c_str());
    }
    return badRowsExit(report);
}

ts::ReportFormat reportFormat(const std::string& name) {
    if (name == "markdown") return ts::ReportFormat::Markdown;
    if (name == "csv") return ts::ReportFormat::Csv;
    if (name == "json") return ts::ReportFormat::Json;
    return ts::ReportFormat::Table;
}

// `trainscope-cli runner-server`: See Note [the runner server] (runner/trainscope_runner/serve.py).
// Prints TRAINSCOPE_RUNNER_SERVER=<socket> on stdout, then keeps the server until Ctrl-C or
// SIGTERM (or, with --while-stdin-open, the end of standard input); the server ends with it.
int runnerServerCommand(const std::string& asked_python, bool while_stdin) {
    const std::string asked = asked_python.empty() ? ts::defaultPython() : asked_python;
    const std::string python = ts::findExecutable(asked);
    if (python.empty())
        throw BadInput(fmt::format(
            "--python: no Python interpreter '{}' (a path, or a name on the PATH)", asked));
    catchInterrupts();
    const ts::RunnerServerProcess server = ts::startRunnerServer(python);
    if (server.pid < 0) {
        std::fprintf(stderr,
                     "trainscope-cli: runner-server: %s did not start serving (can it import "
                     "torch? try: %s -c 'import torch')\n",
                     python.c_str(), python.c_str());
        return kRunFailed;
    }
    std::printf("TRAINSCOPE_RUNNER_SERVER=%s\n", server.socket.c_str());
    std::fflush(stdout);
    std::fprintf(stderr,
                 "runner server %d for %s: export TRAINSCOPE_RUNNER_SERVER=%s, and the commands "
                 "that run Python fork from it; Ctrl-C ends it\n",
                 server.pid, python.c_str(), server.socket.c_str());
    for (;;) {
        if (interruptToken().cancelled()) break;
        int status = 0;
        if (::waitpid(server.pid, &status, WNOHANG) == server.pid) {
            std::fprintf(stderr, "trainscope-cli: runner-server: the server ended\n");
            return kRunFailed;
        }
        pollfd p{STDIN_FILENO, POLLIN, 0};
        const int ready = ::poll(&p, while_stdin ? 1 : 0, 200);
        if (while_stdin && ready > 0) {
            char buf[256];
            if (::read(STDIN_FILENO, buf, sizeof buf) <= 0) break;
        }
    }
    ::kill(server.pid, SIGTERM);
    int status = 0;
    ::waitpid(server.pid, &status, 0);
    return kOk;
}

int infoCommand() {
    const auto& caps = ts::capabilities();
    std::cout << fmt::format("LibTorch {} ({} build)\n", caps.torch_version,
                             caps.torch_cuda_build ? "CUDA" : "CPU-only");
    std::cout << fmt::format("FlashAttention kernels: {}\n",
                             !caps.flash_kernels   ? "not built"
                             : caps.cuda_available ? "built"
                                                   : "built (they need a CUDA GPU; none here)");
    for (const auto& d : caps.devices) {
        std::cout << fmt::format("{:<7} {}", d.id, d.name);
        if (d.total_memory)
            std::cout << fmt::format(", {:.1f} GiB, sm_{}{}", d.total_memory / 1073741824.0,
                                     d.compute_major, d.compute_minor);
        std::cout << fmt::format(", bf16 {}\n", d.bf16 ? "yes" : "no");
        if (!d.flash_kernels.empty())
            std::cout << fmt::format("        attention kernels: {}\n", d.flash_kernels);
    }
    // Where --code's runner comes from, and the Python it runs in unless --python says.
    std::cout << fmt::format("Python runner: {} (python: {})\n", ts::runnerFolder(),
                             ts::defaultPython());
    return kOk;
}

// CLI11 answers an unknown command with "A subcommand is required", which does not name it.
// The same one level down, for the commands that have commands of their own (`precision sum`,
// `distributed bogus`), and for a command word missing there.
void checkCommandName(CLI::App& app, int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return;
    std::vector<std::string> names;
    CLI::App* command = nullptr;
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        if (sub->check_name(argv[1])) command = sub;
        names.push_back(sub->get_name());
    }
    if (!command)
        throw BadInput(
            fmt::format("'{}' is not a command (commands: {})", argv[1], fmt::join(names, ", ")));
    const auto subs = command->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty() || command->get_name() == "runs") return;  // runs says it in its own words
    // A command that runs by itself and has commands besides (`profile`, `profile import`).
    if (command->get_require_subcommand_min() == 0) return;
    names.clear();
    for (const CLI::App* sub : subs) names.push_back(sub->get_name());
    if (argc < 3)
        throw BadInput(
            fmt::format("{}: no command given (one of: {})", argv[1], fmt::join(names, ", ")));
    if (argv[2][0] == '-') return;  // --help, or an option CLI11 judges
    for (const CLI::App* sub : subs)
        if (sub->check_name(argv[2])) return;
    throw BadInput(fmt::format("{}: '{}' is not a command (one of: {})", argv[1], argv[2],
                               fmt::join(names, ", ")));
}

}  // namespace

int ts::cli::runCommandLine(int argc, char** argv) {
    // A reader that goes away (`| head -c1`) or a file-size limit must end the command with a
    // message and exit 3, not kill it with SIGPIPE (141) or SIGXFSZ (153): the writes then fail
    // instead, and the check at the end says so.
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGXFSZ, SIG_IGN);
    CLI::App app{"TrainScope: where the time and memory of a transformer training step go.",
                 "trainscope-cli"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("trainscope-cli ") + TRAINSCOPE_VERSION_STRING);
    int code = kOk;

    for (AddCommand add : registeredCommands()) add(app, code);  // bench, attention, ...

    auto* runs = app.add_subcommand("runs", "List, show, export and delete stored runs");
    // Checked in the callback below rather than by require_subcommand, whose message does
    // not name the word that was not a command.
    runs->require_subcommand(0, 1);
    runs->allow_extras();
    std::string db;
    addDbOption(*runs, db);
    bool list_json = false;
    auto* list = runs->add_subcommand("list", "List the stored runs, newest first");
    list->add_flag("--json", list_json, "As JSON");
    list->callback([&] { code = runsList(db, list_json); });
    const std::string tables =
        "kernels, ops, calltree (profile); sums, tensors, ops, steps (precision); strategies, "
        "memory, "
        "fsdp, checks, allreduce "
        "(distributed)";
    std::string show_id, show_table;
    FormatChoice show_format;
    auto* show = runs->add_subcommand("show", "Show one run's results");
    show->add_option("id", show_id, "Run id (see `runs list`)")->required();
    show_format.add(*show, {"table", "markdown", "csv", "json"},
                    {{"markdown", "Markdown"}, {"csv", "CSV: one table"}, {"json", "JSON"}});
    addTableOption(*show, show_table, tables);
    show->callback([&] {
        code = runsShow(db, parseRunId(show_id), reportFormat(show_format.get()), show_table);
    });
    std::string export_id, export_out, export_table;
    FormatChoice export_format;
    bool export_environment = false;
    auto* exp = runs->add_subcommand("export", "Export one run to a file (or stdout)");
    exp->add_option("id", export_id, "Run id")->required();
    export_format.add(*exp, {"markdown", "csv", "json"},
                      {{"markdown", "Markdown"}, {"csv", "CSV: one table"}, {"json", "JSON"}});
    addTableOption(*exp, export_table, tables);
    exp->add_option("-o,--output", export_out, "Output file (default: stdout)");
    exp->add_flag("--environment", export_environment,
                  "Also write the run's environment and settings as JSON beside the file "
                  "(run3.csv: run3.environment.json)");
    exp->callback([&] {
        code = runsExport(db, parseRunId(export_id), reportFormat(export_format.get()), export_out,
                          export_table, export_environment);
    });
    std::string delete_id;
    auto* del = runs->add_subcommand("delete", "Delete one run and its results");
    del->add_option("id", delete_id, "Run id")->required();
    del->callback([&] {
        const int64_t id = parseRunId(delete_id);
        auto store = openStore(db);
        requireRun(*store, id);
        store->removeRun(id);
        code = kOk;
    });

    // `runs list --db X` and `runs --db X list` both work.
    for (auto* sub : {list, show, exp, del}) sub->fallthrough();
    // Before the chosen command runs: `runs list --bogus` must not print the list first.
    runs->parse_complete_callback([runs] {
        if (const auto extra = runs->remaining(); !extra.empty())
            throw BadInput(fmt::format(
                "runs: '{}' is not a command or option here (commands: list, show, export, delete)",
                extra.front()));
        if (runs->get_subcommands().empty())
            throw BadInput("runs: no command given (list, show, export or delete)");
    });

    app.add_subcommand("info", "What this machine can run: LibTorch, devices, bf16, kernels")
        ->callback([&] { code = infoCommand(); });

    std::string server_python;
    bool server_while_stdin = false;
    auto* server = app.add_subcommand(
        "runner-server",
        "Keep one Python runner server for many commands: every command given its socket "
        "(TRAINSCOPE_RUNNER_SERVER) forks its runners from it instead of importing torch again");
    server->add_option("--python", server_python,
                       "The interpreter with torch (default: TrainScope's, as --code uses)");
    server->add_flag("--while-stdin-open", server_while_stdin,
                     "Also end when standard input closes (for a program that starts it)");
    server->callback([&] { code = runnerServerCommand(server_python, server_while_stdin); });

    // Hardening round two, item 15: an option of one value given twice means the same in every
    // command: the last one wins (as `bench` always had it, so that a script can append an
    // override to a base command line; some commands refused it in CLI11's words).
    std::function<void(CLI::App*)> lastOneWins = [&](CLI::App* sub) {
        for (CLI::App* child : sub->get_subcommands({})) lastOneWins(child);
        for (CLI::Option* opt : sub->get_options())
            if (opt->get_expected_max() >= 1 && opt->get_items_expected_max() <= 1)
                opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    };
    lastOneWins(&app);

    try {
        checkCommandName(app, argc, argv);
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "trainscope-cli: %s\nRun with --help for usage.\n", e.what());
        return kBadInput;
    } catch (const BadInput& e) {
        std::fprintf(stderr, "trainscope-cli: %s\n", e.what());
        return kBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainscope-cli: %s\n", e.what());
        return kRunFailed;
    }
    // A report into a full disk or a closed pipe must not pass for success.
    if (!(std::cout << std::flush)) {
        std::fprintf(stderr,
                     "trainscope-cli: cannot write to standard output (its reader went away, or "
                     "the disk or a file-size limit is full)\n");
        return code == kOk ? kRunFailed : code;
    }
    return code;
}
