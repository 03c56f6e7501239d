// `trainscope-cli attention`: the attention lab from the command line.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention_lab.h"
#include "attention/attention_report.h"
#include "cli_common.h"
#include "core/store.h"
#include "core/table.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"

namespace {

using namespace ts;

struct AttentionOptions {
    std::vector<std::string> impl, seq, head_dim, batch, heads, dtype, pass;
    std::string preset, device, code, python;
    bool device_given = false, preset_given = false;
    bool causal = false, no_causal = false, cuda_profiler_range = false;
    std::optional<std::string> warmup, steps, seed;  // text, checked in buildSpec
    cli::FormatChoice
        format;  // --format, or --markdown / --csv / --jsonl (see Note [one spelling])
    bool markdown = false, csv = false, jsonl = false;
    std::string db, label;
    bool no_store = false;
};

// The items of a list flag, given as "a,b" or "a b" or repeated. A flag given with nothing in
// it ("--seq ,") must not fall back to the preset's values. (Split here rather than by CLI11's
// delimiter, which takes the next flag as the value when the list is empty.)
std::vector<std::string> requireValues(const std::vector<std::string>& values, const char* flag) {
    std::vector<std::string> items;
    for (const auto& v : values)
        for (auto& item : cli::splitList(v)) items.push_back(std::move(item));
    if (items.empty()) throw cli::BadInput(fmt::format("{}: no value given", flag));
    return items;
}

std::vector<int64_t> positiveInts(const std::vector<std::string>& values, const char* flag) {
    std::vector<int64_t> out;
    for (const auto& s : requireValues(values, flag)) {
        int64_t x = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
        if (ec != std::errc() || end != s.data() + s.size() || x < 1)
            throw cli::BadInput(fmt::format("{}: '{}' is not a positive integer", flag, s));
        out.push_back(x);
    }
    return out;
}

template <typename T, typename Parse>
std::vector<T> parsed(const std::vector<std::string>& values, const char* flag, Parse parse,
                      const char* choices) {
    std::vector<T> out;
    for (const auto& s : requireValues(values, flag)) {
        const auto v = parse(s);
        if (!v)
            throw cli::BadInput(
                fmt::format("{}: unknown value '{}' (choose from {})", flag, s, choices));
        out.push_back(*v);
    }
    return out;
}

AttentionBenchSpec buildSpec(const AttentionOptions& o) {
    AttentionBenchSpec spec;
    if (o.preset_given && o.preset.empty())
        throw cli::BadInput("--preset: no preset given (choose a or b)");
    if (!o.preset.empty()) {
        const auto p = attentionPreset(o.preset);
        if (!p)
            throw cli::BadInput(
                fmt::format("--preset: unknown preset '{}' (choose a or b)", o.preset));
        spec = *p;
    }
    if (!o.impl.empty()) {
        // Ours (LibTorch and this project's kernels) and those run in Python (see Note
        // [attention in Python]).
        spec.impls.clear();
        for (const auto& name : requireValues(o.impl, "--impl")) {
            if (const auto ours = parseAttentionImpl(name))
                spec.impls.push_back(*ours);
            else if (isPythonAttentionImpl(name))
                spec.python_impls.push_back(name);
            else
                throw cli::BadInput(fmt::format(
                    "--impl: unknown value '{}' (choose from naive, tiled, sdpa, sdpa-flash, "
                    "sdpa-efficient, sdpa-cudnn, sdpa-math, flash, torch-compile, yours-pytorch, "
                    "yours-triton, yours)",
                    name));
        }
    }
    spec.code = o.code;
    spec.python = o.python;
    if (!o.code.empty()) {
        // --code adds the user's attention unless --impl names which of it to run.
        bool named = false;
        for (const auto& n : spec.python_impls) named = named || n.rfind("yours", 0) == 0;
        if (!named)
            for (auto& n : defaultUserAttentionImpls(o.code)) spec.python_impls.push_back(n);
        if (auto why = pythonCodeProblem(o.code, o.python, /*adapters_module=*/true); !why.empty())
            throw cli::BadInput(why);
    } else if (!spec.python_impls.empty()) {
        if (auto why = pythonInterpreterProblem(o.python); !why.empty()) throw cli::BadInput(why);
    }
    if (!o.seq.empty()) spec.seq_lens = positiveInts(o.seq, "--seq");
    if (!o.head_dim.empty()) spec.head_dims = positiveInts(o.head_dim, "--head-dim");
    if (!o.batch.empty()) spec.batches = positiveInts(o.batch, "--batch-size");
    if (!o.heads.empty()) spec.heads = positiveInts(o.heads, "--heads");
    if (!o.dtype.empty())
        spec.dtypes = parsed<Precision>(o.dtype, "--dtype", parsePrecision, "fp32, bf16, fp16");
    if (!o.pass.empty())
        spec.passes = parsed<AttentionPass>(o.pass, "--pass", parseAttentionPass,
                                            "forward, backward, forward-backward");
    if (o.causal && o.no_causal)
        spec.causal = {false, true};
    else if (o.causal)
        spec.causal = {true};
    else if (o.no_causal)
        spec.causal = {false};
    if (o.warmup)
        spec.warmup =
            static_cast<int>(cli::parseIntIn("--warmup", *o.warmup, 0, kMaxAttentionSteps));
    if (o.steps)
        spec.steps = static_cast<int>(cli::parseIntIn("--steps", *o.steps, 1, kMaxAttentionSteps));
    if (o.seed) spec.seed = cli::parseSeed("--seed", *o.seed);
    if (o.device_given && o.device.empty()) throw cli::BadInput("--device: no value given");
    if (!o.device.empty())
        spec.device = o.device;
    else if (!capabilities().cuda_available)
        spec.device = "cpu";  // the default, where there is no GPU
    if (const auto errors = validateAttentionSpec(spec); !errors.empty())
        throw cli::BadInput(errors.front());
    spec.cuda_profiler_range = o.cuda_profiler_range;
    cli::noteCudaProfilerRangeOff(o.cuda_profiler_range, spec.device);
    return spec;
}

enum class Format { Markdown, Csv, Jsonl };

// Streams CSV / JSON rows to stdout as cells finish (the engine has stored each by then),
// progress lines to stderr.
class CliObserver : public AttentionObserver {
public:
    explicit CliObserver(Format f) : format_(f) {}
    void cellFinished(int index, int count, const AttentionCell& c) override {
        std::string what =
            c.status == Status::Ok
                ? fmt::format("fwd {:.3f} ms, bwd {:.3f} ms", c.forward_ms, c.backward_ms)
                : fmt::format("{}: {}", toString(c.status), c.error);
        std::fprintf(stderr, "[%d/%d] %s %s causal=%d %lldx%lld d=%lld seq=%lld: %s\n", index + 1,
                     count, implName(c).c_str(), std::string(toString(c.dtype)).c_str(),
                     c.causal ? 1 : 0, static_cast<long long>(c.batch),
                     static_cast<long long>(c.heads), static_cast<long long>(c.head_dim),
                     static_cast<long long>(c.seq), what.c_str());
        if (format_ == Format::Csv) std::printf("%s\n", attentionCsvRow(c).c_str());
        if (format_ == Format::Jsonl) std::printf("%s\n", attentionJsonLine(c).c_str());
        std::fflush(stdout);
    }
    void log(LogLevel, const std::string& message) override {
        std::fprintf(stderr, "%s\n", message.c_str());
    }

private:
    Format format_;
};

int runAttention(const AttentionOptions& o) {
    AttentionBenchSpec spec;
    try {
        spec = buildSpec(o);
    } catch (const cli::BadInput& e) {
        std::fprintf(stderr, "trainscope-cli attention: %s\n", e.what());
        return 2;
    }
    const Format format = o.csv ? Format::Csv : o.jsonl ? Format::Jsonl : Format::Markdown;
    // Only the device is refused up front: a cell this machine cannot compute (our kernels on
    // the CPU, bf16 on an old GPU) is reported in the table as unsupported or failed.
    if (const auto problems = checkRunnable({spec.device, {}, {}}); !problems.empty()) {
        std::fprintf(
            stderr, "trainscope-cli attention: %s%s\n", problems.front().c_str(),
            spec.device != "cpu" && !capabilities().cuda_available ? " (use --device cpu)" : "");
        return 2;
    }
    cli::StoredRun run;
    try {
        run = cli::startStoredRun(kAttentionLab, o.db, o.label, o.no_store, /*quiet=*/false,
                                  attentionSpecJson(spec), currentEnvironment(spec.device));
    } catch (const cli::BadInput& e) {  // a store that can only be read
        std::fprintf(stderr, "trainscope-cli attention: %s\n", e.what());
        return cli::kBadInput;
    } catch (const std::exception& e) {  // the store cannot be written: as every command, 3
        std::fprintf(stderr, "trainscope-cli attention: %s\n", e.what());
        return cli::kRunFailed;
    }
    if (format == Format::Csv) std::printf("%s\n", attentionCsvHeader().c_str());
    CliObserver obs(format);
    cli::catchInterrupts();
    AttentionBenchResult r;
    try {
        r = runAttentionBench(spec, obs, cli::interruptToken(), run.get(), run.id);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trainscope-cli attention: run failed: %s\n", e.what());
        return 3;
    }
    const auto& env = r.environment;
    if (format == Format::Markdown) {
        std::printf(
            "Attention benchmark on %s (torch %s, CUDA %s, driver %s), %s, commit %s. %s\n\n",
            markdownText(env.device_name).c_str(), markdownText(env.torch_version).c_str(),
            markdownText(env.cuda_version).c_str(), markdownText(env.driver_version).c_str(),
            markdownText(env.date).c_str(), markdownText(env.git_commit).c_str(),
            attentionSettings(spec.steps, spec.warmup, spec.device).c_str());
        for (const auto& d : ts::capabilities().devices)
            if (d.name == env.device_name && !d.flash_kernels.empty()) {
                std::printf("Our kernels (flash) on this GPU: %s.\n\n", d.flash_kernels.c_str());
                break;
            }
        std::printf("%s", attentionMarkdown(r.cells, spec.passes).c_str());
    }
    int failed = 0;
    for (const auto& c : r.cells) failed += c.status == Status::Failed;
    if (failed && r.store_error.empty() && !cli::interruptToken().cancelled())
        std::fprintf(stderr, "trainscope-cli attention: %d cell(s) failed\n", failed);
    // A store error was printed by the observer.
    return cli::runExitCode(!r.store_error.empty(), cli::interruptToken().cancelled(), failed > 0);
}

}  // namespace

namespace {

void addAttentionCommand(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<AttentionOptions>();
    CLI::App* sub = app.add_subcommand(
        "attention",
        "Attention benchmark: naive, tiled, LibTorch SDPA backends and this project's kernels");
    sub->add_option(
        "--impl", o->impl,
        "implementations: naive,tiled,sdpa,sdpa-flash,sdpa-efficient,sdpa-cudnn,sdpa-math,flash; "
        "in Python: torch-compile (torch.compile of naive), yours-pytorch, yours-triton, yours "
        "(your attention from --code)");
    sub->add_option("--code", o->code,
                    "your attention: a course checkout (its tests/adapters.py), a file or module "
                    "of adapter functions, or module:Name (an autograd.Function or a callable "
                    "(q, k, v, is_causal) -> o on (batch·heads, seq, d))");
    sub->add_option("--python", o->python,
                    "the Python interpreter with torch that runs torch-compile and your code "
                    "(default: $TRAINSCOPE_PYTHON, else set-up's)");
    sub->add_option("--seq", o->seq, "sequence lengths, comma-separated");
    sub->add_option("--head-dim", o->head_dim, "head dims, comma-separated");
    sub->add_option("--batch-size,--batch", o->batch, "batch sizes, comma-separated");
    sub->add_option("--heads", o->heads, "head counts");
    sub->add_option("--dtype", o->dtype, "fp32,bf16,fp16");
    sub->add_flag("--causal", o->causal, "causal mask (with --no-causal too: both)");
    sub->add_flag("--no-causal", o->no_causal, "no mask");
    sub->add_option("--preset", o->preset, "the course's set-ups: a or b (other flags override)");
    sub->add_option("--pass", o->pass, "forward,backward,forward-backward");
    sub->add_option("--warmup", o->warmup, "warm-up steps per cell");
    sub->add_option("--steps", o->steps, "measured steps per cell (the median is reported)");
    sub->add_option("--seed", o->seed, "random seed of the inputs");
    sub->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
    cli::addCudaProfilerRangeOption(*sub, o->cuda_profiler_range, "each cell's measured steps");
    cli::addStoreOptions(*sub, o->db, o->label, o->no_store);
    o->format.add(*sub, {"markdown", "csv", "jsonl"},
                  {{"markdown", "a Markdown table at the end"},
                   {"csv", "CSV rows as cells finish"},
                   {"jsonl", "one JSON object a cell, as cells finish"}});
    sub->callback([o, sub, &exit_code] {
        try {
            const std::string format = o->format.get();
            o->markdown = format == "markdown";
            o->csv = format == "csv";
            o->jsonl = format == "jsonl";
        } catch (const cli::BadInput& e) {
            std::fprintf(stderr, "trainscope-cli attention: %s\n", e.what());
            exit_code = cli::kBadInput;
            return;
        }
        o->device_given = sub->count("--device") > 0;
        o->preset_given = sub->count("--preset") > 0;
        exit_code = runAttention(*o);
    });
}

const cli::CommandRegistration registration(ts::kAttentionLab, addAttentionCommand);

}  // namespace
