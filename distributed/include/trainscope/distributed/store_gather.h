// Rows of every rank gathered on rank 0 through the group's c10d store, for ranks that torchrun
// or srun started (no launcher reads their stdout). See Note [rows through the store].
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <utility>
#include <vector>

namespace ts::dist {

// Note [rows through the store]: after each point every rank but 0 puts its rows (one string,
// the caller's JSON) under "trainscope/gather/<point>/rows/<rank>", or its error under
// ".../error/<rank>" before it exits. Rank 0 polls for them: no collective, so a rank that died
// or hangs cannot block it past the timeout, and an error is read as soon as it is posted (the
// others may still wait in a collective with the failed rank). The store holds a value as long
// as its server lives (torchrun's agent, or rank 0), so a rank may exit once its set returns.
void postRankRows(c10d::Store& store, int point, int rank, const std::string& payload);
void postRankError(c10d::Store& store, int point, int rank, const std::string& message);

// The rank other than `except_rank` whose error for `point` was posted first, with its message.
std::optional<std::pair<int, std::string>> postedRankError(c10d::Store& store, int point,
                                                           int world_size, int except_rank = 0);

struct GatheredRows {
    std::vector<std::string> payloads;  // per rank; rank 0's (the caller's own) left empty
    int failed_rank = -1;               // a rank that posted an error or sent nothing in time
    std::string error;                  // its message
    bool stopped = false;               // `stop` said so before every rank's rows came
};

// Rank 0: every other rank's rows for `point`, waiting at most `timeout` for all of them (polled
// every 20 ms, `stop` asked each time). A posted error ends the wait at once.
GatheredRows gatherRankRows(c10d::Store& store, int point, int world_size,
                            std::chrono::milliseconds timeout,
                            const std::function<bool()>& stop = {});

}  // namespace ts::dist
