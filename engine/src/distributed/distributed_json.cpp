#include "distributed/distributed_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/json.h"
#include "core/json_read.h"
#include "core/lab.h"

namespace ts {

using nlohmann::json;
namespace jr = jsonio;

// ---- Specs ----

json toJson(const DdpSpec& s) {
    json j = {{"size", s.model_size},
              {"context_length", s.context_length},
              {"vocab_size", s.vocab_size},
              {"batch_per_rank", s.batch_per_rank},
              {"precision", toString(s.precision)},
              {"attention", toString(s.attention)},
              {"strategy", s.strategy},
              {"bucket_mb", s.bucket_mb},
              {"shard_optimizer", s.shard_optimizer},
              {"param_dtype", s.param_dtype},
              {"prefetch", s.prefetch},
              {"checkpoint", toString(s.checkpoint)},
              {"fused_loss", s.fused_loss},
              {"fused_kernels", s.fused_kernels},
              {"keep_attention", s.keep_attention},
              {"compile", s.compile},
              {"warmup_steps", s.warmup_steps},
              {"measured_steps", s.measured_steps},
              {"seed", s.seed},
              {"learning_rate", s.learning_rate},
              {"device", s.device}};
    // Only where given, so that a point of TrainScope's own reads as it always has.
    if (!s.code.empty()) j["code"] = s.code;
    if (!s.python.empty()) j["python"] = s.python;
    if (s.cuda_profiler_range) j["cuda_profiler_range"] = true;
    if (s.trace_steps > 0) j["trace_steps"] = s.trace_steps;
    if (!s.trace_dir.empty()) j["trace_dir"] = s.trace_dir;
    if (s.exec != ExecMode::Eager) j["exec"] = toString(s.exec);  // stored runs before read eager
    return j;
}

DdpSpec ddpSpecFromJson(const json& j) {
    jr::requireObject(j, "ddp");
    jr::rejectUnknown(j, "ddp", {"size",           "context_length", "vocab_size",
                                 "batch_per_rank", "precision",      "attention",
                                 "strategy",       "bucket_mb",      "shard_optimizer",
                                 "param_dtype",    "prefetch",       "checkpoint",
                                 "fused_loss",     "fused_kernels",  "keep_attention",
                                 "compile",        "warmup_steps",   "measured_steps",
                                 "seed",           "learning_rate",  "device",
                                 "code",           "python",         "cuda_profiler_range",
                                 "trace_steps",    "trace_dir",      "exec"});
    DdpSpec s;
    jr::read(j, "ddp", "size", s.model_size, jr::toStr);
    jr::read(j, "ddp", "context_length", s.context_length, jr::intIn(1, int64_t{1} << 24));
    jr::read(j, "ddp", "vocab_size", s.vocab_size, jr::intIn(1, int64_t{1} << 24));
    jr::read(j, "ddp", "batch_per_rank", s.batch_per_rank, jr::intIn(1, int64_t{1} << 20));
    jr::read(j, "ddp", "precision", s.precision, jr::toPrecision);
    jr::read(j, "ddp", "attention", s.attention, jr::toAttentionImpl);
    jr::read(j, "ddp", "strategy", s.strategy, jr::toStr);
    jr::read(j, "ddp", "bucket_mb", s.bucket_mb, jr::toDouble);
    jr::read(j, "ddp", "shard_optimizer", s.shard_optimizer, jr::toBool);
    jr::read(j, "ddp", "param_dtype", s.param_dtype, jr::toStr);
    jr::read(j, "ddp", "prefetch", s.prefetch, jr::intIn(0, 64));
    jr::read(j, "ddp", "fused_loss", s.fused_loss, jr::toBool);
    jr::read(j, "ddp", "fused_kernels", s.fused_kernels, jr::toBool);
    jr::read(j, "ddp", "keep_attention", s.keep_attention, jr::toBool);
    jr::read(j, "ddp", "compile", s.compile, jr::toBool);
    if (auto it = j.find("checkpoint"); it != j.end()) {
        const auto c = parseCheckpointing(jr::toStr(*it, "ddp.checkpoint"));
        if (!c)
            jr::fail("ddp.checkpoint",
                     "expected none, a number of blocks, sqrt or nested, got " + jr::shown(*it));
        s.checkpoint = *c;
    }
    jr::read(j, "ddp", "warmup_steps", s.warmup_steps, jr::intIn(0, 1'000'000));
    jr::read(j, "ddp", "measured_steps", s.measured_steps, jr::intIn(0, 1'000'000));
    jr::read(j, "ddp", "seed", s.seed, jr::toUint);
    jr::read(j, "ddp", "learning_rate", s.learning_rate, jr::toDouble);
    jr::read(j, "ddp", "device", s.device, jr::toStr);
    jr::read(j, "ddp", "code", s.code, jr::toStr);
    jr::read(j, "ddp", "python", s.python, jr::toStr);
    jr::read(j, "ddp", "cuda_profiler_range", s.cuda_profiler_range, jr::toBool);
    jr::read(j, "ddp", "trace_steps", s.trace_steps, jr::intIn(0, 1'000'000));
    jr::read(j, "ddp", "trace_dir", s.trace_dir, jr::toStr);
    jr::read(j, "ddp", "exec", s.exec, jr::toExecMode);
    return s;
}

json toJson(const dist::AllreduceSpec& s) {
    json dtypes = json::array();
    for (auto d : s.dtypes) dtypes.push_back(dist::dtypeName(d));
    return {{"sizes", s.sizes},
            {"dtypes", dtypes},
            {"warmup", s.warmup},
            {"iters", s.iters},
            {"link_gbps", s.link_gbps}};
}

dist::AllreduceSpec allreduceSpecFromJson(const json& j) {
    jr::requireObject(j, "allreduce");
    jr::rejectUnknown(j, "allreduce", {"sizes", "dtypes", "warmup", "iters", "link_gbps"});
    dist::AllreduceSpec s;
    s.sizes.clear();
    jr::readList(j, "sizes", s.sizes, jr::intIn(1, dist::kMaxAllreduceBytes));
    if (j.contains("dtypes")) {
        s.dtypes.clear();
        jr::readList(j, "dtypes", s.dtypes, [](const json& v, std::string_view f) {
            const auto d = dist::parseDtype(jr::toStr(v, f));
            if (!d) jr::fail(f, "expected fp32 or bf16, got " + jr::shown(v));
            return *d;
        });
    }
    jr::read(j, "allreduce", "warmup", s.warmup, jr::intIn(0, 1'000'000));
    jr::read(j, "allreduce", "iters", s.iters, jr::intIn(1, 1'000'000));
    jr::read(j, "allreduce", "link_gbps", s.link_gbps, jr::toDouble);
    return s;
}

json toJson(const DistributedPoint& p) {
    json j{{"experiment", toString(p.experiment)},
           {"backend", dist::backendName(p.backend)},
           {"world_size", p.world_size}};
    if (p.experiment == DistExperiment::Allreduce)
        j["allreduce"] = toJson(p.allreduce);
    else
        j["ddp"] = toJson(p.ddp);
    return j;
}

DistributedPoint distributedPointFromJson(const json& j) {
    jr::requireObject(j, "point");
    jr::rejectUnknown(j, "point", {"experiment", "backend", "world_size", "allreduce", "ddp"});
    DistributedPoint p;
    if (auto it = j.find("experiment"); it != j.end()) {
        const auto e = parseDistExperiment(jr::toStr(*it, "experiment"));
        if (!e) jr::fail("experiment", "expected allreduce or ddp, got " + jr::shown(*it));
        p.experiment = *e;
    }
    if (auto it = j.find("backend"); it != j.end()) {
        const auto b = dist::parseBackend(jr::toStr(*it, "backend"));
        if (!b) jr::fail("backend", "expected gloo or nccl, got " + jr::shown(*it));
        p.backend = *b;
    }
    jr::read(j, "point", "world_size", p.world_size, jr::intIn(1, 256));
    if (auto it = j.find("allreduce"); it != j.end()) p.allreduce = allreduceSpecFromJson(*it);
    if (auto it = j.find("ddp"); it != j.end()) p.ddp = ddpSpecFromJson(*it);
    return p;
}

std::string distributedSpecJson(const DistributedSpec& s) {
    json points = json::array();
    for (const auto& p : s.points) points.push_back(toJson(p));
    return dumpJson(
        {{"command", "distributed"}, {"points", points}, {"hang_timeout_s", s.hang_timeout_s}});
}

DistributedSpec distributedSpecFromJson(const json& j) {
    jr::requireObject(j, "spec");
    DistributedSpec s;
    const auto it = j.find("points");
    if (it == j.end() || !it->is_array()) jr::fail("points", "expected a list of points");
    for (const auto& p : *it) s.points.push_back(distributedPointFromJson(p));
    jr::read(j, "spec", "hang_timeout_s", s.hang_timeout_s, jr::toDouble);
    return s;
}

// ---- Rows ----

namespace {

// DdpStepRow's numbers by name, written and read by the same table.
struct DoubleField {
    const char* name;
    double DdpStepRow::*member;
};
struct IntField {
    const char* name;
    int64_t DdpStepRow::*member;
};
constexpr DoubleField kDdpDoubles[] = {
    {"forward_ms", &DdpStepRow::forward_ms},
    {"backward_ms", &DdpStepRow::backward_ms},
    {"comm_wait_ms", &DdpStepRow::comm_wait_ms},
    {"optimizer_ms", &DdpStepRow::optimizer_ms},
    {"total_ms", &DdpStepRow::total_ms},
    {"comm_hidden_ms", &DdpStepRow::comm_hidden_ms},
    {"loss", &DdpStepRow::loss},
    {"global_loss", &DdpStepRow::global_loss},
    {"gather_ms", &DdpStepRow::gather_ms},
    {"reduce_scatter_ms", &DdpStepRow::reduce_scatter_ms},
    {"gather_wait_forward_ms", &DdpStepRow::gather_wait_forward_ms},
    {"gather_wait_backward_ms", &DdpStepRow::gather_wait_backward_ms}};
constexpr IntField kDdpInts[] = {{"comm_bytes", &DdpStepRow::comm_bytes},
                                 {"broadcast_bytes", &DdpStepRow::broadcast_bytes},
                                 {"sent_bytes", &DdpStepRow::sent_bytes},
                                 {"memory_after_model", &DdpStepRow::memory_after_model},
                                 {"memory_after_forward", &DdpStepRow::memory_after_forward},
                                 {"memory_after_backward", &DdpStepRow::memory_after_backward},
                                 {"memory_after_optimizer", &DdpStepRow::memory_after_optimizer},
                                 {"memory_peak", &DdpStepRow::memory_peak},
                                 {"parameter_bytes", &DdpStepRow::parameter_bytes},
                                 {"gradient_bytes", &DdpStepRow::gradient_bytes},
                                 {"optimizer_state_bytes", &DdpStepRow::optimizer_state_bytes},
                                 {"comm_buffer_bytes", &DdpStepRow::comm_buffer_bytes},
                                 {"gather_bytes", &DdpStepRow::gather_bytes},
                                 {"reduce_scatter_bytes", &DdpStepRow::reduce_scatter_bytes},
                                 {"units_gathered", &DdpStepRow::units_gathered}};

}  // namespace

json toJson(const DdpStepRow& r) {
    json j{{"rank", r.rank},
           {"world_size", r.world_size},
           {"step", r.step},
           {"warmup", r.warmup},
           {"collectives", r.collectives},
           {"launched_before_sync", r.launched_before_sync}};
    for (const auto& f : kDdpDoubles) j[f.name] = jr::number(r.*f.member);
    for (const auto& f : kDdpInts) j[f.name] = r.*f.member;
    // See Note [per-bucket timing]: only where measured, so that other rows read as before. The
    // gradients as [bytes, ready ms] pairs: an xl model has some three hundred a step.
    if (!r.buckets.empty()) {
        json buckets = json::array();
        for (const auto& b : r.buckets)
            buckets.push_back({{"index", b.index},
                               {"bytes", b.bytes},
                               {"params", b.params},
                               {"ready_ms", jr::number(b.ready_ms)},
                               {"launch_ms", jr::number(b.launch_ms)},
                               {"end_ms", jr::number(b.end_ms)}});
        j["buckets"] = buckets;
    }
    if (!r.gradients.empty()) {
        json gradients = json::array();
        for (const auto& g : r.gradients)
            gradients.push_back(json::array({g.bytes, jr::number(g.ready_ms)}));
        j["gradients"] = gradients;
    }
    if (!r.node.empty()) j["node"] = r.node;  // under torchrun or srun only
    return j;
}

DdpStepRow ddpStepRowFromJson(const json& j) {
    jr::requireObject(j, "row");
    DdpStepRow r;
    r.rank = static_cast<int>(jr::toInt(j.at("rank"), "rank", 0, 1 << 20));
    r.world_size = static_cast<int>(jr::toInt(j.at("world_size"), "world_size", 1, 1 << 20));
    r.step = static_cast<int>(jr::toInt(j.at("step"), "step", 0, 1 << 30));
    r.warmup = jr::toBool(j.at("warmup"), "warmup");
    jr::read(j, "row", "collectives", r.collectives, jr::kInt);
    jr::read(j, "row", "launched_before_sync", r.launched_before_sync, jr::kInt);
    for (const auto& f : kDdpDoubles) jr::read(j, "row", f.name, r.*f.member, jr::toDouble);
    for (const auto& f : kDdpInts) jr::read(j, "row", f.name, r.*f.member, jr::kInt64);
    if (auto it = j.find("buckets"); it != j.end()) {
        if (!it->is_array()) jr::fail("buckets", "expected a list of buckets");
        for (const auto& b : *it) {
            jr::requireObject(b, "buckets");
            dist::BucketSpan s;
            s.index = static_cast<int>(jr::toInt(b.at("index"), "buckets.index", 0, 1 << 24));
            s.bytes = jr::toInt(b.at("bytes"), "buckets.bytes", 0, int64_t{1} << 50);
            s.params = static_cast<int>(jr::toInt(b.at("params"), "buckets.params", 0, 1 << 24));
            s.ready_ms = jr::toDouble(b.at("ready_ms"), "buckets.ready_ms");
            s.launch_ms = jr::toDouble(b.at("launch_ms"), "buckets.launch_ms");
            s.end_ms = jr::toDouble(b.at("end_ms"), "buckets.end_ms");
            r.buckets.push_back(s);
        }
    }
    if (auto it = j.find("gradients"); it != j.end()) {
        if (!it->is_array()) jr::fail("gradients", "expected a list of [bytes, ready ms]");
        for (const auto& g : *it) {
            if (!g.is_array() || g.size() != 2)
                jr::fail("gradients", "expected [bytes, ready ms], got " + jr::shown(g));
            r.gradients.push_back({jr::toInt(g[0], "gradients.bytes", 0, int64_t{1} << 50),
                                   jr::toDouble(g[1], "gradients.ready_ms")});
        }
    }
    jr::read(j, "row", "node", r.node, jr::toStr);
    return r;
}

json toJson(const dist::AllreduceRow& r) {
    json ranks = json::array();
    for (const auto& x : r.ranks)
        ranks.push_back(
            {{"rank", x.rank}, {"mean_ms", x.mean_ms}, {"min_ms", x.min_ms}, {"max_ms", x.max_ms}});
    return {{"bytes", r.bytes},
            {"size", dist::formatByteSize(r.bytes)},
            {"elements", r.elements},
            {"dtype", dist::dtypeName(r.dtype)},
            {"backend", dist::backendName(r.backend)},
            {"world_size", r.world_size},
            {"iters", r.iters},
            {"time_ms", r.time_ms},
            {"rank_mean_min_ms", r.rank_mean_min_ms},
            {"fastest_ms", r.fastest_ms},
            {"slowest_ms", r.slowest_ms},
            {"algbw_gbps", r.algbw_gbps},
            {"busbw_gbps", r.busbw_gbps},
            {"ideal_ms", r.ideal_ms > 0 ? json(r.ideal_ms) : json(nullptr)},
            {"ranks", ranks}};
}

dist::AllreduceRow allreduceRowFromJson(const json& j) {
    jr::requireObject(j, "row");
    dist::AllreduceRow r;
    r.bytes = jr::toInt(j.at("bytes"), "bytes", 0, dist::kMaxAllreduceBytes);
    jr::read(j, "row", "elements", r.elements, jr::kInt64);
    const auto dtype = dist::parseDtype(jr::toStr(j.at("dtype"), "dtype"));
    if (!dtype) jr::fail("dtype", "expected fp32 or bf16, got " + jr::shown(j.at("dtype")));
    r.dtype = *dtype;
    const auto backend = dist::parseBackend(jr::toStr(j.at("backend"), "backend"));
    if (!backend) jr::fail("backend", "expected gloo or nccl, got " + jr::shown(j.at("backend")));
    r.backend = *backend;
    r.world_size = static_cast<int>(jr::toInt(j.at("world_size"), "world_size", 1, 1 << 20));
    jr::read(j, "row", "iters", r.iters, jr::kInt);
    for (auto [name, member] :
         {std::pair{"time_ms", &dist::AllreduceRow::time_ms},
          std::pair{"rank_mean_min_ms", &dist::AllreduceRow::rank_mean_min_ms},
          std::pair{"fastest_ms", &dist::AllreduceRow::fastest_ms},
          std::pair{"slowest_ms", &dist::AllreduceRow::slowest_ms},
          std::pair{"algbw_gbps", &dist::AllreduceRow::algbw_gbps},
          std::pair{"busbw_gbps", &dist::AllreduceRow::busbw_gbps}})
        jr::read(j, "row", name, r.*member, jr::toDouble);
    if (auto it = j.find("ideal_ms"); it != j.end() && !it->is_null())
        r.ideal_ms = jr::toDouble(*it, "ideal_ms");
    if (auto it = j.find("ranks"); it != j.end())
        for (const auto& x : *it)
            r.ranks.push_back({static_cast<int>(jr::toInt(x.at("rank"), "ranks.rank", 0, 1 << 20)),
                               jr::toDouble(x.at("mean_ms"), "ranks.mean_ms"),
                               jr::toDouble(x.at("min_ms"), "ranks.min_ms"),
                               jr::toDouble(x.at("max_ms"), "ranks.max_ms")});
    return r;
}

std::string ddpStepLine(const DdpStepRow& r) {
    return json{{"event", "result"}, {"experiment", "ddp"}, {"rank", r.rank}, {"row", toJson(r)}}
        .dump();
}

// Note [distributed rows]: a point's rows are stored as they arrive, so a run stopped or
// crashed midway keeps every step that was measured; the closing "point" row says how the point
// ended. The store's index numbers all rows of the run in order.
void storeDistributedRow(ResultStore& store, int64_t run_id, int index, int point,
                         const DistributedPoint& p, const json& payload, Status status) {
    json row = payload;
    row["point"] = point;
    store.addRow(run_id, {index, status, dumpJson(toJson(p)), dumpJson(row)});
}

json ddpStepPayload(const DdpStepRow& r) { return {{"type", "ddp_step"}, {"row", toJson(r)}}; }
json allreducePayload(const dist::AllreduceRow& r) {
    return {{"type", "allreduce"}, {"row", toJson(r)}};
}
json pointEndPayload(const DistributedResult& r) {
    json j = {{"type", "point"},           {"status", toString(r.status)},
              {"error", r.error},          {"failed_rank", r.failed_rank},
              {"devices", r.rank_devices}, {"environment", toJson(r.environment)}};
    if (std::any_of(r.rank_nodes.begin(), r.rank_nodes.end(),
                    [](const std::string& n) { return !n.empty(); }))
        j["nodes"] = r.rank_nodes;
    if (!r.what.empty()) j["what"] = r.what;
    if (!r.traceback.empty()) j["traceback"] = r.traceback;
    if (!r.trace_file.empty()) j["trace"] = r.trace_file;
    if (r.check.ran)
        j["check"] = {{"passed", r.check.passed},
                      {"max_diff", jr::number(r.check.max_diff)},
                      {"steps", r.check.steps},
                      {"tolerance", r.check.tolerance},
                      {"message", r.check.message}};
    return j;
}

namespace {

// One stored row applied to the results, the point made when first seen.
void applyRow(const StoredRow& row, std::vector<DistributedResult>& out,
              std::map<int, size_t>& by_point) {
    const json j = parseJson(row.result_json);
    const int point = static_cast<int>(jr::toInt(j.at("point"), "point", 0, 1 << 20));
    auto [it, added] = by_point.try_emplace(point, out.size());
    if (added) {
        DistributedResult r;
        r.point = distributedPointFromJson(parseJson(row.config_json));
        out.push_back(std::move(r));
    }
    DistributedResult& r = out[it->second];
    const std::string type = jr::toStr(j.at("type"), "type");
    if (type == "ddp_step") {
        r.steps.push_back(ddpStepRowFromJson(j.at("row")));
    } else if (type == "allreduce") {
        r.allreduce.push_back(allreduceRowFromJson(j.at("row")));
    } else if (type == "point") {
        r.status = jr::toStatus(j.at("status"), "status");
        r.error = jr::toStr(j.at("error"), "error");
        r.failed_rank =
            static_cast<int>(jr::toInt(j.at("failed_rank"), "failed_rank", -1, 1 << 20));
        r.rank_devices.clear();
        jr::readList(j, "devices", r.rank_devices, jr::toStr);
        r.rank_nodes.clear();
        jr::readList(j, "nodes", r.rank_nodes, jr::toStr);
        r.environment = environmentFromJson(j.at("environment"));
        jr::read(j, "", "what", r.what, jr::toStr);
        jr::read(j, "", "traceback", r.traceback, jr::toStr);
        jr::read(j, "", "trace", r.trace_file, jr::toStr);
        if (auto c = j.find("check"); c != j.end()) {
            jr::requireObject(*c, "check");
            r.check.ran = true;
            jr::read(*c, "check", "passed", r.check.passed, jr::toBool);
            jr::read(*c, "check", "max_diff", r.check.max_diff, jr::toDouble);
            jr::read(*c, "check", "steps", r.check.steps, jr::intIn(0, 1 << 20));
            jr::read(*c, "check", "tolerance", r.check.tolerance, jr::toStr);
            jr::read(*c, "check", "message", r.check.message, jr::toStr);
        }
    } else {
        jr::fail("type", "expected ddp_step, allreduce or point, got " + jr::shown(j.at("type")));
    }
}

}  // namespace

std::vector<DistributedResult> distributedResultsFromRows(const RunInfo& run,
                                                          const std::vector<StoredRow>& rows) {
    std::vector<DistributedResult> out;
    std::map<int, size_t> by_point;
    for (const auto& row : rows) {
        try {
            applyRow(row, out, by_point);
        } catch (const std::exception& e) {
            throw std::runtime_error(rowError(run, row, e.what()));
        }
    }
    return out;
}

std::string distributedRowProblem(const StoredRow& row) {
    try {
        std::vector<DistributedResult> out;
        std::map<int, size_t> by_point;
        applyRow(row, out, by_point);
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace ts
