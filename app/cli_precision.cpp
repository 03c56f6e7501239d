// `trainscope-cli precision accumulate|autocast|train`: the precision lab from the command line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "core/json.h"
#include "core/lab.h"
#include "core/point.h"
#include "core/store.h"
#include "core/table.h"
#include "precision/precision.h"
#include "precision/precision_report.h"
#include "runtime/environment.h"

namespace {

using namespace ts;

struct OutputOptions {
    cli::FormatChoice format;  // --format, or its flags (see Note [one spelling])
    std::string table;         // --table: which CSV table
    std::string db, label;
    bool no_store = false;
};

struct AccumulateOptions {
    std::optional<std::string> addend, count;
    std::vector<std::string> dtype;
    bool running_error = false;
    OutputOptions out;
};

struct AutocastOptions {
    std::string model = "toy", device = "cpu";
    std::vector<std::string> dtype;
    std::optional<std::string> batch, context_length, seed;
    OutputOptions out;
};

struct TrainOptions {
    std::vector<std::string> dtype;
    std::string device = "cpu";
    std::optional<std::string> steps, lr, init_scale, batch, seed;
    bool cuda_profiler_range = false;
    OutputOptions out;
};

enum class Format { Table, Markdown, Csv, Json, Jsonl };

// The format asked for; `tables` the CSV tables the command has (--table names one of them).
Format formatOf(const OutputOptions& o, const std::vector<std::string>& tables) {
    const std::string f = o.format.get();
    if (!o.table.empty()) {
        if (f != "csv")
            throw cli::BadInput("--table: chooses the CSV table; give --format csv too");
        if (std::find(tables.begin(), tables.end(), o.table) == tables.end())
            throw cli::BadInput(
                fmt::format("--table: '{}' is not one of {}", o.table, fmt::join(tables, ", ")));
    }
    return f == "markdown" ? Format::Markdown
           : f == "csv"    ? Format::Csv
           : f == "json"   ? Format::Json
           : f == "jsonl"  ? Format::Jsonl
                           : Format::Table;
}

// See Note [tables other programs read]: the one table --table names (the first by default).
void printCsv(const std::vector<CsvTable>& tables, const std::string& table) {
    std::printf("%s", cli::chooseCsvTable(tables, table).c_str());
}

std::vector<std::string> dtypeItems(const std::vector<std::string>& values) {
    std::vector<std::string> items;
    for (const auto& v : values)
        for (auto& item : cli::splitList(v)) items.push_back(std::move(item));
    if (items.empty()) throw cli::BadInput("--dtype: no value given");
    return items;
}

// --device as every lab reads it (validateDevice), refused here in the flag's name.
void checkDeviceFlag(const std::string& device) {
    if (const std::string problem = validateDevice(device); !problem.empty())
        throw cli::BadInput("--device: " + problem);
}

AccumulationSpec buildAccumulationSpec(const AccumulateOptions& o) {
    AccumulationSpec spec;
    if (o.addend) spec.addend = cli::parseFinite("--addend", *o.addend);
    if (o.count) spec.count = cli::parseIntIn("--count", *o.count, 1, kMaxAccumulationCount);
    if (!o.dtype.empty()) {
        spec.fp16 = spec.bf16 = false;
        for (const auto& d : dtypeItems(o.dtype)) {
            if (d == "fp16")
                spec.fp16 = true;
            else if (d == "bf16")
                spec.bf16 = true;
            else if (d != "fp32")
                throw cli::BadInput(
                    fmt::format("--dtype: unknown value '{}' (choose from fp32, fp16, bf16)", d));
        }
    }
    if (const auto errors = validateAccumulationSpec(spec); !errors.empty())
        throw cli::BadInput("--addend/--count: " + errors.front());
    return spec;
}

std::vector<AutocastSpec> buildAutocastSpecs(const AutocastOptions& o) {
    AutocastSpec base;
    base.model = o.model;
    base.device = o.device;
    checkDeviceFlag(base.device);
    if (o.batch) base.batch = cli::parseIntIn("--batch-size", *o.batch, 1, 65536);
    if (o.context_length)
        base.context_length = cli::parseIntIn("--context-length", *o.context_length, 1, 65536);
    if (o.seed) base.seed = cli::parseSeed("--seed", *o.seed);
    if (base.model != "toy" && !modelPreset(base.model))
        throw cli::BadInput(fmt::format("--model: unknown model '{}' (choose toy or a size: {})",
                                        base.model, fmt::join(modelPresetNames(), ", ")));
    std::vector<AutocastSpec> specs;
    for (const auto& d : o.dtype.empty() ? std::vector<std::string>{"bf16"} : dtypeItems(o.dtype)) {
        const auto p = parsePrecision(d);
        if (!p || *p == Precision::FP32)
            throw cli::BadInput(
                fmt::format("--dtype: '{}' is no autocast dtype (choose bf16 or fp16)", d));
        AutocastSpec s = base;
        s.dtype = *p;
        if (const auto errors = validateAutocastSpec(s); !errors.empty())
            throw cli::BadInput(errors.front());
        if (const auto problems = checkRunnable({s.device, {s.dtype}, {}}); !problems.empty())
            throw cli::BadInput(problems.front());
        if (const auto problem = autocastHostMemoryProblem(s); !problem.empty())
            throw cli::BadInput(problem);
        specs.push_back(s);
    }
    return specs;
}

TrainNumericsSpec buildTrainSpec(const TrainOptions& o) {
    TrainNumericsSpec spec;
    spec.device = o.device;
    if (!o.dtype.empty()) {
        spec.precisions.clear();
        for (const auto& d : dtypeItems(o.dtype)) {
            const auto p = parsePrecision(d);
            if (!p)
                throw cli::BadInput(
                    fmt::format("--dtype: unknown value '{}' (choose from fp32, bf16, fp16)", d));
            spec.precisions.push_back(*p);
        }
    }
    if (o.steps)
        spec.steps =
            static_cast<int>(cli::parseIntIn("--steps", *o.steps, 1, kMaxTrainNumericsSteps));
    checkDeviceFlag(spec.device);
    if (o.lr) {
        spec.lr = cli::parseFinite("--lr", *o.lr);
        if (!(spec.lr > 0 && spec.lr < kMaxLearningRate))
            throw cli::BadInput(
                fmt::format("--lr: the learning rate '{}' is not in (0, 10)", *o.lr));
    }
    if (o.init_scale) {
        spec.init_scale = cli::parseFinite("--init-scale", *o.init_scale);
        if (!(spec.init_scale >= 1 && spec.init_scale <= kMaxInitialLossScale))
            throw cli::BadInput(fmt::format(
                "--init-scale: the initial loss scale '{}' is not in 1..1e30", *o.init_scale));
    }
    if (o.batch) spec.batch = cli::parseIntIn("--batch-size", *o.batch, 1, 65536);
    if (o.seed) spec.seed = cli::parseSeed("--seed", *o.seed);
    if (const auto errors = validateTrainNumericsSpec(spec); !errors.empty())
        throw cli::BadInput(errors.front());
    if (const auto problems = checkRunnable({spec.device, spec.precisions, {}}); !problems.empty())
        throw cli::BadInput(problems.front());
    spec.cuda_profiler_range = o.cuda_profiler_range;
    cli::noteCudaProfilerRangeOff(o.cuda_profiler_range, spec.device);
    return spec;
}

class CliObserver : public Observer {
public:
    void log(LogLevel, const std::string& message) override {
        std::fprintf(stderr, "%s\n", message.c_str());
    }
};

// Opens the store and creates the run, unless --no-store.
// The run is marked ended when the returned object goes (see Note [unfinished runs]).
cli::StoredRun startRun(const OutputOptions& o, const std::string& spec_json,
                        const std::string& device, int64_t& run_id, int planned = 0) {
    cli::StoredRun run =
        cli::startStoredRun(kPrecisionLab, o.db, o.label, o.no_store, /*quiet=*/false, spec_json,
                            currentEnvironment(device), planned);
    run_id = run.id;
    return run;
}

int runAccumulate(const AccumulateOptions& o) {
    AccumulationSpec spec;
    Format format;
    try {
        spec = buildAccumulationSpec(o);
        format = formatOf(o.out, {"sums"});
    } catch (const cli::BadInput& e) {
        std::fprintf(stderr, "trainscope-cli precision accumulate: %s\n", e.what());
        return cli::kBadInput;
    }
    cli::StoredRun store;
    int64_t run_id = 0;
    try {
        store = startRun(o.out, accumulationSpecJson(spec), "cpu", run_id);
    } catch (const cli::BadInput& e) {  // a store that can only be read, an output to refuse
        std::fprintf(stderr, "trainscope-cli precision accumulate: %s\n", e.what());
        return cli::kBadInput;
    } catch (const std::exception& e) {  // the store cannot be written: as every command, exit 3
        std::fprintf(stderr, "trainscope-cli precision accumulate: %s\n", e.what());
        return cli::kRunFailed;
    }
    CliObserver obs;
    std::vector<AccumulationResult> results;
    try {
        results = runAccumulation(spec, obs, store.get(), run_id);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainscope-cli precision accumulate: run failed: %s\n", e.what());
        return cli::kRunFailed;
    }
    switch (format) {
        case Format::Csv:
            printCsv(precisionCsvTables(results, {}, {}), o.out.table);
            break;
        case Format::Jsonl:
            for (const auto& r : results)
                std::printf("%s\n", accumulationJsonLine(r, o.running_error).c_str());
            break;
        case Format::Json: {
            std::string out = "{\"sums\": [";
            for (size_t i = 0; i < results.size(); ++i)
                out += (i ? ", " : "") + accumulationJsonLine(results[i], o.running_error);
            std::printf("%s]}\n", out.c_str());
            break;
        }
        case Format::Markdown:
        case Format::Table:
            std::printf("Sums of %s × %lld (exact %s):\n\n", fmt::format("{}", spec.addend).c_str(),
                        static_cast<long long>(spec.count),
                        fmt::format("{}", results.front().exact).c_str());
            std::printf(
                "%s", accumulationTable(results, format == Format::Markdown ? TableFormat::Markdown
                                                                            : TableFormat::Text)
                          .c_str());
            break;
    }
    return cli::kOk;
}

int runAutocast(const AutocastOptions& o) {
    std::vector<AutocastSpec> specs;
    Format format;
    try {
        specs = buildAutocastSpecs(o);
        format = formatOf(o.out, {"tensors", "ops"});
    } catch (const cli::BadInput& e) {
        std::fprintf(stderr, "trainscope-cli precision autocast: %s\n", e.what());
        return cli::kBadInput;
    }
    cli::StoredRun store;
    int64_t run_id = 0;
    try {
        store = startRun(o.out, autocastSpecJson(specs.front()), specs.front().device, run_id,
                         static_cast<int>(specs.size()));
    } catch (const cli::BadInput& e) {  // a store that can only be read, an output to refuse
        std::fprintf(stderr, "trainscope-cli precision autocast: %s\n", e.what());
        return cli::kBadInput;
    } catch (const std::exception& e) {  // the store cannot be written: as every command, exit 3
        std::fprintf(stderr, "trainscope-cli precision autocast: %s\n", e.what());
        return cli::kRunFailed;
    }
    CliObserver obs;
    int failed = 0;
    std::string json_out;
    std::vector<AutocastReport> reports;  // --format csv: the table at the end
    for (size_t i = 0; i < specs.size(); ++i) {
        AutocastReport r;
        try {
            r = runAutocastInspector(specs[i], obs, nullptr);
            if (store.get()) storeAutocast(*store.get(), run_id, static_cast<int>(i), r);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "trainscope-cli precision autocast: run failed: %s\n", e.what());
            return cli::kRunFailed;
        }
        failed += r.status != Status::Ok;
        switch (format) {
            case Format::Csv:
                if (const std::string note = autocastPolicyNote(r); !note.empty())
                    std::fprintf(stderr, "%s\n", note.c_str());
                reports.push_back(r);
                break;
            case Format::Jsonl:
                std::printf("%s\n", autocastJsonLine(r).c_str());
                if (const std::string note = autocastPolicyNote(r); !note.empty())
                    std::fprintf(stderr, "%s\n", note.c_str());
                break;
            case Format::Json:
                json_out += (i ? ", " : "") + autocastJsonLine(r);
                if (const std::string note = autocastPolicyNote(r); !note.empty())
                    std::fprintf(stderr, "%s\n", note.c_str());
                break;
            case Format::Markdown:
            case Format::Table: {
                const TableFormat tf =
                    format == Format::Markdown ? TableFormat::Markdown : TableFormat::Text;
                std::printf("%sAutocast %s on %s, model %s%s\n\n", i ? "\n" : "",
                            std::string(toString(r.spec.dtype)).c_str(),
                            printable(r.spec.device).c_str(), printable(r.spec.model).c_str(),
                            r.status == Status::Ok ? ":" : (": " + printable(r.error)).c_str());
                if (format == Format::Markdown) {  // see Note [tables other programs read]
                    RunInfo spec;
                    spec.spec_json = autocastSpecJson(specs[i]);
                    std::printf("Settings: %s.\n\n", markdownText(specSettings(spec)).c_str());
                }
                // See Note [autocast on the CPU]: the CPU's policy is not the GPU's.
                if (const std::string note = autocastPolicyNote(r); !note.empty())
                    std::printf("%s\n\n",
                                (format == Format::Markdown ? markdownText(note) : note).c_str());
                std::printf("%s", autocastTable(r, tf).c_str());
                if (!r.ops.empty())
                    std::printf(
                        "\nOps (computed in: the dtypes of the inputs the kernel got):\n\n%s",
                        autocastOpsTable(r, tf).c_str());
                break;
            }
        }
    }
    if (format == Format::Json) std::printf("{\"reports\": [%s]}\n", json_out.c_str());
    if (format == Format::Csv) {
        printCsv(precisionCsvTables({}, reports, {}), o.out.table);  // "tensors" by default
    }
    return failed ? cli::kRunFailed : cli::kOk;
}

int runTrain(const TrainOptions& o) {
    TrainNumericsSpec spec;
    Format format;
    try {
        spec = buildTrainSpec(o);
        format = formatOf(o.out, {"steps"});
    } catch (const cli::BadInput& e) {
        std::fprintf(stderr, "trainscope-cli precision train: %s\n", e.what());
        return cli::kBadInput;
    }
    cli::StoredRun store;
    int64_t run_id = 0;
    try {
        store = startRun(o.out, trainNumericsSpecJson(spec), spec.device, run_id);
    } catch (const cli::BadInput& e) {  // a store that can only be read, an output to refuse
        std::fprintf(stderr, "trainscope-cli precision train: %s\n", e.what());
        return cli::kBadInput;
    } catch (const std::exception& e) {  // the store cannot be written: as every command, exit 3
        std::fprintf(stderr, "trainscope-cli precision train: %s\n", e.what());
        return cli::kRunFailed;
    }
    CliObserver obs;
    cli::catchInterrupts();
    std::vector<TrainNumericsCurve> curves;
    try {
        curves = runTrainNumerics(spec, obs, cli::interruptToken(), store.get(), run_id);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainscope-cli precision train: run failed: %s\n", e.what());
        return cli::kRunFailed;
    }
    switch (format) {
        case Format::Csv:
            printCsv(precisionCsvTables({}, {}, curves), o.out.table);
            break;
        case Format::Jsonl:
            for (const auto& c : curves) std::printf("%s\n", trainNumericsJsonLine(c).c_str());
            break;
        case Format::Json: {
            std::string out = "{\"curves\": [";
            for (size_t i = 0; i < curves.size(); ++i)
                out += (i ? ", " : "") + trainNumericsJsonLine(curves[i]);
            std::printf("%s]}\n", out.c_str());
            break;
        }
        case Format::Markdown:
        case Format::Table:
            std::printf("The toy model trained %d steps on %s (batch %lld, AdamW lr %s):\n\n",
                        spec.steps, printable(spec.device).c_str(),
                        static_cast<long long>(spec.batch), fmt::format("{}", spec.lr).c_str());
            std::printf(
                "%s", trainNumericsTable(curves, format == Format::Markdown ? TableFormat::Markdown
                                                                            : TableFormat::Text)
                          .c_str());
            break;
    }
    if (cli::interruptToken().cancelled()) return cli::kInterrupted;
    for (const auto& c : curves)
        if (c.status == Status::Failed) return cli::kRunFailed;
    return cli::kOk;
}

// `tables`: the CSV tables of the command, for --table's help.
void addOutputOptions(CLI::App* sub, OutputOptions& o, const std::string& tables) {
    o.format.add(*sub, {"table", "markdown", "csv", "json", "jsonl"},
                 {{"markdown", "a Markdown table"},
                  {"csv", "a CSV table"},
                  {"json", "one JSON document"},
                  {"jsonl", "one JSON object a line"}});
    cli::addTableOption(*sub, o.table, tables);
    cli::addStoreOptions(*sub, o.db, o.label, o.no_store);
}

void addPrecisionCommand(CLI::App& app, int& exit_code) {
    CLI::App* precision = app.add_subcommand(
        "precision",
        "Precision lab: accumulation in fp32/fp16/bf16, what autocast does, training numerics");
    precision->require_subcommand(1);

    auto a = std::make_shared<AccumulateOptions>();
    CLI::App* acc = precision->add_subcommand(
        "accumulate", "The course's sums: s += addend, count times, in fp32, fp16, bf16 and mixed");
    acc->add_option("--addend", a->addend, "the addend (default 0.01)");
    acc->add_option("--count", a->count, "how many adds (default 1000)");
    acc->add_option("--dtype", a->dtype,
                    "low-precision formats besides fp32: fp16,bf16 (default both)");
    acc->add_flag("--running-error", a->running_error,
                  "with --json/--jsonl: the error after every step");
    addOutputOptions(acc, a->out, "sums");
    acc->callback([a, &exit_code] { exit_code = runAccumulate(*a); });

    auto c = std::make_shared<AutocastOptions>();
    CLI::App* cast = precision->add_subcommand(
        "autocast", "Run a model once under autocast and show every tensor's dtype");
    cast->add_option("--model", c->model,
                     "toy (the course's Linear→ReLU→LayerNorm→Linear) or an LM size");
    cast->add_option("--device", c->device, "cpu, cuda or cuda:N (default cpu)");
    cast->add_option("--dtype", c->dtype, "autocast dtypes: bf16,fp16 (default bf16)");
    cast->add_option("--batch-size,--batch", c->batch, "batch size (default 8)");
    cast->add_option("--context-length", c->context_length,
                     "the LM's sequence length (default 16)");
    cast->add_option("--seed", c->seed, "random seed of weights and inputs");
    addOutputOptions(cast, c->out, "tensors, ops");
    cast->callback([c, &exit_code] { exit_code = runAutocast(*c); });

    auto t = std::make_shared<TrainOptions>();
    CLI::App* train = precision->add_subcommand(
        "train", "Train the toy model in fp32, bf16 and fp16 (loss scaling) from the same start");
    train->add_option("--dtype", t->dtype, "precisions: fp32,bf16,fp16 (default all three)");
    train->add_option("--device", t->device, "cpu, cuda or cuda:N (default cpu)");
    train->add_option("--steps", t->steps, "training steps (default 50)");
    cli::addCudaProfilerRangeOption(*train, t->cuda_profiler_range,
                                    "each precision's training steps");
    train->add_option("--lr", t->lr, "AdamW's learning rate (default 0.01)");
    train->add_option("--init-scale", t->init_scale, "fp16's first loss scale (default 65536)");
    train->add_option("--batch-size,--batch", t->batch, "batch size (default 64)");
    train->add_option("--seed", t->seed, "random seed of weights and data");
    addOutputOptions(train, t->out, "steps");
    train->callback([t, &exit_code] { exit_code = runTrain(*t); });
}

const cli::CommandRegistration registration(ts::kPrecisionLab, addPrecisionCommand);

}  // namespace
