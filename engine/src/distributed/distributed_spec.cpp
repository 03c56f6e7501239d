#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "distributed/distributed.h"

namespace ts {

const std::vector<std::string>& ddpStrategyNames() {
    static const std::vector<std::string> names{
        "naive", "flat",      "overlap",          "bucketed",       "zero1",     "fsdp",
        "fsdp2", "torch-ddp", "yours-individual", "yours-bucketed", "yours-ddp", "yours-fsdp"};
    return names;
}

StrategyTraits strategyTraits(std::string_view s) {
    StrategyTraits t;
    t.users = s.starts_with("yours-");
    t.python = t.users || s == "fsdp2" || s == "torch-ddp";
    t.sharded_model = s == "fsdp" || s == "fsdp2" || s == "yours-fsdp";
    t.shards_optimizer = t.sharded_model || s == "zero1";
    t.bucket_size = s == "bucketed" || s == "yours-bucketed" || s == "torch-ddp";
    t.runner = s == "fsdp2" ? "fsdp2" : t.python ? "ddp" : "";
    return t;
}

std::vector<std::string> userDdpStrategies(const std::string& code) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string file = code;
    if (fs::is_directory(code, ec)) file = (fs::path(code) / "tests" / "adapters.py").string();
    if (code.find(':') != std::string::npos || !fs::is_regular_file(file, ec))
        throw std::invalid_argument(fmt::format(
            "'yours' is the strategies a checkout's tests/adapters.py (or a file of adapter "
            "functions) defines, and '{}' is neither: name them (yours-individual, "
            "yours-bucketed, yours-ddp, yours-fsdp)",
            code));
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    std::vector<std::string> out;
    for (const auto& [adapter, strategy] :
         {std::pair{"get_ddp_individual_parameters", "yours-individual"},
          {"get_ddp_bucketed", "yours-bucketed"},
          {"get_ddp", "yours-ddp"},
          {"get_fsdp", "yours-fsdp"}})
        if (s.find(fmt::format("def {}(", adapter)) != std::string::npos)
            out.emplace_back(strategy);
    if (out.empty())
        throw std::invalid_argument(fmt::format(
            "{} defines none of the course's DDP or FSDP adapters (get_ddp_individual_parameters, "
            "get_ddp_bucketed, get_ddp, get_fsdp)",
            file));
    return out;
}

std::optional<double> parseBucketMiB(std::string_view text) {
    std::string t(text);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(0, 1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    size_t split = !t.empty() && (t[0] == '-' || t[0] == '+') ? 1 : 0;
    while (split < t.size() && (std::isdigit(static_cast<unsigned char>(t[split])) ||
                                t[split] == '.' || t[split] == 'e' || t[split] == 'E' ||
                                ((t[split] == '+' || t[split] == '-') && split > 0 &&
                                 (t[split - 1] == 'e' || t[split - 1] == 'E'))))
        ++split;
    std::string number = t.substr(0, split), unit = t.substr(split);
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    std::transform(unit.begin(), unit.end(), unit.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static const std::map<std::string, double> kScale{
        {"", 1.0},       {"mib", 1.0},          {"b", 1.0 / 1048576},  {"kib", 1.0 / 1024},
        {"gib", 1024.0}, {"kb", 1e3 / 1048576}, {"mb", 1e6 / 1048576}, {"gb", 1e9 / 1048576}};
    const auto scale = kScale.find(unit);
    if (number.empty() || scale == kScale.end()) return std::nullopt;
    if (number.front() == '+') number.erase(0, 1);
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
    const double mib = value * scale->second;
    if (!std::isfinite(mib)) return std::nullopt;
    return mib;
}

std::string formatBucketMiB(double mib) { return fmt::format("{:g} MiB", mib); }

ModelConfig ddpModel(const DdpSpec& spec) {
    ModelConfig m = modelPreset(spec.model_size).value_or(ModelConfig{});
    m.context_length = spec.context_length;
    m.vocab_size = spec.vocab_size;
    return m;
}

std::string ddpExecProblem(const DdpSpec& spec) {
    if (spec.exec == ExecMode::Eager) return {};
    if (spec.exec != ExecMode::Compiled)
        return fmt::format(
            "{} is a torch.compile mode; TrainScope's DDP runs eager or compiled (the fsdp2 "
            "reference compiles with --compile)",
            toString(spec.exec));
    const StrategyTraits traits = strategyTraits(spec.strategy);
    if (traits.python)
        return fmt::format(
            "compiled mode is TrainScope's CUDA graphs; {} runs in PyTorch (fsdp2's "
            "torch.compile: --compile)",
            spec.strategy);
    if (traits.sharded_model)
        return fmt::format(
            "{} is not captured: its units are gathered and freed by host hooks around each "
            "block; use --exec eager",
            spec.strategy);
    // The device is the rank's, set at launch; NCCL's GPUs are checked with the backend.
    return capturedStepProblem({}, spec.precision, true, spec.checkpoint);
}

std::vector<std::string> validateDdpSpec(const DdpSpec& spec) {
    std::vector<std::string> errors;
    if (!modelPreset(spec.model_size)) {
        std::string names;
        for (const auto& n : modelPresetNames()) names += (names.empty() ? "" : ", ") + n;
        errors.push_back(
            fmt::format("unknown model size '{}' (valid: {})", spec.model_size, names));
    } else {
        for (auto& e : validateModel(ddpModel(spec))) errors.push_back(std::move(e));
    }
    if (spec.batch_per_rank <= 0)
        errors.push_back(
            fmt::format("batch per rank must be positive (got {})", spec.batch_per_rank));
    bool known = false;
    std::string names;
    for (const auto& n : ddpStrategyNames()) {
        known = known || n == spec.strategy;
        names += (names.empty() ? "" : ", ") + n;
    }
    if (!known)
        errors.push_back(
            fmt::format("unknown DDP strategy '{}' (valid: {})", spec.strategy, names));
    if (!(spec.bucket_mb > 0) || !std::isfinite(spec.bucket_mb))
        errors.push_back(
            fmt::format("bucket size must be a positive number of MiB (got {})", spec.bucket_mb));
    if (spec.warmup_steps < 0)
        errors.push_back(
            fmt::format("warm-up steps must not be negative (got {})", spec.warmup_steps));
    if (spec.measured_steps < 1)
        errors.push_back(
            fmt::format("measured steps must be at least 1 (got {})", spec.measured_steps));
    if (spec.trace_steps < 0 || spec.trace_steps > spec.measured_steps)
        errors.push_back(
            fmt::format("traced steps must be between 0 and the {} measured steps (got {})",
                        spec.measured_steps, spec.trace_steps));
    if (!(spec.learning_rate > 0) || !std::isfinite(spec.learning_rate))
        errors.push_back(
            fmt::format("learning rate must be positive (got {})", spec.learning_rate));
    if (spec.shard_optimizer && spec.precision == Precision::FP16)
        errors.push_back(
            "a sharded optimizer does not run under fp16 loss scaling: use bf16 or fp32");
    const StrategyTraits traits = strategyTraits(spec.strategy);
    const bool sharded_model = traits.sharded_model;
    if (spec.param_dtype != "fp32" && spec.param_dtype != "bf16")
        errors.push_back(
            fmt::format("unknown parameter dtype '{}' (valid: fp32, bf16)", spec.param_dtype));
    else if (spec.param_dtype == "bf16" && spec.precision != Precision::BF16)
        errors.push_back(
            "bf16 parameters need bf16 precision (autocast): the activations of fp32 or fp16 "
            "would meet bf16 weights");
    if (spec.prefetch < 0 || spec.prefetch > 64)
        errors.push_back(
            fmt::format("prefetch must be between 0 and 64 units (got {})", spec.prefetch));
    if (traits.shards_optimizer && spec.shard_optimizer)
        errors.push_back(fmt::format(
            "{} shards the optimizer's state with the weights: leave out the sharded optimizer",
            spec.strategy));
    if (traits.shards_optimizer && spec.precision == Precision::FP16)
        errors.push_back(fmt::format(
            "{} does not run under fp16 loss scaling (each rank would find overflows in its "
            "own shard): use bf16 or fp32",
            spec.strategy));
    if (spec.compile && spec.strategy != "fsdp2")
        errors.push_back(fmt::format(
            "--compile is the fsdp2 reference's (torch.compile); {} is TrainScope's, captured "
            "as CUDA graphs with --exec compiled",
            spec.strategy));
    if (auto e = ddpExecProblem(spec); !e.empty()) errors.push_back(std::move(e));
    if (spec.keep_attention && (!spec.fused_kernels || spec.attention != AttentionImpl::Flash ||
                                spec.checkpoint.kind == Checkpointing::Kind::None))
        errors.push_back(
            "keeping attention through checkpoints needs the fused kernels, flash attention and "
            "a checkpoint policy (it skips the recompute of our flash attention's forward)");
    if (spec.fused_kernels && traits.python)
        errors.push_back(
            fmt::format("the fused kernels are TrainScope's; {} runs in PyTorch (fsdp2's fusion is "
                        "torch.compile's: --compile)",
                        spec.strategy));
    if (spec.fused_loss && traits.python)
        errors.push_back(
            fmt::format("the fused LM head and loss is TrainScope's; {} computes the logits whole",
                        spec.strategy));
    if (traits.python && spec.strategy != "fsdp2") {
        // See Note [your DDP classes].
        if (traits.users && spec.code.empty())
            errors.push_back(fmt::format(
                "{} is your code: give --code (a course checkout, a file of the course's adapter "
                "functions, or module:Name)",
                spec.strategy));
        if (spec.precision == Precision::FP16)
            errors.push_back(
                fmt::format("{} runs fp32 or bf16 autocast; fp16 needs loss scaling it does not do",
                            spec.strategy));
        if (spec.checkpoint.kind != Checkpointing::Kind::None)
            errors.push_back(fmt::format(
                "{} does not checkpoint (TrainScope's strategies and fsdp2 do): use --checkpoint "
                "none",
                spec.strategy));
    }
    if (auto e = validateDevice(spec.device); !e.empty()) errors.push_back(std::move(e));
    return errors;
}

}  // namespace ts
