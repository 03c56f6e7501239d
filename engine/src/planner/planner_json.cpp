// The planner lab's JSON: inputs, measurement, the report, and the run's spec.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json.h"
#include "core/json_read.h"
#include "planner/planner_report.h"

namespace ts {

using nlohmann::json;

json toJson(const PlannerInputs& in) {
    json j = {{"C", jsonio::number(in.flops)},
              {"W", jsonio::number(in.bandwidth)},
              {"B", jsonio::number(in.batch_tokens)},
              {"d_model", in.d_model},
              {"d_ff", in.d_ff},
              {"layers", in.layers},
              {"dp", in.dp},
              {"tp", in.tp},
              {"comm_bytes", jsonio::number(in.comm_bytes)},
              {"param_bytes", jsonio::number(in.param_bytes)},
              {"grad_bytes", jsonio::number(in.grad_bytes)},
              {"optimizer_bytes", jsonio::number(in.optimizer_bytes)},
              {"overlap_axes", in.overlap_axes}};
    j["model"] = in.model ? toJson(*in.model) : json();
    return j;
}

PlannerInputs plannerInputsFromJson(const json& j) {
    using namespace jsonio;
    requireObject(j, "inputs");
    PlannerInputs in;
    read(j, "inputs", "C", in.flops, toDouble);
    read(j, "inputs", "W", in.bandwidth, toDouble);
    read(j, "inputs", "B", in.batch_tokens, toDouble);
    read(j, "inputs", "d_model", in.d_model, kInt64);
    read(j, "inputs", "d_ff", in.d_ff, kInt64);
    read(j, "inputs", "layers", in.layers, kInt64);
    read(j, "inputs", "dp", in.dp, kInt64);
    read(j, "inputs", "tp", in.tp, kInt64);
    read(j, "inputs", "comm_bytes", in.comm_bytes, toDouble);
    read(j, "inputs", "param_bytes", in.param_bytes, toDouble);
    read(j, "inputs", "grad_bytes", in.grad_bytes, toDouble);
    read(j, "inputs", "optimizer_bytes", in.optimizer_bytes, toDouble);
    read(j, "inputs", "overlap_axes", in.overlap_axes, toBool);
    if (const auto m = j.find("model"); m != j.end() && !m->is_null()) in.model = modelFromJson(*m);
    if (const auto problems = validatePlannerInputs(in); !problems.empty())
        fail("inputs", problems.front());
    return in;
}

json toJson(const MeasureSpec& s) {
    return {{"device", s.device}, {"gemm_n", s.gemm_n},
            {"world", s.world},   {"allreduce_bytes", s.allreduce_bytes},
            {"warmup", s.warmup}, {"iters", s.iters}};
}

MeasureSpec measureSpecFromJson(const json& j) {
    using namespace jsonio;
    requireObject(j, "measure");
    MeasureSpec s;
    read(j, "measure", "device", s.device, toStr);
    read(j, "measure", "gemm_n", s.gemm_n, intIn(0, 65536));
    read(j, "measure", "world", s.world, intIn(0, 1024));
    read(j, "measure", "allreduce_bytes", s.allreduce_bytes, intIn(0, int64_t{1} << 40));
    read(j, "measure", "warmup", s.warmup, intIn(0, 1000));
    read(j, "measure", "iters", s.iters, intIn(1, 10000));
    return s;
}

json toJson(const MachineMeasurement& m) {
    return {{"device", m.device},
            {"device_name", m.device_name},
            {"gemm_dtype", m.gemm_dtype},
            {"gemm_n", m.gemm_n},
            {"gemm_ms", jsonio::number(m.gemm_ms)},
            {"C", jsonio::number(m.flops)},
            {"backend", m.backend},
            {"world", m.world},
            {"allreduce_bytes", m.allreduce_bytes},
            {"allreduce_dtype", m.allreduce_dtype},
            {"backend_ms", jsonio::number(m.backend_ms)},
            {"backend_busbw", jsonio::number(m.backend_busbw)},
            {"ring_ms", jsonio::number(m.ring_ms)},
            {"ring_busbw", jsonio::number(m.ring_busbw)},
            {"ring_exact", m.ring_exact},
            {"W", jsonio::number(m.bandwidth())},
            {"note", m.note}};
}

MachineMeasurement measurementFromJson(const json& j) {
    using namespace jsonio;
    requireObject(j, "measured");
    MachineMeasurement m;
    read(j, "measured", "device", m.device, toStr);
    read(j, "measured", "device_name", m.device_name, toStr);
    read(j, "measured", "gemm_dtype", m.gemm_dtype, toStr);
    read(j, "measured", "gemm_n", m.gemm_n, kInt64);
    read(j, "measured", "gemm_ms", m.gemm_ms, toDouble);
    read(j, "measured", "C", m.flops, toDouble);
    read(j, "measured", "backend", m.backend, toStr);
    read(j, "measured", "world", m.world, kInt);
    read(j, "measured", "allreduce_bytes", m.allreduce_bytes, kInt64);
    read(j, "measured", "allreduce_dtype", m.allreduce_dtype, toStr);
    read(j, "measured", "backend_ms", m.backend_ms, toDouble);
    read(j, "measured", "backend_busbw", m.backend_busbw, toDouble);
    read(j, "measured", "ring_ms", m.ring_ms, toDouble);
    read(j, "measured", "ring_busbw", m.ring_busbw, toDouble);
    read(j, "measured", "ring_exact", m.ring_exact, toBool);
    read(j, "measured", "note", m.note, toStr);
    return m;
}

namespace {

json plannerPassJson(const PassCost& p) {
    return {{"flops", jsonio::number(p.flops)},
            {"comm_bytes", jsonio::number(p.comm_bytes)},
            {"compute_s", jsonio::number(p.compute_s)},
            {"comm_s", jsonio::number(p.comm_s)},
            {"comm_bound", p.commBound()},
            {"flops_formula", p.flops_formula},
            {"comm_formula", p.comm_formula}};
}

}  // namespace

json toJson(const PlannerReport& r) {
    json plans = json::array();
    for (const StrategyPlan& p : r.plans) {
        json limits = json::array();
        for (const PlannerLimit& l : p.limits)
            limits.push_back({{"what", l.what},
                              {"formula", l.formula},
                              {"value", jsonio::number(l.value)},
                              {"holds", l.holds},
                              {"checked", l.checked}});
        plans.push_back({{"strategy", toString(p.strategy)},
                         {"x", p.x},
                         {"y", p.y},
                         {"forward", plannerPassJson(p.forward)},
                         {"backward", plannerPassJson(p.backward)},
                         {"step_compute_s", jsonio::number(p.step_compute_s)},
                         {"step_comm_s", jsonio::number(p.step_comm_s)},
                         {"step_s", jsonio::number(p.step_s)},
                         {"comm_bound", p.comm_bound},
                         {"params_per_device", jsonio::number(p.params_per_device)},
                         {"param_bytes", jsonio::number(p.param_bytes)},
                         {"grad_bytes", jsonio::number(p.grad_bytes)},
                         {"optimizer_bytes", jsonio::number(p.optimizer_bytes)},
                         {"memory_formula", p.memory_formula},
                         {"limits", std::move(limits)}});
        if (p.strategy == Strategy::FsdpTp) plans.back()["x_opt"] = jsonio::number(p.x_opt);
    }
    json collectives = json::array();
    for (const CollectiveCost& c : r.collectives)
        collectives.push_back({{"name", c.name},
                               {"formula", c.formula},
                               {"bytes_sent", jsonio::number(c.bytes_sent)},
                               {"seconds", jsonio::number(c.seconds)}});
    json predictions = json::array();
    for (const PlannerPrediction& p : r.predictions)
        predictions.push_back({{"strategy", toString(p.strategy)},
                               {"devices", p.devices},
                               {"model", p.model},
                               {"parameters", jsonio::number(p.parameters)},
                               {"tokens_per_device", jsonio::number(p.tokens_per_device)},
                               {"forward_flops", jsonio::number(p.forward_flops)},
                               {"backward_flops", jsonio::number(p.backward_flops)},
                               {"compute_s", jsonio::number(p.compute_s)},
                               {"forward_comm_bytes", jsonio::number(p.forward_comm_bytes)},
                               {"backward_comm_bytes", jsonio::number(p.backward_comm_bytes)},
                               {"forward_comm_s", jsonio::number(p.forward_comm_s)},
                               {"backward_comm_s", jsonio::number(p.backward_comm_s)},
                               {"step_s", jsonio::number(p.step_s)},
                               {"step_serial_s", jsonio::number(p.step_serial_s)},
                               {"memory_bytes", jsonio::number(p.memory_bytes)},
                               {"comm_bound", p.commBound()},
                               {"comm_formula", p.comm_formula}});
    json j = {{"type", "plan"},
              {"inputs", toJson(r.inputs)},
              {"C_over_W", jsonio::number(r.inputs.flops / r.inputs.bandwidth)},
              {"plans", std::move(plans)},
              {"collective_bytes", jsonio::number(r.collective_bytes)},
              {"collectives", std::move(collectives)},
              {"predictions", std::move(predictions)}};
    j["measured"] = r.measured ? toJson(*r.measured) : json();
    return j;
}

PlannerReport plannerReportFromJson(const json& j) {
    jsonio::requireObject(j, "row");
    const auto in = j.find("inputs");
    if (in == j.end()) jsonio::fail("inputs", "missing");
    std::optional<MachineMeasurement> measured;
    if (const auto m = j.find("measured"); m != j.end() && !m->is_null())
        measured = measurementFromJson(*m);
    return makePlannerReport(plannerInputsFromJson(*in), measured);
}

std::string plannerSpecJson(const PlannerInputs& in, const std::optional<MeasureSpec>& measure) {
    json j = toJson(in);
    j["command"] = "plan";
    j["measure"] = measure ? toJson(*measure) : json();
    return dumpJson(j);
}

}  // namespace ts
