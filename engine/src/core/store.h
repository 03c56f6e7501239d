// The results store: one SQLite file. A run (one CLI call or one press of Run) of some lab
// holds its rows (points, cells, ...); each row is written in its own transaction the moment
// it finishes, so a crash or a kill loses no finished row. The store knows labs only by their
// id and rows only as JSON text: each lab reads its own rows (benchmark_report.h, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct sqlite3;

namespace ts {

struct StoredRow {
    int index = 0;
    Status status = Status::Ok;
    std::string config_json;  // what the row measured
    std::string result_json;  // the whole result
};

struct RunInfo {
    int64_t id = 0;
    std::string lab;      // the lab's id: "bench", "attention", ... (the column "kind")
    std::string label;    // free text given by the user
    std::string created;  // ISO 8601 UTC
    std::string device_name;
    // Points stored so far: one per row, except that rows whose result JSON has the same
    // integer "point" are one point (the distributed lab's, one row per rank and step).
    int point_count = 0;
    int ok_count = 0;       // of those, points all of whose rows have status Ok
    std::string spec_json;  // the sweep as asked for
    // Note [unfinished runs]: a run is created before its first point and marked ended when its
    // process is done with it (finished, stopped, or failed: whatever its points say). One that
    // never was (the process killed, the machine down) keeps `ended` empty: the points stored
    // are all it has, and `planned` (0: not known) says how many it meant to measure. A run still
    // in progress reads the same until it ends.
    int planned = 0;
    std::string ended;  // ISO 8601 UTC; empty: not ended
    bool finished() const { return !ended.empty(); }
    // Where it was measured (core/json.h's Environment as JSON), taken when the run was created;
    // "{}" for a run stored before schema 3 or by a caller that did not know it.
    std::string environment_json = "{}";
};

// The file is damaged or not a store at all (SQLite's "corrupt" or "not a database"). Unlike a
// path that cannot be opened, this is no mistake in the command: the CLI exits 3, not 2.
struct StoreDamaged : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ResultStore {
public:
    enum class Access {
        Write,         // open read-write (creating when needed), or throw
        ReadIfNeeded,  // the same, but where that fails open the file read-only for reading
    };
    // Opens (creating when needed) the store at `path`. Throws std::runtime_error with the
    // path and SQLite's message when it cannot. With ReadIfNeeded, a store that cannot be
    // written here (a read-only medium, a newer schema) opens read-only instead: listing and
    // showing work, writing throws naming readOnlyReason().
    explicit ResultStore(const std::string& path, Access access = Access::Write);
    ~ResultStore();
    ResultStore(const ResultStore&) = delete;
    ResultStore& operator=(const ResultStore&) = delete;

    // The default location: $TRAINSCOPE_DB, else $XDG_DATA_HOME/trainscope/results.db,
    // else ~/.local/share/trainscope/results.db.
    static std::string defaultPath();

    // `planned`: the points the run means to measure (0: not known); `environment_json`: where
    // it is measured (see RunInfo).
    int64_t createRun(const std::string& lab, const std::string& label,
                      const std::string& spec_json, const std::string& device_name, int planned = 0,
                      const std::string& environment_json = "{}");
    // The run is over (see Note [unfinished runs]).
    void finishRun(int64_t run_id);
    // One row, in its own transaction: durable once this returns.
    void addRow(int64_t run_id, const StoredRow& row);

    std::vector<RunInfo> listRuns() const;
    std::optional<RunInfo> run(int64_t id) const;
    // The rows of a run of `lab`, in order. Throws for a run of another lab: each lab has
    // its own row shape, and reading one as another would invent values.
    std::vector<StoredRow> rows(int64_t run_id, std::string_view lab) const;
    // The status of each of a run's rows, in order (no JSON read): how a run ended, cheaply.
    std::vector<Status> rowStatuses(int64_t run_id) const;
    // Deletes a run and its points; false if there was none.
    bool removeRun(int64_t id);

    const std::string& path() const { return path_; }
    // Why this store is open read-only; empty when it can be written.
    const std::string& readOnlyReason() const { return read_only_reason_; }

private:
    void openReadWrite();
    void openReadOnly(const std::string& reason);
    void close();
    void requireWritable(const char* what) const;
    void rememberIdentity();
    void requireSameFile(const char* what) const;
    int schemaColumns() const;  // 1, 2 or 3: the schema whose columns `runs` has

    std::string path_;
    int columns_ = 3;  // see schemaColumns(): a read-only store of an older schema has fewer
    // The file's device and inode when it was opened: a store deleted or replaced while a run
    // writes would take every later row into an unlinked file (see Note [a store that vanished]).
    uint64_t device_ = 0, inode_ = 0;
    std::string read_only_reason_;
    sqlite3* db_ = nullptr;
};

}  // namespace ts
