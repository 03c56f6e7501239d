// `trainscope-cli plan`: the parallelism planner from the command line.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.h"
#include "core/json.h"
#include "core/lab.h"
#include "core/store.h"
#include "planner/planner.h"
#include "planner/planner_report.h"
#include "runtime/environment.h"
#include "trainscope/distributed/allreduce_bench.h"

namespace {

using namespace ts;

struct PlanOptions {
    std::optional<std::string> flops, bandwidth, batch_tokens, batch_size, context_length;
    std::optional<std::string> size, d_model, d_ff, layers, dp, tp;
    std::optional<std::string> comm_bytes, param_bytes, grad_bytes, optimizer_bytes;
    bool no_overlap = false;
    bool measure = false;
    std::optional<std::string> device, world, gemm_n, allreduce_size, iters, warmup;
    cli::FormatChoice format;  // --format, or --markdown / --csv / --json (see Note [one spelling])
    bool markdown = false, csv = false, json = false;
    std::string db, label;
    bool no_store = false;
};

double positiveNumber(const char* flag, const std::string& text) {
    const double v = cli::parseFinite(flag, text);
    if (v <= 0) throw cli::BadInput(fmt::format("{}: must be positive, got '{}'", flag, text));
    // A FLOP/s or a bandwidth past any machine (and past a double once scaled to bytes/s).
    if (v > 1e30)
        throw cli::BadInput(fmt::format("{}: '{}' is more than the limit of 1e30", flag, text));
    return v;
}

PlannerInputs buildInputs(const PlanOptions& o) {
    PlannerInputs in;
    if (o.measure && o.flops) throw cli::BadInput("-C/--flops: not with --measure (it measures C)");
    if (!o.measure && !o.flops)
        throw cli::BadInput("-C/--flops: give the device's FLOP/s (e.g. 989e12), or --measure");
    if (!o.measure && !o.bandwidth)
        throw cli::BadInput(
            "-W/--bandwidth: give the device's egress bandwidth in GB/s (e.g. 450), or --measure");
    if (o.flops) in.flops = positiveNumber("-C/--flops", *o.flops);
    if (o.bandwidth) in.bandwidth = positiveNumber("-W/--bandwidth", *o.bandwidth) * 1e9;
    if (o.size) {
        for (const auto* f : {&o.d_model, &o.d_ff, &o.layers})
            if (*f)
                throw cli::BadInput(
                    "--d-model/--d-ff/--layers: not with --size (the model sets "
                    "them)");
        auto m = modelPreset(*o.size);
        if (!m)
            throw cli::BadInput(fmt::format("--size: unknown model '{}' (choose from {})", *o.size,
                                            fmt::join(modelPresetNames(), ", ")));
        if (o.context_length)
            m->context_length = cli::parseIntIn("--context-length", *o.context_length, 1, 1 << 20);
        in.model = *m;
        in.d_model = m->d_model;
        in.d_ff = m->d_ff;
        in.layers = m->num_layers;
    } else {
        if (!o.d_model || !o.d_ff)
            throw cli::BadInput("--d-model and --d-ff: give both, or a model with --size");
        in.d_model = cli::parseIntIn("--d-model", *o.d_model, 1, kMaxPlannerDim);
        in.d_ff = cli::parseIntIn("--d-ff", *o.d_ff, 1, kMaxPlannerDim);
        if (o.layers) in.layers = cli::parseIntIn("--layers", *o.layers, 1, 100'000);
    }
    if (o.batch_tokens && o.batch_size)
        throw cli::BadInput("--batch-tokens: not with --batch-size (give one)");
    if (o.batch_tokens) {
        in.batch_tokens = positiveNumber("--batch-tokens", *o.batch_tokens);
    } else if (o.batch_size) {
        const int64_t ctx = o.context_length
                                ? cli::parseIntIn("--context-length", *o.context_length, 1, 1 << 20)
                            : in.model ? in.model->context_length
                                       : 0;
        if (ctx == 0)
            throw cli::BadInput("--batch-size: give --context-length too (B = batch × context)");
        in.batch_tokens =
            static_cast<double>(cli::parseIntIn("--batch-size", *o.batch_size, 1, 1 << 30)) *
            static_cast<double>(ctx);
    } else {
        throw cli::BadInput(
            "--batch-tokens: give the batch in tokens (or --batch-size with --context-length)");
    }
    if (o.dp) in.dp = cli::parseIntIn("--dp", *o.dp, 1, kMaxPlannerDegree);
    if (o.tp) in.tp = cli::parseIntIn("--tp", *o.tp, 1, kMaxPlannerDegree);
    if (o.comm_bytes) in.comm_bytes = positiveNumber("--comm-bytes", *o.comm_bytes);
    if (o.param_bytes) in.param_bytes = positiveNumber("--param-bytes", *o.param_bytes);
    if (o.grad_bytes) in.grad_bytes = positiveNumber("--grad-bytes", *o.grad_bytes);
    if (o.optimizer_bytes) {
        in.optimizer_bytes = cli::parseFinite("--optimizer-bytes", *o.optimizer_bytes);
        if (in.optimizer_bytes < 0)
            throw cli::BadInput("--optimizer-bytes: must be 0 or more, got " + *o.optimizer_bytes);
    }
    in.overlap_axes = !o.no_overlap;
    // With --measure, C and W are not known yet: the rest is checked against stand-ins.
    PlannerInputs check = in;
    if (o.measure) {
        check.flops = 1;
        if (check.bandwidth <= 0) check.bandwidth = 1;
    }
    if (const auto problems = validatePlannerInputs(check); !problems.empty())
        throw cli::BadInput(problems.front());
    return in;
}

std::optional<MeasureSpec> buildMeasure(const PlanOptions& o) {
    for (const auto* f : {&o.device, &o.world, &o.gemm_n, &o.allreduce_size, &o.iters, &o.warmup})
        if (*f && !o.measure)
            throw cli::BadInput(
                "--device/--world/--gemm-n/--allreduce-size/--steps/--warmup: only with "
                "--measure");
    if (!o.measure) return std::nullopt;
    MeasureSpec s;
    s.device = o.device ? *o.device : (capabilities().cuda_available ? "cuda" : "cpu");
    if (s.device != "cpu" && s.device != "cuda")
        throw cli::BadInput(fmt::format("--device: '{}' (choose cpu or cuda)", s.device));
    if (o.world) s.world = static_cast<int>(cli::parseIntIn("--world", *o.world, 2, 1024));
    // W is an all-reduce between this machine's GPUs: with one GPU there is none to time, and
    // without -W the plan could not be made (it said "W must be a positive number, got 0" after
    // the run was stored). Said before anything runs.
    if (const auto gpus = static_cast<int>(capabilities().devices.size()) - 1;
        s.device == "cuda" && gpus == 1 && !o.bandwidth)
        throw cli::BadInput(fmt::format(
            "--measure: W is timed by an all-reduce between GPUs and this machine has {}; give "
            "-W/--bandwidth (GB/s) with --measure (C is still measured), or --device cpu",
            gpus));
    if (o.gemm_n) s.gemm_n = cli::parseIntIn("--gemm-n", *o.gemm_n, 1, 65536);
    if (o.allreduce_size) {
        const auto b = dist::parseByteSize(*o.allreduce_size);
        if (!b || *b <= 0 || *b > (int64_t{4} << 30))
            throw cli::BadInput(
                fmt::format("--allreduce-size: '{}' is not a size in 1 B..4 GiB (e.g. 64MiB)",
                            *o.allreduce_size));
        s.allreduce_bytes = *b;
    }
    if (o.iters) s.iters = static_cast<int>(cli::parseIntIn("--steps", *o.iters, 1, 10000));
    if (o.warmup) s.warmup = static_cast<int>(cli::parseIntIn("--warmup", *o.warmup, 0, 1000));
    if (const auto problems = validateMeasureSpec(s); !problems.empty())
        throw cli::BadInput(problems.front());
    if (const auto problems = checkRunnable({s.device, {}, {}}); !problems.empty())
        throw cli::BadInput("--device: " + problems.front());
    return s;
}

class PlanObserver : public Observer {
public:
    void log(LogLevel, const std::string& message) override {
        std::fprintf(stderr, "%s\n", message.c_str());
    }
};

int runPlan(PlanOptions& o) {
    const char* who = "trainscope-cli plan";
    PlannerInputs inputs;
    std::optional<MeasureSpec> measure;
    try {
        const std::string format = o.format.get();
        o.markdown = format == "markdown";
        o.csv = format == "csv";
        o.json = format == "json";
        inputs = buildInputs(o);
        measure = buildMeasure(o);
    } catch (const cli::BadInput& e) {
        std::fprintf(stderr, "%s: %s\n", who, e.what());
        return cli::kBadInput;
    }
    cli::StoredRun run;
    try {
        run = cli::startStoredRun(kPlannerLab, o.db, o.label, o.no_store, /*quiet=*/o.json,
                                  plannerSpecJson(inputs, measure),
                                  currentEnvironment(measure ? measure->device : "cpu"));
    } catch (const cli::BadInput& e) {
        std::fprintf(stderr, "%s: %s\n", who, e.what());
        return cli::kBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", who, e.what());
        return cli::kRunFailed;
    }
    PlanObserver obs;
    cli::catchInterrupts();
    PlannerReport report;
    try {
        report = runPlanner(inputs, measure, obs, cli::interruptToken(), run.get(), run.id);
    } catch (const std::invalid_argument& e) {
        // What only the measurement could tell: one device and no -W, say.
        std::fprintf(stderr, "%s: %s\n", who, e.what());
        return cli::kBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: run failed: %s\n", who, e.what());
        return cli::runExitCode(true, false, false);
    }
    if (o.json)
        std::printf("%s\n", dumpJson(toJson(report), 2).c_str());
    else if (o.csv)
        std::printf("%s", plannerCsv({report}).c_str());
    else
        std::printf("%s", plannerReportText(report, cli::tableFormat(o.markdown, false)).c_str());
    return cli::runExitCode(false, cli::interruptToken().cancelled(), false);
}

void addPlanCommand(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<PlanOptions>();
    CLI::App* cmd = app.add_subcommand(
        "plan",
        "Parallelism planner: when DP, FSDP, TP and FSDP/DP × TP become communication bound "
        "(the course's formulas, shown)");
    cmd->add_option("-C,--flops", o->flops, "a device's FLOP/s, e.g. 989e12 (or --measure)");
    cmd->add_option("-W,--bandwidth", o->bandwidth,
                    "a device's egress bandwidth in GB/s, e.g. 450 (or --measure)");
    cmd->add_option("--batch-tokens", o->batch_tokens, "B: tokens of one step, all devices");
    cmd->add_option("--batch-size", o->batch_size, "sequences of one step (B = this × context)");
    cmd->add_option("--context-length", o->context_length,
                    "tokens a sequence (with --batch-size; the model's with --size)");
    cmd->add_option("--size", o->size, "a model preset: fills d_model, d_ff and layers");
    cmd->add_option("--d-model", o->d_model, "D");
    cmd->add_option("--d-ff", o->d_ff, "D_FF");
    cmd->add_option("--layers", o->layers, "L (default 1)");
    cmd->add_option("--dp", o->dp, "X: the data-parallel (DP/FSDP) degree (default 1)");
    cmd->add_option("--tp", o->tp, "Y: the tensor-parallel degree (default 1)");
    cmd->add_option("--comm-bytes", o->comm_bytes,
                    "b: bytes of a communicated element (default 2, the course's fp16)");
    cmd->add_option("--param-bytes", o->param_bytes, "bytes a weight (default 4)");
    cmd->add_option("--grad-bytes", o->grad_bytes, "bytes a gradient (default 4)");
    cmd->add_option("--optimizer-bytes", o->optimizer_bytes,
                    "optimizer bytes a parameter (default 8: AdamW's two fp32 moments)");
    cmd->add_flag("--no-overlap", o->no_overlap,
                  "2-D: the two axes' collectives share the links (sum) instead of overlapping");
    cmd->add_flag("--measure", o->measure,
                  "measure C (a GEMM) and W (an all-reduce between this machine's devices) first");
    cmd->add_option("--device", o->device, "with --measure: cpu or cuda (default: cuda if any)");
    cmd->add_option("--world", o->world,
                    "with --measure: all-reduce ranks (default: every GPU, 2 on the CPU)");
    cmd->add_option("--gemm-n", o->gemm_n,
                    "with --measure: the GEMM's n (default 8192 bf16 on a GPU, 1024 fp32 on the "
                    "CPU)");
    cmd->add_option("--allreduce-size", o->allreduce_size,
                    "with --measure: the all-reduce's bytes (default 256MiB on GPUs, 16MiB on "
                    "the CPU)");
    cmd->add_option("--steps,--iters", o->iters, "with --measure: timed iterations (default 5)");
    cmd->add_option("--warmup", o->warmup, "with --measure: untimed iterations (default 2)");
    o->format.add(*cmd, {"table", "markdown", "csv", "json"},
                  {{"markdown", "Markdown tables"},
                   {"csv", "one CSV row a strategy"},
                   {"json", "the whole report as one JSON document"}});
    cli::addStoreOptions(*cmd, o->db, o->label, o->no_store, "the plan");
    cmd->callback([o, &exit_code] { exit_code = runPlan(*o); });
}

const cli::CommandRegistration registration(ts::kPlannerLab, addPlanCommand);

}  // namespace
