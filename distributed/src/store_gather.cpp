// See Note [rows through the store] (store_gather.h).
#include "trainscope/distributed/store_gather.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace ts::dist {

namespace {

std::string key(int point, const char* what, int rank) {
    return "trainscope/gather/" + std::to_string(point) + "/" + what + "/" + std::to_string(rank);
}

std::string text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

}  // namespace

void postRankRows(c10d::Store& store, int point, int rank, const std::string& payload) {
    store.set(key(point, "rows", rank), payload);
}

// Each error is numbered in the order it was posted: a rank that fails first takes the others'
// collectives with it, and their errors ("connection closed") must not hide its own.
void postRankError(c10d::Store& store, int point, int rank, const std::string& message) {
    const int64_t order = store.add("trainscope/gather/" + std::to_string(point) + "/errors", 1);
    store.set(key(point, "error", rank),
              std::to_string(order) + "\n" + (message.empty() ? std::string("failed") : message));
}

std::optional<std::pair<int, std::string>> postedRankError(c10d::Store& store, int point,
                                                           int world_size, int except_rank) {
    std::optional<std::pair<int, std::string>> first;
    int64_t first_order = 0;
    for (int r = 0; r < world_size; ++r) {
        if (r == except_rank) continue;
        const std::string k = key(point, "error", r);
        if (!store.check({k})) continue;
        const std::string value = text(store.get(k));
        const size_t cut = value.find('\n');
        const int64_t order =
            cut == std::string::npos ? 0 : std::atoll(value.substr(0, cut).c_str());
        if (!first || order < first_order) {
            first = std::pair{r, cut == std::string::npos ? value : value.substr(cut + 1)};
            first_order = order;
        }
    }
    return first;
}

GatheredRows gatherRankRows(c10d::Store& store, int point, int world_size,
                            std::chrono::milliseconds timeout, const std::function<bool()>& stop) {
    GatheredRows out;
    out.payloads.assign(static_cast<size_t>(std::max(world_size, 0)), "");
    std::vector<bool> got(out.payloads.size(), false);
    if (!got.empty()) got[0] = true;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (auto e = postedRankError(store, point, world_size)) {
            out.failed_rank = e->first;
            out.error = e->second;
            return out;
        }
        bool all = true;
        for (int r = 1; r < world_size; ++r) {
            if (got[r]) continue;
            const std::string k = key(point, "rows", r);
            if (store.check({k})) {
                out.payloads[r] = text(store.get(k));
                got[r] = true;
            } else {
                all = false;
            }
        }
        if (all) return out;
        if (stop && stop()) {
            out.stopped = true;
            return out;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            for (int r = 1; r < world_size; ++r)
                if (!got[r]) {
                    out.failed_rank = r;
                    out.error = "sent no rows to rank 0 in " +
                                std::to_string(timeout.count() / 1000) + " s";
                    break;
                }
            return out;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace ts::dist
