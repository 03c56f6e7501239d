#include "distributed/rank_traces.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "core/atomic_file.h"

namespace ts {

using nlohmann::json;

namespace {

// A pid or tid as a map key: Kineto writes numbers, and strings for its own tracks ("Spans").
std::string traceIdKey(const json& v) {
    return v.is_string() ? "s:" + v.get<std::string>() : v.dump();
}

bool isTraceFlowOrAsync(const std::string& ph) {
    return ph == "s" || ph == "t" || ph == "f" || ph == "b" || ph == "e" || ph == "n";
}

const std::string kTraceNoName;

const std::string& traceStringArg(const json& e, const char* key) {
    const auto args = e.find("args");
    if (args == e.end() || !args->is_object()) return kTraceNoName;
    const auto it = args->find(key);
    return it != args->end() && it->is_string() ? it->get_ref<const std::string&>() : kTraceNoName;
}

// One rank's threads as the merged trace numbers and names them.
struct RankThreads {
    std::string host;                            // the pid of the host's threads
    std::map<std::string, std::string> process;  // pid → Kineto's process_name
    std::map<std::string, std::string> label;    // pid → Kineto's process_labels ("GPU 0")
    std::map<std::string, std::string> name;     // pid|tid → Kineto's thread_name
    std::map<std::string, int> number;           // pid|tid → the merged tid
    struct Thread {
        std::string key;  // pid|tid
        json pid, tid;    // Kineto's
    };
    std::vector<Thread> order;  // in first-seen order
};

// The host's pid: the one with the most CPU ops (Kineto's own process, its ops' threads).
std::string traceHostPid(const json& events) {
    std::map<std::string, int> ops;
    for (const auto& e : events)
        if (e.is_object() && e.value("cat", "") == "cpu_op" && e.contains("pid"))
            ++ops[traceIdKey(e["pid"])];
    std::string best;
    int most = -1;
    for (const auto& [pid, n] : ops)
        if (n > most) best = pid, most = n;
    return best;
}

RankThreads rankTraceThreads(const json& events) {
    RankThreads t;
    t.host = traceHostPid(events);
    auto see = [&](const json& pid, const json& tid) {
        const std::string key = traceIdKey(pid) + "|" + traceIdKey(tid);
        if (t.number.emplace(key, 0).second) t.order.push_back({key, pid, tid});
    };
    // Host threads first, then the rest, each process in the order it is first named or used.
    for (int pass = 0; pass < 2; ++pass)
        for (const auto& e : events) {
            if (!e.is_object() || !e.contains("pid")) continue;
            const bool host = traceIdKey(e["pid"]) == t.host;
            if (pass == 0) {
                if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
                    t.process[traceIdKey(e["pid"])] = traceStringArg(e, "name");
                if (e.value("ph", "") == "M" && e.value("name", "") == "process_labels")
                    t.label[traceIdKey(e["pid"])] = traceStringArg(e, "labels");
                if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" &&
                    e.contains("tid"))
                    t.name[traceIdKey(e["pid"]) + "|" + traceIdKey(e["tid"])] =
                        traceStringArg(e, "name");
            }
            if (host != (pass == 0) || !e.contains("tid")) continue;
            if (e.value("s", "") == "g") continue;  // a global instant: drawn over every track
            if (e.value("ph", "") == "M" && e.value("name", "") != "thread_name") continue;
            see(e["pid"], e["tid"]);
        }
    // Within a process the busiest thread first: the host's main thread (forward, backward)
    // above Gloo's and autograd's, the compute stream above NCCL's.
    std::map<std::string, int> events_of, process_rank;
    for (const auto& e : events)
        if (e.is_object() && e.value("ph", "") == "X" && e.contains("pid") && e.contains("tid"))
            ++events_of[traceIdKey(e["pid"]) + "|" + traceIdKey(e["tid"])];
    for (const auto& thread : t.order)
        process_rank.emplace(traceIdKey(thread.pid), static_cast<int>(process_rank.size()));
    std::stable_sort(t.order.begin(), t.order.end(), [&](const auto& a, const auto& b) {
        const int pa = process_rank[traceIdKey(a.pid)], pb = process_rank[traceIdKey(b.pid)];
        return pa != pb ? pa < pb : events_of[a.key] > events_of[b.key];
    });
    int n = 0;
    for (const auto& thread : t.order) t.number[thread.key] = ++n;
    return t;
}

// The merged thread's name: the host's as Kineto named it, another process's prefixed with that
// process's name ("GPU 0" + "stream 7").
std::string mergedThreadName(const RankThreads& t, const RankThreads::Thread& thread) {
    const json& pid = thread.pid;
    const std::string pid_key = traceIdKey(pid);
    const auto named = t.name.find(thread.key);
    std::string name = named != t.name.end() && !named->second.empty() ? named->second
                       : thread.tid.is_string() ? thread.tid.get<std::string>()
                                                : "thread " + thread.tid.dump();
    if (pid_key == t.host) return name;
    // A GPU's streams: Kineto names their process as the host's ("trainscope-cli") and labels
    // it with the device ("GPU 0"); the label is what tells two GPUs' streams apart.
    const auto labelled = t.label.find(pid_key);
    const auto proc = t.process.find(pid_key);
    const std::string prefix = labelled != t.label.end() && !labelled->second.empty()
                                   ? labelled->second
                               : proc != t.process.end() && !proc->second.empty()
                                   ? proc->second
                                   : (pid.is_string() ? pid.get<std::string>() : pid.dump());
    return name.rfind(prefix, 0) == 0 ? name : prefix + " " + name;
}

json traceMetadata(const char* name, int pid, std::optional<int> tid, json args) {
    json m = {{"name", name}, {"ph", "M"}, {"pid", pid}, {"args", std::move(args)}};
    if (tid) m["tid"] = *tid;
    return m;
}

}  // namespace

json mergeRankTraces(std::vector<json> traces) {
    for (size_t r = 0; r < traces.size(); ++r)
        if (!traces[r].is_object() || !traces[r].contains("traceEvents") ||
            !traces[r]["traceEvents"].is_array())
            throw std::invalid_argument(
                fmt::format("rank {}'s trace has no \"traceEvents\" array", r));
    // One clock: the smallest base (see the Note).
    auto baseOf = [](const json& t) -> int64_t {
        const auto b = t.find("baseTimeNanoseconds");
        return b != t.end() && b->is_number() ? b->get<int64_t>() : 0;
    };
    int64_t base = std::numeric_limits<int64_t>::max();
    for (const auto& t : traces) base = std::min(base, baseOf(t));
    // Flow and async ids: one stride of numbers per rank.
    int64_t stride = 1;
    for (const auto& t : traces)
        for (const auto& e : t["traceEvents"])
            if (e.is_object() && isTraceFlowOrAsync(e.value("ph", "")))
                if (const auto id = e.find("id"); id != e.end() && id->is_number_integer())
                    stride = std::max(stride, id->get<int64_t>() + 1);

    json out = json::object();
    if (!traces.empty())
        for (auto& [key, value] : traces.front().items())
            if (key != "traceEvents" && key != "distributedInfo") out[key] = value;
    out["schemaVersion"] = out.value("schemaVersion", 1);
    out["displayTimeUnit"] = "ms";
    out["traceName"] = fmt::format("{} ranks, merged", traces.size());
    if (base != 0 && !traces.empty()) out["baseTimeNanoseconds"] = base;
    json ranks = json::array();
    json events = json::array();
    for (size_t r = 0; r < traces.size(); ++r) {
        json& trace = traces[r];
        const int pid = static_cast<int>(r);
        const double shift_us = static_cast<double>(baseOf(trace) - base) / 1000.0;
        json& in = trace["traceEvents"];
        const RankThreads threads = rankTraceThreads(in);
        ranks.push_back({{"rank", r},
                         {"distributedInfo", trace.value("distributedInfo", json::object())},
                         {"baseTimeNanoseconds", baseOf(trace)}});
        std::string label;
        if (const auto ts_meta = trace.find("trainscope"); ts_meta != trace.end()) {
            const json m = ts_meta->is_string() ? json::parse(ts_meta->get<std::string>(), nullptr,
                                                              /*allow_exceptions=*/false)
                                                : *ts_meta;
            if (m.is_object()) label = m.value("device", "");
        }
        events.push_back(
            traceMetadata("process_name", pid, {}, {{"name", fmt::format("rank {}", r)}}));
        events.push_back(traceMetadata("process_sort_index", pid, {}, {{"sort_index", pid}}));
        if (!label.empty())
            events.push_back(traceMetadata("process_labels", pid, {}, {{"labels", label}}));
        for (const auto& thread : threads.order) {
            const int tid = threads.number.at(thread.key);
            events.push_back(traceMetadata("thread_name", pid, tid,
                                           {{"name", mergedThreadName(threads, thread)}}));
            events.push_back(traceMetadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
        }
        for (auto& e : in) {
            if (!e.is_object()) continue;
            const std::string ph = e.value("ph", "");
            if (ph == "M") continue;  // named above
            if (const auto p = e.find("pid"); p != e.end()) {
                if (const auto t = e.find("tid"); t != e.end()) {
                    const auto n = threads.number.find(traceIdKey(*p) + "|" + traceIdKey(*t));
                    if (n != threads.number.end()) *t = n->second;
                }
                *p = pid;
            }
            if (const auto ts = e.find("ts"); ts != e.end() && ts->is_number() && shift_us != 0)
                *ts = ts->get<double>() + shift_us;
            if (isTraceFlowOrAsync(ph))
                if (const auto id = e.find("id"); id != e.end()) {
                    if (id->is_number_integer())
                        *id = id->get<int64_t>() + static_cast<int64_t>(r) * stride;
                    else if (id->is_string())
                        *id = fmt::format("r{}:{}", r, id->get<std::string>());
                }
            events.push_back(std::move(e));
        }
    }
    out["ranks"] = std::move(ranks);
    out["traceEvents"] = std::move(events);
    return out;
}

std::string rankTraceFile(const std::string& dir, int rank) {
    return (std::filesystem::path(dir) / fmt::format("rank-{}.json", rank)).string();
}

void mergeRankTraceFiles(const std::string& dir, int world_size, const std::string& out) {
    std::vector<json> traces;
    for (int r = 0; r < world_size; ++r) {
        const std::string file = rankTraceFile(dir, r);
        std::ifstream in(file, std::ios::binary);
        if (!in) throw std::runtime_error(fmt::format("rank {} wrote no trace ({})", r, file));
        json t = json::parse(in, nullptr, /*allow_exceptions=*/false);
        if (t.is_discarded())
            throw std::runtime_error(fmt::format("rank {}'s trace {} is not JSON", r, file));
        traces.push_back(std::move(t));
    }
    json merged;
    try {
        merged = mergeRankTraces(std::move(traces));
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
    }
    const std::filesystem::path parent = std::filesystem::path(out).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    writeFileAtomically(out, merged.dump(-1, ' ', false, json::error_handler_t::replace));
}

void removeRankTraceFiles(const std::string& dir, int world_size) {
    for (int r = 0; r < world_size; ++r) std::remove(rankTraceFile(dir, r).c_str());
    std::remove(dir.c_str());  // only when empty
}

std::string mergedTracePath(const std::string& dir, const std::string& store_path, int64_t run_id,
                            int point) {
    namespace fs = std::filesystem;
    fs::path folder = dir;
    if (folder.empty() && !store_path.empty()) {
        const fs::path store(store_path);
        folder = store.parent_path() / (store.stem().string() + ".traces");
    }
    const std::string name = run_id > 0 ? fmt::format("run-{}-point-{}.json", run_id, point + 1)
                                        : fmt::format("ddp-trace-point-{}.json", point + 1);
    return (folder / name).string();
}

}  // namespace ts
