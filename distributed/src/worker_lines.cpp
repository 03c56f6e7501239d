#include "trainscope/distributed/worker_lines.h"

#include <nlohmann/json.hpp>

namespace ts::dist {

namespace {
std::string dump(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

std::string readyLine(int rank, int world_size, CommBackend backend, const std::string& device) {
    return dump({{"event", "ready"},
                 {"rank", rank},
                 {"world_size", world_size},
                 {"backend", backendName(backend)},
                 {"device", device}});
}

std::string progressLine(int rank, int done, int total, const std::string& what) {
    return dump(
        {{"event", "progress"}, {"rank", rank}, {"done", done}, {"total", total}, {"what", what}});
}

std::string errorLine(int rank, const std::string& message) {
    return dump({{"event", "error"}, {"rank", rank}, {"message", message}});
}

std::string allreduceResultLine(const AllreduceTiming& t) {
    nlohmann::json j{{"event", "result"},
                     {"experiment", "allreduce"},
                     {"rank", t.rank},
                     {"world_size", t.world_size},
                     {"backend", backendName(t.backend)},
                     {"device", t.device},
                     {"bytes", t.bytes},
                     {"elements", t.elements},
                     {"dtype", dtypeName(t.dtype)},
                     {"iters", t.iters},
                     {"mean_ms", t.mean_ms},
                     {"min_ms", t.min_ms},
                     {"max_ms", t.max_ms}};
    // The rank's own bandwidths, from its own mean (the row uses the slowest rank's).
    const double algbw =
        t.mean_ms > 0 ? static_cast<double>(t.bytes) / (t.mean_ms * 1e-3) / 1e9 : 0.0;
    j["algbw_gbps"] = algbw;
    j["busbw_gbps"] = algbw * busFactor(t.world_size);
    if (!t.ranks.empty()) {
        auto& ranks = j["ranks"] = nlohmann::json::array();
        for (const RankTime& r : t.ranks)
            ranks.push_back({{"rank", r.rank},
                             {"mean_ms", r.mean_ms},
                             {"min_ms", r.min_ms},
                             {"max_ms", r.max_ms}});
    }
    return dump(j);
}

namespace {

AllreduceTiming timingFromJson(const nlohmann::json& j) {
    AllreduceTiming t;
    t.rank = j.at("rank").get<int>();
    t.world_size = j.at("world_size").get<int>();
    const auto backend = parseBackend(j.at("backend").get<std::string>());
    if (!backend) throw std::invalid_argument("unknown backend");
    t.backend = *backend;
    t.device = j.value("device", "");
    t.bytes = j.at("bytes").get<int64_t>();
    t.elements = j.at("elements").get<int64_t>();
    const auto dtype = parseDtype(j.at("dtype").get<std::string>());
    if (!dtype) throw std::invalid_argument("unknown dtype");
    t.dtype = *dtype;
    t.iters = j.at("iters").get<int>();
    t.mean_ms = j.at("mean_ms").get<double>();
    t.min_ms = j.at("min_ms").get<double>();
    t.max_ms = j.at("max_ms").get<double>();
    if (const auto r = j.find("ranks"); r != j.end())
        for (const auto& x : *r)
            t.ranks.push_back({x.at("rank").get<int>(), x.at("mean_ms").get<double>(),
                               x.at("min_ms").get<double>(), x.at("max_ms").get<double>()});
    return t;
}

}  // namespace

std::optional<WorkerLine> parseWorkerLine(const std::string& line) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    const auto event = j.find("event");
    if (event == j.end() || !event->is_string()) return std::nullopt;
    WorkerLine w;
    w.event = event->get<std::string>();
    try {
        if (const auto r = j.find("rank"); r != j.end() && r->is_number_integer())
            w.rank = r->get<int>();
        if (w.event == "error") {
            w.message = j.value("message", "an error without a message");
        } else if (w.event == "progress") {
            w.done = j.value("done", 0);
            w.total = j.value("total", 0);
            w.what = j.value("what", "");
        } else if (w.event == "result") {
            w.experiment = j.value("experiment", "");
            if (w.experiment == "allreduce") w.allreduce = timingFromJson(j);
        }
    } catch (const std::exception& e) {
        w.event = "error";
        w.message = std::string("a worker's ") + event->get<std::string>() +
                    " line does not read: " + e.what();
    }
    return w;
}

}  // namespace ts::dist
