// The attention lab's outside data: stored cells (attentionCellFromJson, the round trip, the
// tables, the run report) and specs built from the input's bytes (validateAttentionSpec, the
// cell count, FLOPs, the stored spec), starting from a preset named by the input.
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attention/attention_json.h"
#include "attention/attention_lab.h"
#include "attention/attention_report.h"
#include "core/json.h"
#include "core/lab.h"
#include "fuzz_common.h"

namespace {

void cell(std::string_view text) {
    const ts::AttentionCell c = ts::attentionCellFromJson(ts::parseJson(text));
    fuzz::reached("a parsed cell");
    const std::string again = ts::dumpJson(ts::toJson(c));
    fuzz::require(
        ts::dumpJson(ts::toJson(ts::attentionCellFromJson(ts::parseJson(again)))) == again,
        "a cell survives its JSON round trip");
    ts::attentionCsvRow(c);
    ts::attentionJsonLine(c);
    ts::attentionMarkdown({c}, ts::measuredPasses({c}));
}

void report(std::string_view text) {
    ts::RunInfo info;
    info.id = 7;
    info.lab = ts::kAttentionLab;
    info.device_name = std::string(text.substr(0, 32));
    const std::vector<ts::StoredRow> rows = {{0, ts::Status::Ok, "{}", std::string(text)}};
    for (auto f : {ts::ReportFormat::Table, ts::ReportFormat::Csv, ts::ReportFormat::Json})
        ts::findLab(ts::kAttentionLab)->report(info, rows, f);
}

// Reads values off the input: mostly small ones (a spec that may be valid), now and then a
// whole int64 (the boundaries).
struct Bytes {
    std::string_view s;
    int64_t next() {
        int64_t v = 0;
        const size_t n = std::min<size_t>(8, s.size());
        std::memcpy(&v, s.data(), n);
        s.remove_prefix(n);
        return (v & 0x7) == 0 ? v : 1 + ((v >> 3) & 0x3fff);
    }
    std::vector<int64_t> list() {
        std::vector<int64_t> out(s.empty() ? 0 : static_cast<unsigned char>(s[0]) % 4);
        if (!s.empty()) s.remove_prefix(1);
        for (auto& v : out) v = next();
        return out;
    }
};

void spec(std::string_view text) {
    ts::attentionPreset(text);
    const char* presets[] = {"a", "b", ""};
    ts::AttentionBenchSpec s =
        ts::attentionPreset(presets[text.empty() ? 2 : static_cast<unsigned char>(text[0]) % 3])
            .value_or(ts::AttentionBenchSpec{});
    Bytes b{text.substr(text.empty() ? 0 : 1)};
    for (auto* list : {&s.seq_lens, &s.head_dims, &s.batches, &s.heads})
        if (auto v = b.list(); !v.empty()) *list = v;
    s.warmup = static_cast<int>(b.next() % 40);
    s.steps = static_cast<int>(b.next() % 40);
    s.seed = static_cast<uint64_t>(b.next());
    const auto errors = ts::validateAttentionSpec(s);
    ts::attentionSpecJson(s);
    fuzz::reached(errors.empty() ? "a valid spec" : "an invalid spec");
    if (!errors.empty()) return;
    fuzz::require(ts::attentionCellCount(s) <= ts::kMaxAttentionCells,
                  "a valid spec is within the cell limit");
    for (auto pass : s.passes)
        ts::attentionFlops(s.batches[0], s.heads[0], s.seq_lens[0], s.head_dims[0], true, pass);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto text = fuzz::text(data, size);
    try {
        cell(text);
    } catch (const std::invalid_argument&) {
    } catch (const nlohmann::json::exception&) {
    }
    try {
        report(text);
    } catch (const std::runtime_error&) {
    }
    spec(text);
    return 0;
}
