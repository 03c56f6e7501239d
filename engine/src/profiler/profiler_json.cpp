#include "profiler/profiler_json.h"

#include <fmt/format.h>

#include "core/json.h"
#include "core/json_read.h"
#include "core/point_json.h"
#include "core/store.h"

namespace ts {

using nlohmann::json;

namespace {

// Events go out as arrays, not objects: a large model's step has tens of thousands of them.
json rangeJson(const ProfiledRange& e) {
    return json::array({e.name, e.thread, e.start_ns, e.end_ns});
}
json opJson(const ProfiledOp& e) {
    return json::array({e.name, e.thread, e.start_ns, e.end_ns, e.self_ns, e.device_ns,
                        toString(e.phase), e.range, e.flops, e.shapes, e.top_level});
}
json kernelJson(const ProfiledKernel& e) {
    return json::array(
        {e.name, e.start_ns, e.duration_ns, e.stream, toString(e.phase), e.range, e.op});
}

}  // namespace

json toJson(const ProfileSpec& s) {
    json j = {{"bench", toJson(s.bench)}, {"profile_steps", s.profile_steps}};
    if (!s.imported.empty()) j["imported"] = s.imported;  // absent for a profile TrainScope ran
    return j;
}

ProfileSpec profileSpecFromJson(const json& j) {
    jsonio::requireObject(j, "");
    jsonio::rejectUnknown(j, "", {"bench", "profile_steps", "command", "imported"});
    ProfileSpec s;
    if (auto it = j.find("bench"); it != j.end()) {
        try {
            s.bench = pointFromJson(*it);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("bench.{}", e.what()));
        }
    }
    if (auto it = j.find("profile_steps"); it != j.end())
        s.profile_steps =
            static_cast<int>(jsonio::toInt(*it, "profile_steps", 1, kMaxProfileSteps));
    if (auto it = j.find("imported"); it != j.end()) {
        if (!it->is_string()) throw std::invalid_argument("imported: expected a file name");
        s.imported = it->get<std::string>();
    }
    return s;
}

json toJson(const ProfileResult& r) {
    json steps = json::array(), ranges = json::array(), ops = json::array(),
         kernels = json::array();
    for (const auto& s : r.steps) steps.push_back(toJson(s));
    for (const auto& e : r.trace.ranges) ranges.push_back(rangeJson(e));
    for (const auto& e : r.trace.ops) ops.push_back(opJson(e));
    for (const auto& e : r.trace.kernels) kernels.push_back(kernelJson(e));
    json out = {
        {"spec", toJson(r.spec)},
        {"status", toString(r.status)},
        {"error", r.error},
        {"oom_bytes", r.oom_bytes},
        {"gpu", r.gpu},
        {"steps", std::move(steps)},
        {"trace",
         {{"ranges", std::move(ranges)}, {"ops", std::move(ops)}, {"kernels", std::move(kernels)}}},
        {"environment", toJson(r.environment)}};
    if (r.graph_kernels > 0)  // compiled mode only: older runs have no such key
        out["graph_kernels"] = {{"replayed", r.graph_kernels}, {"named", r.graph_kernels_named}};
    return out;
}

ProfileResult profileResultFromJson(const json& j) {
    jsonio::requireObject(j, "");
    ProfileResult r;
    try {
        r.spec = profileSpecFromJson(j.at("spec"));
        auto status = parseStatus(j.at("status").get<std::string>());
        if (!status) throw std::invalid_argument("status: unknown " + j.at("status").dump());
        r.status = *status;
        r.error = j.at("error").get<std::string>();
        r.oom_bytes = j.at("oom_bytes").get<int64_t>();
        r.gpu = j.at("gpu").get<bool>();
        if (const auto g = j.find("graph_kernels"); g != j.end()) {
            r.graph_kernels = g->at("replayed").get<int64_t>();
            r.graph_kernels_named = g->at("named").get<int64_t>();
        }
        for (const auto& s : j.at("steps")) r.steps.push_back(stepFromJson(s));
        const json& t = j.at("trace");
        r.trace.ranges = jsonio::recordsFrom<ProfiledRange>(t, "ranges", 4, [](const json& e) {
            return ProfiledRange{e[0].get<std::string>(), e[1].get<uint64_t>(), e[2].get<int64_t>(),
                                 e[3].get<int64_t>()};
        });
        r.trace.ops = jsonio::recordsFrom<ProfiledOp>(t, "ops", 11, [](const json& e) {
            ProfiledOp op;
            op.name = e[0].get<std::string>();
            op.thread = e[1].get<uint64_t>();
            op.start_ns = e[2].get<int64_t>();
            op.end_ns = e[3].get<int64_t>();
            op.self_ns = e[4].get<int64_t>();
            op.device_ns = e[5].get<int64_t>();
            op.phase = jsonio::enumFrom<Phase>(e[6], parsePhase, "phase");
            op.range = e[7].get<std::string>();
            op.flops = e[8].get<double>();
            op.shapes = e[9].get<std::string>();
            op.top_level = e[10].get<bool>();
            return op;
        });
        r.trace.kernels = jsonio::recordsFrom<ProfiledKernel>(t, "kernels", 7, [](const json& e) {
            ProfiledKernel k;
            k.name = e[0].get<std::string>();
            k.start_ns = e[1].get<int64_t>();
            k.duration_ns = e[2].get<int64_t>();
            k.stream = e[3].get<int64_t>();
            k.phase = jsonio::enumFrom<Phase>(e[4], parsePhase, "phase");
            k.range = e[5].get<std::string>();
            k.op = e[6].get<std::string>();
            return k;
        });
        r.environment = environmentFromJson(j.at("environment"));
    } catch (const json::exception& e) {
        // A missing key or a value of the wrong type in a stored row: name it, do not crash.
        throw std::invalid_argument(fmt::format("profile result: {}", e.what()));
    }
    return r;
}

std::string profileSpecJson(const ProfileSpec& s) {
    json j = toJson(s);
    j["command"] = s.imported.empty() ? "profile" : "profile import";
    // An imported profile has no point: the run's settings are the file and its steps.
    if (!s.imported.empty()) j.erase("bench");
    return dumpJson(j);
}

void storeProfile(ResultStore& store, int64_t run_id, const ProfileResult& r) {
    store.addRow(run_id, {0, r.status, dumpJson(toJson(r.spec)), dumpJson(toJson(r))});
}

}  // namespace ts
