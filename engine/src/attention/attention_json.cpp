// JSON of the attention lab's value types.
#include "attention/attention_json.h"

#include "attention/attention_report.h"
#include "core/json.h"
#include "core/json_read.h"

namespace ts {
using namespace jsonio;

json toJson(const AttentionCell& c) {
    return {{"impl", implName(c)},
            {"dtype", toString(c.dtype)},
            {"causal", c.causal},
            {"batch", c.batch},
            {"heads", c.heads},
            {"head_dim", c.head_dim},
            {"seq", c.seq},
            {"status", toString(c.status)},
            {"error", c.error},
            {"forward_ms", number(c.forward_ms)},
            {"backward_ms", number(c.backward_ms)},
            {"forward_backward_ms", number(c.forward_backward_ms)},
            {"forward_tflops", number(c.forward_tflops)},
            {"backward_tflops", number(c.backward_tflops)},
            {"forward_backward_tflops", number(c.forward_backward_tflops)},
            {"memory_before_backward", c.memory_before_backward},
            {"peak_memory", c.peak_memory},
            {"forward_mean_ms", number(c.forward_mean_ms)},
            {"forward_std_ms", number(c.forward_std_ms)},
            {"backward_mean_ms", number(c.backward_mean_ms)},
            {"backward_std_ms", number(c.backward_std_ms)},
            {"forward_backward_mean_ms", number(c.forward_backward_mean_ms)},
            {"forward_backward_std_ms", number(c.forward_backward_std_ms)},
            {"first_call_ms", number(c.first_call_ms)},
            {"traceback", c.traceback},
            {"err_out", number(c.err_out)},
            {"err_grad", number(c.err_grad)},
            {"tolerance", number(c.tolerance)}};
}

AttentionCell attentionCellFromJson(const json& j) {
    requireObject(j, "");
    AttentionCell c;
    // An implementation run in Python is named by its text (see Note [attention in Python]).
    if (j.contains("impl") && j["impl"].is_string() &&
        isPythonAttentionImpl(j["impl"].get<std::string>()))
        c.python_impl = j["impl"].get<std::string>();
    else
        read(j, "", "impl", c.impl, toAttentionImpl);
    read(j, "", "dtype", c.dtype, toPrecision);
    read(j, "", "causal", c.causal, toBool);
    read(j, "", "batch", c.batch, kInt64);
    read(j, "", "heads", c.heads, kInt64);
    read(j, "", "head_dim", c.head_dim, kInt64);
    read(j, "", "seq", c.seq, kInt64);
    read(j, "", "status", c.status, toStatus);
    read(j, "", "error", c.error, toStr);
    read(j, "", "forward_ms", c.forward_ms, toDouble);
    read(j, "", "backward_ms", c.backward_ms, toDouble);
    read(j, "", "forward_backward_ms", c.forward_backward_ms, toDouble);
    read(j, "", "forward_tflops", c.forward_tflops, toDouble);
    read(j, "", "backward_tflops", c.backward_tflops, toDouble);
    read(j, "", "forward_backward_tflops", c.forward_backward_tflops, toDouble);
    read(j, "", "memory_before_backward", c.memory_before_backward, kInt64);
    read(j, "", "peak_memory", c.peak_memory, kInt64);
    // Absent from cells stored before they were measured: left at 0.
    for (auto [key, field] : {std::pair{"forward_mean_ms", &c.forward_mean_ms},
                              {"forward_std_ms", &c.forward_std_ms},
                              {"backward_mean_ms", &c.backward_mean_ms},
                              {"backward_std_ms", &c.backward_std_ms},
                              {"forward_backward_mean_ms", &c.forward_backward_mean_ms},
                              {"forward_backward_std_ms", &c.forward_backward_std_ms},
                              {"first_call_ms", &c.first_call_ms}})
        if (j.contains(key)) read(j, "", key, *field, toDouble);
    if (j.contains("traceback")) read(j, "", "traceback", c.traceback, toStr);
    read(j, "", "err_out", c.err_out, toDouble);
    read(j, "", "err_grad", c.err_grad, toDouble);
    read(j, "", "tolerance", c.tolerance, toDouble);
    return c;
}

std::string attentionProblemJson(const AttentionCell& cell) {
    // The cell's problem (everything but its measurements) is its configuration.
    json config = toJson(cell);
    for (const char* k : {"status",
                          "error",
                          "forward_ms",
                          "backward_ms",
                          "forward_backward_ms",
                          "forward_tflops",
                          "backward_tflops",
                          "forward_backward_tflops",
                          "memory_before_backward",
                          "peak_memory",
                          "err_out",
                          "err_grad",
                          "tolerance",
                          "forward_mean_ms",
                          "forward_std_ms",
                          "backward_mean_ms",
                          "backward_std_ms",
                          "forward_backward_mean_ms",
                          "forward_backward_std_ms",
                          "first_call_ms",
                          "traceback"})
        config.erase(k);
    return dumpJson(config);
}

json toJson(const AttentionBenchSpec& s) {
    auto names = [](const auto& values) {
        std::vector<std::string> out;
        for (auto v : values) out.emplace_back(toString(v));
        return out;
    };
    nlohmann::json j = {{"command", "attention"},
                        {"device", s.device},
                        {"impls", names(s.impls)},
                        {"python_impls", s.python_impls},
                        {"code", s.code},
                        {"python", s.python},
                        {"seq_lens", s.seq_lens},
                        {"head_dims", s.head_dims},
                        {"batches", s.batches},
                        {"heads", s.heads},
                        {"dtypes", names(s.dtypes)},
                        {"causal", s.causal},
                        {"passes", names(s.passes)},
                        {"warmup", s.warmup},
                        {"steps", s.steps},
                        {"seed", s.seed},
                        {"check", s.check},
                        {"cells", attentionCellCount(s)}};
    if (s.cuda_profiler_range) j["cuda_profiler_range"] = true;
    return j;
}

void storeAttentionCell(ResultStore& store, int64_t run_id, int index, const AttentionCell& cell) {
    store.addRow(run_id, {index, cell.status, attentionProblemJson(cell), dumpJson(toJson(cell))});
}

std::vector<AttentionCell> loadAttentionCells(const ResultStore& store, int64_t run_id) {
    RunInfo info;
    info.id = run_id;
    info.lab = kAttentionLab;
    return attentionCellsFromRows(info, store.rows(run_id, kAttentionLab));
}

}  // namespace ts
