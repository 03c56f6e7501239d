// The attention lab's spec: pass names, the course's presets, validation, FLOP counts.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attention/attention_json.h"
#include "attention/attention_lab.h"
#include "core/json.h"

namespace ts {

std::string_view toString(AttentionPass p) {
    switch (p) {
        case AttentionPass::Forward:
            return "forward";
        case AttentionPass::Backward:
            return "backward";
        case AttentionPass::ForwardBackward:
            return "forward-backward";
    }
    return "?";
}

const std::vector<AttentionPass>& allAttentionPasses() {
    static const std::vector<AttentionPass> all{AttentionPass::Forward, AttentionPass::Backward,
                                                AttentionPass::ForwardBackward};
    return all;
}

std::optional<AttentionPass> parseAttentionPass(std::string_view s) {
    for (auto p : allAttentionPasses())
        if (toString(p) == s) return p;
    return std::nullopt;
}

const std::vector<std::string>& pythonAttentionImpls() {
    static const std::vector<std::string> names{"torch-compile", "yours-pytorch", "yours-triton",
                                                "yours"};
    return names;
}

bool isPythonAttentionImpl(std::string_view name) {
    const auto& n = pythonAttentionImpls();
    return std::find(n.begin(), n.end(), name) != n.end();
}

std::vector<std::string> defaultUserAttentionImpls(const std::string& code) {
    if (code.empty()) return {};
    // module:Name and file.py:Name name one implementation; a folder (a checkout) or a file or
    // module of adapter functions holds the course's two.
    const auto colon = code.rfind(':');
    if (colon != std::string::npos && colon + 1 < code.size()) return {"yours"};
    return {"yours-pytorch", "yours-triton"};
}

std::string implName(const AttentionCell& c) {
    return c.python_impl.empty() ? std::string(toString(c.impl)) : c.python_impl;
}

std::optional<AttentionBenchSpec> attentionPreset(std::string_view name) {
    AttentionBenchSpec s;
    if (name == "a") {
        s.impls = {AttentionImpl::Naive, AttentionImpl::Tiled, AttentionImpl::Sdpa,
                   AttentionImpl::Flash};
        s.seq_lens = {256, 1024, 4096, 8192, 16384};
        s.head_dims = {16, 32, 64, 128};
        s.dtypes = {Precision::FP32};
        s.causal = {false};
        s.batches = {8};
        s.heads = {1};
        s.passes = {AttentionPass::Forward, AttentionPass::Backward};
        s.warmup = 2;
        s.steps = 10;
        return s;
    }
    if (name == "b") {
        s.impls = {AttentionImpl::Naive, AttentionImpl::SdpaFlash, AttentionImpl::SdpaCudnn,
                   AttentionImpl::Flash};
        s.seq_lens = {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
        s.head_dims = {16, 32, 64, 128};
        s.dtypes = {Precision::BF16, Precision::FP32};
        s.causal = {true};
        s.batches = {1};
        s.heads = {1};
        s.passes = {AttentionPass::Forward, AttentionPass::Backward,
                    AttentionPass::ForwardBackward};
        s.warmup = 2;
        s.steps = 5;
        return s;
    }
    return std::nullopt;
}

std::vector<std::string> validateAttentionSpec(const AttentionBenchSpec& s) {
    std::vector<std::string> e;
    auto positive = [&](const std::vector<int64_t>& v, const char* what) {
        if (v.empty()) e.push_back(fmt::format("no {} given", what));
        for (int64_t x : v)
            if (x < 1) e.push_back(fmt::format("{} {} must be at least 1", what, x));
    };
    positive(s.seq_lens, "sequence length");
    positive(s.head_dims, "head dim");
    positive(s.batches, "batch size");
    positive(s.heads, "head count");
    if (s.impls.empty() && s.python_impls.empty()) e.push_back("no implementation given");
    bool yours = false;
    for (const auto& name : s.python_impls) {
        if (!isPythonAttentionImpl(name))
            e.push_back(fmt::format("unknown implementation '{}'", name));
        yours = yours || name.rfind("yours", 0) == 0;
    }
    if (yours && s.code.empty())
        e.push_back(
            "your attention (yours, yours-pytorch, yours-triton) needs --code: a course checkout, "
            "a file of adapter functions, or module:Name");
    if (s.dtypes.empty()) e.push_back("no dtype given");
    if (s.causal.empty()) e.push_back("no causal setting given");
    if (s.passes.empty()) e.push_back("no pass given");
    if (s.warmup < 0) e.push_back(fmt::format("warm-up {} must be 0 or more", s.warmup));
    if (s.steps < 1) e.push_back(fmt::format("steps {} must be at least 1", s.steps));
    if (s.warmup > kMaxAttentionSteps || s.steps > kMaxAttentionSteps)
        e.push_back(fmt::format("warm-up {} and steps {} must each be at most {}", s.warmup,
                                s.steps, kMaxAttentionSteps));
    if (auto d = validateDevice(s.device); !d.empty()) e.push_back(d);
    if (!e.empty()) return e;
    // Counted in doubles: absurd lists or sizes must not overflow the check itself.
    double cells = 1;
    for (size_t n : {s.batches.size(), s.heads.size(), s.dtypes.size(), s.causal.size(),
                     s.head_dims.size(), s.seq_lens.size(), s.impls.size() + s.python_impls.size()})
        cells *= static_cast<double>(n);
    if (cells > static_cast<double>(kMaxAttentionCells))
        e.push_back(fmt::format("the spec has {:.0f} cells, more than the limit of {}; split it",
                                cells, kMaxAttentionCells));
    // Every value is at least 1 here, so the biggest input is that of the biggest of each.
    auto largest = [](const std::vector<int64_t>& v) {
        return *std::max_element(v.begin(), v.end());
    };
    const int64_t b = largest(s.batches), h = largest(s.heads), seq = largest(s.seq_lens),
                  d = largest(s.head_dims);
    const double biggest = 4.0 * static_cast<double>(b) * static_cast<double>(h) *
                           static_cast<double>(seq) * static_cast<double>(d);
    if (biggest > kMaxAttentionTensorBytes)
        e.push_back(fmt::format(
            "an input (batch {} × heads {} × seq {} × head dim {}) would take {:.3g} bytes, more "
            "than the 2^40 bytes (1 TiB) that any device holds; lower the sizes",
            b, h, seq, d, biggest));
    return e;
}

double attentionFlops(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                      AttentionPass pass) {
    double f = 4.0 * batch * heads * static_cast<double>(seq) * seq * head_dim;
    if (causal) f /= 2;
    switch (pass) {
        case AttentionPass::Forward:
            return f;
        case AttentionPass::Backward:
            return 2.5 * f;
        case AttentionPass::ForwardBackward:
            return 3.5 * f;
    }
    return f;
}

size_t attentionCellCount(const AttentionBenchSpec& s) {
    return s.batches.size() * s.heads.size() * s.dtypes.size() * s.causal.size() *
           s.head_dims.size() * s.seq_lens.size() * (s.impls.size() + s.python_impls.size());
}

std::string attentionSpecJson(const AttentionBenchSpec& s) { return dumpJson(toJson(s)); }

}  // namespace ts
