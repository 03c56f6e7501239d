#include "memory/memory_json.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/json_read.h"
#include "core/point_json.h"
#include "core/store.h"

namespace ts {

using nlohmann::json;

namespace {

MemoryCategory categoryFrom(const json& v) {
    const std::string s = v.get<std::string>();
    for (MemoryCategory c : allMemoryCategories())
        if (toString(c) == s) return c;
    throw std::invalid_argument(fmt::format("unknown category {}", v.dump()));
}

json traceJson(const RawMemoryTrace& t) {
    json events = json::array(), stacks = json::array(), initial = json::array(),
         segments = json::array(), known = json::array(), driver = json::array();
    // Events go out as arrays, not objects: a step of a large model has hundreds of thousands.
    for (const auto& e : t.events)
        events.push_back(json::array({toString(e.action), e.addr, e.size, e.time_ns, e.stream,
                                      toString(e.phase), e.step, e.range, e.op, e.stack}));
    for (const auto& s : t.stacks) {
        json frames = json::array();
        for (const auto& f : s) frames.push_back(json::array({f.name, f.filename, f.line}));
        stacks.push_back(std::move(frames));
    }
    for (const auto& b : t.initial) initial.push_back(json::array({b.addr, b.size}));
    for (const auto& s : t.segments) {
        json blocks = json::array();
        for (const auto& b : s.blocks)
            blocks.push_back(json::array({b.addr, b.size, b.requested, b.allocated}));
        segments.push_back(
            json::array({s.addr, s.total_size, s.stream, s.large, std::move(blocks)}));
    }
    for (const auto& k : t.known)
        known.push_back(json::array({k.addr, k.bytes, toString(k.category), k.step}));
    for (const auto& d : t.driver) driver.push_back(json::array({d.time_ns, d.used_bytes}));
    json out = {{"device", t.device},
                {"initial_reserved", t.initial_reserved},
                {"names", t.names},
                {"events", std::move(events)},
                {"stacks", std::move(stacks)},
                {"initial", std::move(initial)},
                {"segments", std::move(segments)},
                {"known", std::move(known)},
                {"driver", std::move(driver)}};
    // Only an imported snapshot has them (See Note [importing a snapshot]).
    if (!t.given_categories.empty()) out["given_categories"] = t.given_categories;
    return out;
}

RawMemoryTrace traceFrom(const json& j) {
    RawMemoryTrace t;
    t.device = j.at("device").get<int>();
    t.initial_reserved = j.at("initial_reserved").get<int64_t>();
    t.names = j.at("names").get<std::vector<std::string>>();
    const auto names = static_cast<int32_t>(t.names.size());
    t.events = jsonio::recordsFrom<AllocEvent>(j, "events", 10, [&](const json& e) {
        AllocEvent a;
        a.action = jsonio::enumFrom<AllocAction>(e[0], parseAllocAction, "action");
        a.addr = e[1].get<uint64_t>();
        a.size = e[2].get<int64_t>();
        a.time_ns = e[3].get<int64_t>();
        a.stream = e[4].get<uint64_t>();
        a.phase = jsonio::enumFrom<Phase>(e[5], parsePhase, "phase");
        a.step = e[6].get<int>();
        a.range = e[7].get<int32_t>();
        a.op = e[8].get<int32_t>();
        a.stack = e[9].get<int32_t>();
        if (a.range >= names || a.op >= names)
            throw std::invalid_argument("a name index out of range");
        return a;
    });
    for (const auto& s : j.at("stacks")) {
        std::vector<StackFrame> frames;
        for (const auto& f : s)
            frames.push_back(
                {f.at(0).get<std::string>(), f.at(1).get<std::string>(), f.at(2).get<int64_t>()});
        t.stacks.push_back(std::move(frames));
    }
    for (const auto& e : t.events)
        if (e.stack >= static_cast<int32_t>(t.stacks.size()))
            throw std::invalid_argument("trace: a stack index out of range");
    t.initial = jsonio::recordsFrom<LiveBlock>(j, "initial", 2, [](const json& e) {
        return LiveBlock{e[0].get<uint64_t>(), e[1].get<int64_t>()};
    });
    t.segments = jsonio::recordsFrom<MemorySegment>(j, "segments", 5, [](const json& e) {
        MemorySegment s{
            e[0].get<uint64_t>(), e[1].get<int64_t>(), e[2].get<uint64_t>(), e[3].get<bool>(), {}};
        for (const auto& b : e[4])
            s.blocks.push_back({b.at(0).get<uint64_t>(), b.at(1).get<int64_t>(),
                                b.at(2).get<int64_t>(), b.at(3).get<bool>()});
        return s;
    });
    t.known = jsonio::recordsFrom<KnownStorage>(j, "known", 4, [](const json& e) {
        return KnownStorage{e[0].get<uint64_t>(), e[1].get<int64_t>(), categoryFrom(e[2]),
                            e[3].get<int>()};
    });
    t.driver = jsonio::recordsFrom<DriverSample>(j, "driver", 2, [](const json& e) {
        return DriverSample{e[0].get<int64_t>(), e[1].get<int64_t>()};
    });
    if (auto it = j.find("given_categories"); it != j.end()) {
        t.given_categories = it->get<std::vector<int8_t>>();
        if (t.given_categories.size() != t.events.size())
            throw std::invalid_argument("trace: given_categories do not match the events");
        for (int8_t c : t.given_categories)
            if (c < -1 || c >= static_cast<int8_t>(kMemoryCategories))
                throw std::invalid_argument("trace: a given category out of range");
    }
    return t;
}

FrontierResult frontierFrom(const json& j) {
    FrontierResult f;
    f.axis = jsonio::enumFrom<FrontierAxis>(j.at("axis"), parseFrontierAxis, "frontier axis");
    f.lo = j.at("lo").get<int64_t>();
    f.hi = j.at("hi").get<int64_t>();
    f.granule = j.at("granule").get<int64_t>();
    f.largest_fit = j.at("largest_fit").get<int64_t>();
    f.smallest_oom = j.at("smallest_oom").get<int64_t>();
    for (const auto& p : j.at("probes")) {
        FrontierProbe x;
        x.value = p.at("value").get<int64_t>();
        x.fits = p.at("fits").get<bool>();
        x.status = jsonio::enumFrom<Status>(p.at("status"), parseStatus, "status");
        x.peak_bytes = p.at("peak_bytes").get<int64_t>();
        x.error = p.at("error").get<std::string>();
        f.probes.push_back(std::move(x));
    }
    if (auto it = j.find("oom_trace"); it != j.end() && !it->is_null())
        f.oom_trace = traceFrom(*it);
    return f;
}

}  // namespace

RawMemoryTrace memoryTraceFromJson(const json& j) {
    try {
        return traceFrom(j);
    } catch (const json::exception& e) {
        throw std::invalid_argument(fmt::format("memory trace: {}", e.what()));
    }
}

json toJson(const FrontierResult& f) {
    json probes = json::array();
    for (const auto& p : f.probes)
        probes.push_back({{"value", p.value},
                          {"fits", p.fits},
                          {"status", toString(p.status)},
                          {"peak_bytes", p.peak_bytes},
                          {"error", p.error}});
    return {{"axis", toString(f.axis)},
            {"lo", f.lo},
            {"hi", f.hi},
            {"granule", f.granule},
            {"largest_fit", f.largest_fit},
            {"smallest_oom", f.smallest_oom},
            {"probes", std::move(probes)},
            {"oom_trace", f.oom_trace ? traceJson(*f.oom_trace) : json(nullptr)}};
}

json toJson(const MemorySpec& s) {
    json j = {{"bench", toJson(s.bench)},
              {"record_steps", s.record_steps},
              {"record_stacks", s.record_stacks},
              {"frontier", toString(s.frontier)},
              {"frontier_max", s.frontier_max}};
    if (!s.imported.empty()) j["imported"] = s.imported;  // absent for a run TrainScope recorded
    return j;
}

MemorySpec memorySpecFromJson(const json& j) {
    jsonio::requireObject(j, "");
    jsonio::rejectUnknown(j, "",
                          {"bench", "record_steps", "record_stacks", "frontier", "frontier_max",
                           "command", "imported"});
    MemorySpec s;
    if (auto it = j.find("bench"); it != j.end()) {
        try {
            s.bench = pointFromJson(*it);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("bench.{}", e.what()));
        }
    }
    if (auto it = j.find("record_steps"); it != j.end())
        s.record_steps = static_cast<int>(jsonio::toInt(*it, "record_steps", 1, kMaxRecordSteps));
    if (auto it = j.find("record_stacks"); it != j.end())
        s.record_stacks = jsonio::toBool(*it, "record_stacks");
    if (auto it = j.find("frontier"); it != j.end()) {
        auto a = parseFrontierAxis(jsonio::toStr(*it, "frontier"));
        if (!a)
            throw std::invalid_argument(
                fmt::format("frontier: {} is not one of none, context, batch", it->dump()));
        s.frontier = *a;
    }
    if (auto it = j.find("frontier_max"); it != j.end())
        s.frontier_max = jsonio::toInt(*it, "frontier_max", 0, int64_t{1} << 40);
    if (auto it = j.find("imported"); it != j.end()) s.imported = jsonio::toStr(*it, "imported");
    return s;
}

json toJson(const MemoryResult& r) {
    json steps = json::array();
    for (const auto& s : r.steps) steps.push_back(toJson(s));
    return {{"spec", toJson(r.spec)},
            {"status", toString(r.status)},
            {"error", r.error},
            {"oom_bytes", r.oom_bytes},
            {"gpu", r.gpu},
            {"parameter_count", r.parameter_count},
            {"parameter_bytes", r.parameter_bytes},
            {"gradient_bytes", r.gradient_bytes},
            {"optimizer_bytes", r.optimizer_bytes},
            {"steps", std::move(steps)},
            {"trace", traceJson(r.trace)},
            {"frontier", r.frontier ? toJson(*r.frontier) : json(nullptr)},
            {"environment", toJson(r.environment)}};
}

MemoryResult memoryResultFromJson(const json& j) {
    jsonio::requireObject(j, "");
    MemoryResult r;
    try {
        r.spec = memorySpecFromJson(j.at("spec"));
        r.status = jsonio::enumFrom<Status>(j.at("status"), parseStatus, "status");
        r.error = j.at("error").get<std::string>();
        r.oom_bytes = j.at("oom_bytes").get<int64_t>();
        r.gpu = j.at("gpu").get<bool>();
        r.parameter_count = j.at("parameter_count").get<int64_t>();
        r.parameter_bytes = j.at("parameter_bytes").get<int64_t>();
        r.gradient_bytes = j.at("gradient_bytes").get<int64_t>();
        r.optimizer_bytes = j.at("optimizer_bytes").get<int64_t>();
        for (const auto& s : j.at("steps")) r.steps.push_back(stepFromJson(s));
        r.trace = traceFrom(j.at("trace"));
        if (const json& f = j.at("frontier"); !f.is_null()) r.frontier = frontierFrom(f);
        r.environment = environmentFromJson(j.at("environment"));
    } catch (const json::exception& e) {
        // A missing key or a value of the wrong type in a stored row: name it, do not crash.
        throw std::invalid_argument(fmt::format("memory result: {}", e.what()));
    }
    return r;
}

std::string memorySpecJson(const std::vector<MemorySpec>& specs) {
    json j;
    if (specs.size() == 1) {
        j = toJson(specs.front());
    } else {
        json points = json::array();
        for (const auto& s : specs) points.push_back(toJson(s));
        j = {{"points", std::move(points)}};
    }
    j["command"] = "memory";
    if (specs.size() == 1 && !specs.front().imported.empty()) {
        j["command"] = "memory import";  // no point: the run's settings are the file
        j.erase("bench");
    }
    return dumpJson(j);
}

void storeMemory(ResultStore& store, int64_t run_id, int index, const MemoryResult& r) {
    store.addRow(run_id, {index, r.status, dumpJson(toJson(r.spec)), dumpJson(toJson(r))});
}

}  // namespace ts
