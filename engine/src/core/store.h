// The results store: one SQLite file. A run (one CLI call or one press of Run) holds its
// points; each point is written in its own transaction the moment it finishes, so a crash
// or a kill loses no finished point.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainscope/engine/attention_bench.h"
#include "trainscope/engine/result.h"

struct sqlite3;

namespace ts {

struct RunInfo {
    int64_t id = 0;
    std::string kind;        // "bench" or "attention" (later "ddp", ...)
    std::string label;       // free text given by the user
    std::string created;     // ISO 8601 UTC
    std::string device_name;
    int point_count = 0;     // points stored so far
    int ok_count = 0;        // of those, status Ok
    std::string spec_json;   // the sweep as asked for
};

class ResultStore {
public:
    // Opens (creating when needed) the store at `path`. Throws std::runtime_error with the
    // path and SQLite's message when it cannot.
    explicit ResultStore(const std::string& path);
    ~ResultStore();
    ResultStore(const ResultStore&) = delete;
    ResultStore& operator=(const ResultStore&) = delete;

    // The default location: $TRAINSCOPE_DB, else $XDG_DATA_HOME/trainscope/results.db,
    // else ~/.local/share/trainscope/results.db.
    static std::string defaultPath();

    int64_t createRun(const std::string& kind, const std::string& label,
                      const std::string& spec_json, const std::string& device_name);
    void addPoint(int64_t run_id, int index, const BenchResult& result);

    std::vector<RunInfo> listRuns() const;
    std::optional<RunInfo> run(int64_t id) const;
    // The points of a "bench" run (throws for a run of another kind).
    std::vector<BenchResult> points(int64_t run_id) const;
    // Attention runs keep one cell per point, stored the same way (own transaction each).
    void addAttentionCell(int64_t run_id, int index, const AttentionCell& cell);
    std::vector<AttentionCell> attentionCells(int64_t run_id) const;
    // Deletes a run and its points; false if there was none.
    bool removeRun(int64_t id);

    const std::string& path() const { return path_; }

private:
    void insertPoint(int64_t run_id, int index, std::string_view status,
                     const std::string& config_json, const std::string& result_json);
    template <typename T, typename Parse>
    std::vector<T> readPoints(int64_t run_id, std::string_view kind, Parse parse) const;

    std::string path_;
    sqlite3* db_ = nullptr;
};

}  // namespace ts
