// The precision lab's JSON, tables and stored runs.
#include "precision/precision_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/json_read.h"
#include "core/store.h"
#include "core/table.h"

namespace ts {

using nlohmann::json;

namespace {

NumFormat toNumFormat(const json& v, std::string_view field) {
    const std::string s = jsonio::toStr(v, field);
    for (auto f : {NumFormat::FP32, NumFormat::FP16, NumFormat::BF16})
        if (toString(f) == s) return f;
    jsonio::fail(field, "expected fp32, fp16 or bf16, got " + jsonio::shown(v));
}

json accumulationJson(const AccumulationResult& r, bool with_running_error) {
    json j = {{"type", "accumulation"},
              {"variant", r.variant.name()},
              {"accumulator", toString(r.variant.accumulator)},
              {"addend_format", toString(r.variant.addend_format)},
              {"explicit_cast", r.variant.explicit_cast},
              {"addend", jsonio::number(r.addend)},
              {"addend_stored", jsonio::number(r.addend_stored)},
              {"count", r.count},
              {"exact", jsonio::number(r.exact)},
              {"value", jsonio::number(r.value)},
              {"error", jsonio::number(r.error)},
              {"ulp_end", jsonio::number(r.ulp_end)},
              {"first_rounding_step", r.first_rounding_step},
              {"first_stall_step", r.first_stall_step},
              {"sum_at_stall", jsonio::number(r.sum_at_stall)},
              {"ulp_at_stall", jsonio::number(r.ulp_at_stall)},
              {"torch_checked", r.torch_checked},
              {"torch_value", jsonio::number(r.torch_value)},
              {"running_error_stride", r.running_error_stride}};
    if (with_running_error) {
        json errs = json::array();
        for (double e : r.running_error) errs.push_back(jsonio::number(e));
        j["running_error"] = std::move(errs);
    }
    return j;
}

AccumulationResult accumulationFromJson(const json& j) {
    using namespace jsonio;
    AccumulationResult r;
    r.variant.accumulator = toNumFormat(j.at("accumulator"), "accumulator");
    r.variant.addend_format = toNumFormat(j.at("addend_format"), "addend_format");
    read(j, "", "explicit_cast", r.variant.explicit_cast, toBool);
    read(j, "", "addend", r.addend, toDouble);
    read(j, "", "addend_stored", r.addend_stored, toDouble);
    read(j, "", "count", r.count, intIn(0, kMaxAccumulationCount));
    read(j, "", "exact", r.exact, toDouble);
    read(j, "", "value", r.value, toDouble);
    read(j, "", "error", r.error, toDouble);
    read(j, "", "ulp_end", r.ulp_end, toDouble);
    read(j, "", "first_rounding_step", r.first_rounding_step, intIn(0, kMaxAccumulationCount));
    read(j, "", "first_stall_step", r.first_stall_step, intIn(0, kMaxAccumulationCount));
    read(j, "", "sum_at_stall", r.sum_at_stall, toDouble);
    read(j, "", "ulp_at_stall", r.ulp_at_stall, toDouble);
    read(j, "", "torch_checked", r.torch_checked, toBool);
    read(j, "", "torch_value", r.torch_value, toDouble);
    read(j, "", "running_error_stride", r.running_error_stride, intIn(1, kMaxAccumulationCount));
    readList(j, "running_error", r.running_error, toDouble);
    return r;
}

AutocastReport autocastFromJson(const json& j) {
    using namespace jsonio;
    AutocastReport r;
    read(j, "", "model", r.spec.model, toStr);
    read(j, "", "device", r.spec.device, toStr);
    read(j, "", "dtype", r.spec.dtype, toPrecision);
    read(j, "", "status", r.status, toStatus);
    read(j, "", "error", r.error, toStr);
    const auto it = j.find("records");
    if (it == j.end() || !it->is_array()) fail("records", "expected a list");
    for (size_t i = 0; i < it->size(); ++i) {
        const json& e = (*it)[i];
        requireObject(e, fmt::format("records[{}]", i));
        AutocastRecord rec;
        const std::string p = fmt::format("records[{}]", i);
        read(e, p, "name", rec.name, toStr);
        read(e, p, "kind", rec.kind, toStr);
        read(e, p, "param_dtype", rec.param_dtype, toStr);
        read(e, p, "input_dtype", rec.input_dtype, toStr);
        read(e, p, "output_dtype", rec.output_dtype, toStr);
        r.records.push_back(std::move(rec));
    }
    // Runs stored before the ops were recorded have none.
    if (const auto ops = j.find("ops"); ops != j.end()) {
        if (!ops->is_array()) fail("ops", "expected a list, got " + shown(*ops));
        for (size_t i = 0; i < ops->size(); ++i) {
            const json& e = (*ops)[i];
            const std::string p = fmt::format("ops[{}]", i);
            requireObject(e, p);
            AutocastOp op;
            read(e, p, "name", op.name, toStr);
            read(e, p, "module", op.module, toStr);
            read(e, p, "phase", op.phase, toStr);
            if (op.phase != "forward" && op.phase != "backward")
                fail(p + ".phase",
                     "expected forward or backward, got " + shown(e.value("phase", json())));
            read(e, p, "depth", op.depth, intIn(0, 1000));
            if (const auto in = e.find("input_dtypes"); in != e.end()) {
                if (!in->is_array())
                    fail(p + ".input_dtypes", "expected a list, got " + shown(*in));
                for (size_t k = 0; k < in->size(); ++k)
                    op.input_dtypes.push_back(
                        toStr((*in)[k], fmt::format("{}.input_dtypes[{}]", p, k)));
            }
            read(e, p, "computed_dtype", op.computed_dtype, toStr);
            read(e, p, "output_dtype", op.output_dtype, toStr);
            read(e, p, "cast", op.cast, toBool);
            read(e, p, "autograd_node", op.autograd_node, toStr);
            r.ops.push_back(std::move(op));
        }
    }
    return r;
}

TrainNumericsCurve trainFromJson(const json& j) {
    using namespace jsonio;
    TrainNumericsCurve c;
    read(j, "", "precision", c.precision, toPrecision);
    read(j, "", "status", c.status, toStatus);
    read(j, "", "error", c.error, toStr);
    read(j, "", "grad_elements", c.grad_elements, kInt64);
    const auto it = j.find("steps");
    if (it == j.end() || !it->is_array()) fail("steps", "expected a list");
    for (size_t i = 0; i < it->size(); ++i) {
        const json& e = (*it)[i];
        const std::string p = fmt::format("steps[{}]", i);
        requireObject(e, p);
        TrainNumericsStep s;
        read(e, p, "step", s.step, intIn(1, kMaxTrainNumericsSteps));
        read(e, p, "loss", s.loss, toDouble);
        read(e, p, "loss_scale", s.loss_scale, toDouble);
        read(e, p, "skipped", s.skipped, toBool);
        read(e, p, "fp16_underflow", s.fp16_underflow, kInt64);
        c.steps.push_back(s);
    }
    return c;
}

std::string orDash(const std::string& s) { return s.empty() ? "-" : s; }

// Rows of cells as an aligned text table or a Markdown one, its cells escaped.
// See Note [tables other programs read].
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows, TableFormat format) {
    std::string out;
    if (format == TableFormat::Markdown) {
        TextTable t{header, std::vector<bool>(header.size(), false), rows};
        t.compact = true;
        return renderTable(t, format);
    }
    std::vector<size_t> width(header.size());
    for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], r[i].size());
    auto line = [&](const std::vector<std::string>& cells) {
        for (size_t i = 0; i < cells.size(); ++i)
            out += (i ? "  " : "") + cells[i] + std::string(width[i] - cells[i].size(), ' ');
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += "\n";
    };
    line(header);
    for (const auto& r : rows) line(r);
    return out;
}

}  // namespace

json toJson(const AccumulationResult& r) { return accumulationJson(r, true); }

json toJson(const AutocastReport& r) {
    json recs = json::array();
    for (const auto& rec : r.records)
        recs.push_back({{"name", rec.name},
                        {"kind", rec.kind},
                        {"param_dtype", rec.param_dtype},
                        {"input_dtype", rec.input_dtype},
                        {"output_dtype", rec.output_dtype}});
    json ops = json::array();
    for (const auto& op : r.ops)
        ops.push_back({{"name", op.name},
                       {"module", op.module},
                       {"phase", op.phase},
                       {"depth", op.depth},
                       {"input_dtypes", op.input_dtypes},
                       {"computed_dtype", op.computed_dtype},
                       {"output_dtype", op.output_dtype},
                       {"cast", op.cast},
                       {"autograd_node", op.autograd_node}});
    return {{"type", "autocast"},
            {"model", r.spec.model},
            {"device", r.spec.device},
            {"dtype", toString(r.spec.dtype)},
            {"status", toString(r.status)},
            {"error", r.error},
            {"records", recs},
            {"ops", ops}};
}

json toJson(const TrainNumericsCurve& c) {
    json steps = json::array();
    for (const auto& s : c.steps)
        steps.push_back({{"step", s.step},
                         {"loss", jsonio::number(s.loss)},
                         {"loss_scale", jsonio::number(s.loss_scale)},
                         {"skipped", s.skipped},
                         {"fp16_underflow", s.fp16_underflow}});
    return {{"type", "train"},
            {"precision", toString(c.precision)},
            {"status", toString(c.status)},
            {"error", c.error},
            {"grad_elements", c.grad_elements},
            {"skipped_steps", c.skippedSteps()},
            {"final_loss", jsonio::number(c.finalLoss())},
            {"steps", steps}};
}

PrecisionRow precisionRowFromJson(const json& j) {
    jsonio::requireObject(j, "row");
    const std::string type = jsonio::toStr(j.value("type", json()), "type");
    PrecisionRow row;
    try {
        if (type == "accumulation")
            row.accumulation = accumulationFromJson(j);
        else if (type == "autocast")
            row.autocast = autocastFromJson(j);
        else if (type == "train")
            row.train = trainFromJson(j);
        else
            jsonio::fail("type", "expected accumulation, autocast or train, got " +
                                     jsonio::shown(j.at("type")));
    } catch (const json::exception& e) {
        throw std::runtime_error(e.what());
    }
    return row;
}

void storeAccumulation(ResultStore& store, int64_t run_id, int index, const AccumulationResult& r) {
    const json config = {
        {"variant", r.variant.name()}, {"addend", jsonio::number(r.addend)}, {"count", r.count}};
    store.addRow(run_id, {index, Status::Ok, dumpJson(config), dumpJson(toJson(r))});
}

void storeAutocast(ResultStore& store, int64_t run_id, int index, const AutocastReport& r) {
    const json config = {
        {"model", r.spec.model}, {"device", r.spec.device}, {"dtype", toString(r.spec.dtype)}};
    store.addRow(run_id, {index, r.status, dumpJson(config), dumpJson(toJson(r))});
}

void storeTrainNumerics(ResultStore& store, int64_t run_id, int index,
                        const TrainNumericsCurve& c) {
    const json config = {{"precision", toString(c.precision)}};
    store.addRow(run_id, {index, c.status, dumpJson(config), dumpJson(toJson(c))});
}

namespace {
PrecisionRow rowFromText(const std::string& s) { return precisionRowFromJson(parseJson(s)); }
}  // namespace

std::vector<PrecisionRow> precisionRowsFromRows(const RunInfo& run,
                                                const std::vector<StoredRow>& rows) {
    return parseRows<PrecisionRow>(run, rows, rowFromText);
}

std::string accumulationTable(const std::vector<AccumulationResult>& results, TableFormat format) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : results) {
        const std::string stall = r.first_stall_step
                                      ? fmt::format("step {} at {} (ulp {})", r.first_stall_step,
                                                    r.sum_at_stall, r.ulp_at_stall)
                                      : "never";
        rows.push_back(
            {r.variant.name(), fmt::format("{:.4f}", r.value), fmt::format("{}", r.value),
             fmt::format("{:+.4e}", r.error), fmt::format("{}", r.addend_stored),
             r.first_rounding_step ? fmt::format("step {}", r.first_rounding_step) : "never", stall,
             fmt::format("{}", r.ulp_end),
             !r.torch_checked           ? "-"
             : r.torch_value == r.value ? "same"
                                        : fmt::format("{}", r.torch_value)});
    }
    return table({"sum", "value", "exact value", "error", "addend as stored", "first rounds",
                  "first stalls", "ulp at end", "LibTorch"},
                 rows, format);
}

std::string autocastTable(const AutocastReport& report, TableFormat format) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : report.records)
        rows.push_back({r.name, r.kind, orDash(r.param_dtype), orDash(r.input_dtype),
                        orDash(r.output_dtype), orDash(report.computedIn(r))});
    return table({"tensor", "kind", "parameters", "input", "output", "computed in"}, rows, format);
}

std::string autocastOpsTable(const AutocastReport& report, TableFormat format) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& op : report.ops) {
        std::string inputs;
        for (const auto& d : op.input_dtypes) inputs += (inputs.empty() ? "" : ", ") + d;
        // Text indents nested ops; Markdown would eat the spaces, so it uses dots.
        const std::string indent(static_cast<size_t>(op.depth) * 2,
                                 format == TableFormat::Markdown ? '.' : ' ');
        rows.push_back({op.phase, orDash(op.module), indent + op.name, orDash(op.autograd_node),
                        orDash(inputs), op.cast ? "yes" : "no", orDash(op.computed_dtype),
                        orDash(op.output_dtype)});
    }
    return table(
        {"phase", "module", "op", "autograd node", "inputs", "cast", "computed in", "output"}, rows,
        format);
}

std::string trainNumericsTable(const std::vector<TrainNumericsCurve>& curves, TableFormat format) {
    const TrainNumericsCurve* fp32 = nullptr;
    for (const auto& c : curves)
        if (c.precision == Precision::FP32 && c.status == Status::Ok) fp32 = &c;
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : curves) {
        if (c.status != Status::Ok) {
            rows.push_back({std::string(toString(c.precision)), std::string(toString(c.status)),
                            printable(c.error), "", "", "", "", ""});
            continue;
        }
        std::string diff = "-";
        if (fp32 && &c != fp32) {
            double d = 0;
            for (size_t i = 0; i < c.steps.size() && i < fp32->steps.size(); ++i)
                d = std::max(d, std::fabs(c.steps[i].loss - fp32->steps[i].loss));
            diff = fmt::format("{:.2e}", d);
        }
        int64_t underflow_max = 0;
        for (const auto& s : c.steps) underflow_max = std::max(underflow_max, s.fp16_underflow);
        const bool scaled = !c.steps.empty() && c.steps.front().loss_scale > 0;
        rows.push_back(
            {std::string(toString(c.precision)), "ok",
             c.steps.empty() ? "-" : fmt::format("{:.4f}", c.steps.front().loss),
             fmt::format("{:.4f}", c.finalLoss()), diff,
             scaled ? fmt::format("{}", c.skippedSteps()) : "-",
             scaled ? fmt::format("{} → {}", c.steps.front().loss_scale, c.steps.back().loss_scale)
                    : "-",
             fmt::format("{} of {}", underflow_max, c.grad_elements)});
    }
    return table({"precision", "status", "first loss", "final loss", "max Δ loss vs fp32",
                  "skipped steps", "loss scale", "fp16 underflow (max/step)"},
                 rows, format);
}

std::string autocastPolicyNote(const AutocastReport& r) {
    if (r.spec.device.rfind("cpu", 0) != 0) return {};
    // Note [autocast on the CPU]: torch.autocast("cpu") has op lists of its own, shorter in fp32
    // than CUDA's: layer_norm, group_norm, softmax, log_softmax, sum, exp and the other ops below
    // are on CUDA's "autocast to float32" list (PyTorch's AMP documentation) and on no list of
    // the CPU's, so on the CPU they run on their reduced inputs and return the reduced dtype (a
    // LayerNorm comes out bf16), where on a GPU they are fp32 islands. The inspector records what
    // ran; this note says which of its ops would differ on a GPU.
    static const std::vector<std::string_view> kCudaFp32 = {"layer_norm",  "native_layer_norm",
                                                            "group_norm",  "native_group_norm",
                                                            "softmax",     "_softmax",
                                                            "log_softmax", "_log_softmax",
                                                            "sum",         "cumsum",
                                                            "cumprod",     "prod",
                                                            "norm",        "exp",
                                                            "expm1",       "log",
                                                            "log2",        "log10",
                                                            "log1p",       "pow",
                                                            "rsqrt",       "reciprocal",
                                                            "softplus",    "acos",
                                                            "asin",        "cosh",
                                                            "sinh",        "tan",
                                                            "erfinv",      "dist",
                                                            "pdist",       "cdist",
                                                            "renorm",      "cosine_similarity"};
    const std::string reduced(toString(r.spec.dtype));
    std::vector<std::string> seen;
    for (const auto& op : r.ops) {
        // The op the module's code called (layer_norm), not the ops inside it (native_layer_norm).
        if (op.phase != "forward" || op.depth != 0 || op.output_dtype != reduced) continue;
        const std::string name = op.name.rfind("aten::", 0) == 0 ? op.name.substr(6) : op.name;
        if (std::find(kCudaFp32.begin(), kCudaFp32.end(), name) == kCudaFp32.end()) continue;
        const std::string item = op.module.empty() ? name : fmt::format("{} ({})", name, op.module);
        if (std::find(seen.begin(), seen.end(), item) == seen.end()) seen.push_back(item);
    }
    std::string note = fmt::format(
        "On the CPU, autocast follows the CPU's op lists, not CUDA's: ops that CUDA's autocast "
        "keeps in fp32 (layer_norm, softmax, sum, exp, ...) run in {} here",
        reduced);
    if (!seen.empty())
        note += fmt::format(" — {} came out {}, where on a GPU {} fp32", fmt::join(seen, ", "),
                            reduced, seen.size() == 1 ? "it is" : "they are");
    return note + ". Run it with --device cuda to see the GPU's policy.";
}

std::vector<CsvTable> precisionCsvTables(const std::vector<AccumulationResult>& sums,
                                         const std::vector<AutocastReport>& casts,
                                         const std::vector<TrainNumericsCurve>& curves) {
    // See Note [tables other programs read]: each table its own CSV; "never" and "not checked"
    // are empty fields, as is a dtype the record has none of.
    auto step = [](int64_t s) { return s > 0 ? fmt::format("{}", s) : std::string(); };
    std::vector<CsvTable> out;
    if (!sums.empty()) {
        TextTable t;
        t.headers = {"variant",
                     "accumulator",
                     "addend_format",
                     "explicit_cast",
                     "addend",
                     "addend_stored",
                     "count",
                     "exact",
                     "value",
                     "error",
                     "ulp_end",
                     "first_rounding_step",
                     "first_stall_step",
                     "sum_at_stall",
                     "ulp_at_stall",
                     "torch_value"};
        for (const auto& r : sums)
            t.rows.push_back({r.variant.name(), std::string(toString(r.variant.accumulator)),
                              std::string(toString(r.variant.addend_format)),
                              r.variant.explicit_cast ? "1" : "0", csvNumber(r.addend),
                              csvNumber(r.addend_stored), fmt::format("{}", r.count),
                              csvNumber(r.exact), csvNumber(r.value), csvNumber(r.error),
                              csvNumber(r.ulp_end), step(r.first_rounding_step),
                              step(r.first_stall_step),
                              r.first_stall_step ? csvNumber(r.sum_at_stall) : "",
                              r.first_stall_step ? csvNumber(r.ulp_at_stall) : "",
                              r.torch_checked ? csvNumber(r.torch_value) : ""});
        out.push_back({"sums", renderTable(t, TableFormat::Csv)});
    }
    if (!casts.empty()) {
        TextTable t;
        t.headers = {"model", "device",     "dtype", "status", "tensor",
                     "kind",  "parameters", "input", "output", "computed_in"};
        for (const auto& c : casts)
            for (const auto& r : c.records)
                t.rows.push_back({c.spec.model, c.spec.device, std::string(toString(c.spec.dtype)),
                                  std::string(toString(c.status)), r.name, r.kind, r.param_dtype,
                                  r.input_dtype, r.output_dtype, c.computedIn(r)});
        out.push_back({"tensors", renderTable(t, TableFormat::Csv)});
    }
    if (!casts.empty()) {
        TextTable t;
        t.headers = {"model", "device",        "dtype",  "phase", "module",      "op",
                     "depth", "autograd_node", "inputs", "cast",  "computed_in", "output"};
        for (const auto& c : casts)
            for (const auto& op : c.ops) {
                std::string inputs;
                for (const auto& d : op.input_dtypes) inputs += (inputs.empty() ? "" : " ") + d;
                t.rows.push_back({c.spec.model, c.spec.device, std::string(toString(c.spec.dtype)),
                                  op.phase, op.module, op.name, fmt::format("{}", op.depth),
                                  op.autograd_node, inputs, op.cast ? "1" : "0", op.computed_dtype,
                                  op.output_dtype});
            }
        out.push_back({"ops", renderTable(t, TableFormat::Csv)});
    }
    if (!curves.empty()) {
        TextTable t;
        t.headers = {"precision",  "status",  "step",          "loss",
                     "loss_scale", "skipped", "fp16_underflow"};
        for (const auto& c : curves)
            for (const auto& st : c.steps)
                t.rows.push_back({std::string(toString(c.precision)),
                                  std::string(toString(c.status)), fmt::format("{}", st.step),
                                  csvNumber(st.loss),
                                  st.loss_scale > 0 ? csvNumber(st.loss_scale) : "",
                                  st.skipped ? "1" : "0", fmt::format("{}", st.fp16_underflow)});
        out.push_back({"steps", renderTable(t, TableFormat::Csv)});
    }
    return out;
}

std::string trainNumericsJsonLine(const TrainNumericsCurve& c) { return dumpJson(toJson(c)); }

std::string accumulationJsonLine(const AccumulationResult& r, bool with_running_error) {
    return dumpJson(accumulationJson(r, with_running_error));
}

std::string autocastJsonLine(const AutocastReport& r) { return dumpJson(toJson(r)); }

namespace {

std::string precisionRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                               ReportFormat format) {
    const auto parsed = precisionRowsFromRows(info, rows);
    std::vector<AccumulationResult> sums;
    std::vector<AutocastReport> casts;
    std::vector<TrainNumericsCurve> curves;
    for (const auto& r : parsed) {
        if (r.train) curves.push_back(*r.train);
        if (r.accumulation) sums.push_back(*r.accumulation);
        if (r.autocast) casts.push_back(*r.autocast);
    }
    if (format == ReportFormat::Json) {
        json arr = json::array();
        for (const auto& s : sums) arr.push_back(toJson(s));
        for (const auto& c : casts) arr.push_back(toJson(c));
        for (const auto& c : curves) arr.push_back(toJson(c));
        return dumpJson(json{{"id", info.id},
                             {"kind", info.lab},
                             {"label", info.label},
                             {"created", info.created},
                             {"device", info.device_name},
                             {"rows", arr}},
                        2) +
               "\n";
    }
    if (format == ReportFormat::Csv) {
        const auto tables = precisionCsvTables(sums, casts, curves);
        return tables.empty() ? std::string() : tables.front().csv;
    }
    const TableFormat tf =
        format == ReportFormat::Markdown ? TableFormat::Markdown : TableFormat::Text;
    std::string out = format == ReportFormat::Markdown
                          ? fmt::format("# TrainScope precision run {}\n\n", info.id)
                          : "";
    const bool md = format == ReportFormat::Markdown;
    auto text = [md](const std::string& t) { return md ? markdownText(t) : printable(t); };
    out += text(runHeadline(info, parsed.size(), "row")) + "\n\n";
    // The run's settings, as its spec has them (see Note [tables other programs read]).
    if (const std::string settings = specSettings(info); md && !settings.empty())
        out += "Settings: " + markdownText(settings) + ".\n\n";
    if (!sums.empty())
        out += fmt::format("Sums of {} × {} (exact {}):\n\n", sums.front().addend,
                           sums.front().count, sums.front().exact) +
               accumulationTable(sums, tf);
    for (const auto& c : casts) {
        out += fmt::format("\nAutocast {} on {}, model {}: {}\n\n", toString(c.spec.dtype),
                           text(c.spec.device), text(c.spec.model),
                           c.status == Status::Ok ? "ok" : text(c.error));
        if (const std::string policy = autocastPolicyNote(c); !policy.empty())
            out += text(policy) + "\n\n";
        out += autocastTable(c, tf);
        if (!c.ops.empty())
            out += "\nOps (computed in: the dtypes of the inputs the kernel got):\n\n" +
                   autocastOpsTable(c, tf);
    }
    if (!curves.empty())
        out += fmt::format("\nTraining, {} steps:\n\n", curves.front().steps.size()) +
               trainNumericsTable(curves, tf);
    return out;
}

}  // namespace

std::string trainNumericsSpecJson(const TrainNumericsSpec& s) {
    std::vector<std::string> precisions;
    for (auto p : s.precisions) precisions.emplace_back(toString(p));
    json j{{"command", "precision train"},
           {"precisions", precisions},
           {"steps", s.steps},
           {"lr", jsonio::number(s.lr)},
           {"init_scale", jsonio::number(s.init_scale)},
           {"device", s.device},
           {"in_features", s.in_features},
           {"out_features", s.out_features},
           {"batch", s.batch},
           {"seed", s.seed}};
    if (s.cuda_profiler_range) j["cuda_profiler_range"] = true;
    return dumpJson(j);
}

std::string accumulationSpecJson(const AccumulationSpec& s) {
    return dumpJson(json{{"command", "precision accumulate"},
                         {"addend", jsonio::number(s.addend)},
                         {"count", s.count},
                         {"fp16", s.fp16},
                         {"bf16", s.bf16}});
}

std::string autocastSpecJson(const AutocastSpec& s) {
    return dumpJson(json{{"command", "precision autocast"},
                         {"model", s.model},
                         {"device", s.device},
                         {"dtype", toString(s.dtype)},
                         {"in_features", s.in_features},
                         {"out_features", s.out_features},
                         {"batch", s.batch},
                         {"context_length", s.context_length},
                         {"seed", s.seed}});
}

Lab precisionLab() {
    Lab lab{kPrecisionLab, "Precision", precisionRunReport, rowProblemOf(rowFromText)};
    lab.csv_tables = [](const RunInfo& info, const std::vector<StoredRow>& rows) {
        std::vector<AccumulationResult> sums;
        std::vector<AutocastReport> casts;
        std::vector<TrainNumericsCurve> curves;
        for (const auto& r : precisionRowsFromRows(info, rows)) {
            if (r.accumulation) sums.push_back(*r.accumulation);
            if (r.autocast) casts.push_back(*r.autocast);
            if (r.train) curves.push_back(*r.train);
        }
        return precisionCsvTables(sums, casts, curves);
    };
    return lab;
}

}  // namespace ts
