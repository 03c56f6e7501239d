#include "core/store.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace ts {
namespace {

// 1: runs and points; 2: a run's planned points and when it ended (see Note [unfinished runs]);
// 3: the environment the run was measured in (every lab's, not only those whose rows hold it).
constexpr int kSchemaVersion = 3;
constexpr int kBusyTimeoutMs = 10000;  // the window and a CLI run may write at the same time

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs(
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reuse an id a window may still hold
    kind TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    device_name TEXT NOT NULL DEFAULT '',
    spec_json TEXT NOT NULL DEFAULT '{}',
    planned INTEGER NOT NULL DEFAULT 0,
    ended TEXT,
    environment_json TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS points(
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL,
    config_json TEXT NOT NULL,
    result_json TEXT NOT NULL,
    PRIMARY KEY(run_id, idx)
);
)sql";

// SQLite's error as the exception the caller can tell apart: damage, or anything else.
[[noreturn]] void raise(int rc, const std::string& message) {
    const int primary = rc & 0xff;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) throw StoreDamaged(message);
    throw std::runtime_error(message);
}

std::string nowIso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string columnText(sqlite3_stmt* st, int col) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st, col))) : std::string();
}

// A prepared statement, finalized on scope exit; every value goes through bind().
class Statement {
public:
    Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
        check(sqlite3_prepare_v2(db, sql, -1, &st_, nullptr), "prepare");
    }
    ~Statement() { sqlite3_finalize(st_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int i, int64_t v) {
        check(sqlite3_bind_int64(st_, i, v), "bind");
        return *this;
    }
    Statement& bind(int i, std::string_view v) {
        check(sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT),
              "bind");
        return *this;
    }
    // True while there is a row; false when done.
    bool step() {
        const int rc = sqlite3_step(st_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        check(rc, "step");
        return false;
    }
    sqlite3_stmt* get() const { return st_; }

    void check(int rc, const char* what) const {
        if (rc != SQLITE_OK)
            raise(rc,
                  fmt::format("results store {}: {} failed: {}", path_, what, sqlite3_errmsg(db_)));
    }

private:
    sqlite3* db_;
    const std::string& path_;
    sqlite3_stmt* st_ = nullptr;
};

// The statement for an error message: the schema script is long, its first line says enough.
std::string_view firstLine(std::string_view sql) {
    while (!sql.empty() && (sql.front() == '\n' || sql.front() == ' ')) sql.remove_prefix(1);
    return sql.substr(0, sql.find('\n'));
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
    char* err = nullptr;
    if (const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err); rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        raise(rc, fmt::format("results store {}: {}: {}", path, firstLine(sql), msg));
    }
}

RunInfo runFromRow(sqlite3_stmt* st) {
    RunInfo r;
    r.id = sqlite3_column_int64(st, 0);
    r.lab = columnText(st, 1);
    r.label = columnText(st, 2);
    r.created = columnText(st, 3);
    r.device_name = columnText(st, 4);
    r.spec_json = columnText(st, 5);
    r.point_count = sqlite3_column_int(st, 6);
    r.ok_count = sqlite3_column_int(st, 7);
    r.planned = sqlite3_column_int(st, 8);
    r.ended = columnText(st, 9);
    r.environment_json = columnText(st, 10);
    return r;
}

// Holds the connection's own (recursive) mutex for a whole call, so that calls from several
// threads on one store do not interleave statements: an autocommit INSERT commits only when
// no other statement on the connection is active, and sqlite3_errmsg must be our error.
class Locked {
public:
    explicit Locked(sqlite3* db) : m_(sqlite3_db_mutex(db)) { sqlite3_mutex_enter(m_); }
    ~Locked() { sqlite3_mutex_leave(m_); }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

private:
    sqlite3_mutex* m_;
};

// A run's points and ok points (RunInfo): rows grouped by their result's integer "point" where
// there is one (a distributed point's rows, one per rank and step, see Note [distributed rows]),
// each row its own point otherwise; a point is ok when all its rows are. JSON that is not valid
// counts as a point of its own (json_extract would fail the whole listing).
// The runs with their point counts; `columns` is the schema whose columns the store has (a store
// of schema 1 opened read-only has no planned and ended: its runs read as ended when created;
// one of schema 2 no environment).
std::string runSelect(int columns) {
    return std::string(
               "SELECT r.id, r.kind, r.label, r.created, r.device_name, r.spec_json, "
               "COUNT(q.point), COALESCE(SUM(q.ok), 0), ") +
           (columns >= 2 ? "r.planned, COALESCE(r.ended, ''), " : "0, r.created, ") +
           (columns >= 3 ? "r.environment_json " : "'{}' ") +
           "FROM runs r LEFT JOIN ("
           "SELECT run_id, MIN(status = ?1) AS ok, COALESCE(CASE WHEN json_valid(result_json) AND "
           "json_type(result_json, '$.point') = 'integer' THEN json_extract(result_json, "
           "'$.point') END, -1 - idx) "
           "AS point FROM points GROUP BY run_id, point) q ON q.run_id = r.id ";
}

}  // namespace

ResultStore::ResultStore(const std::string& path, Access access) : path_(path) {
    try {
        openReadWrite();
    } catch (const StoreDamaged&) {
        throw;  // damage is not cured by reading only
    } catch (const std::exception& e) {
        if (access == Access::Write) throw;
        openReadOnly(e.what());
    }
    rememberIdentity();
}

// Note [a store that vanished]: SQLite keeps writing to the file it opened. When the store's
// file is deleted (or replaced: a copy moved over it, a restore) while a run writes, every
// later commit succeeds into an unlinked inode and is lost when the process ends, and the run
// would say "stored". So each write first checks that the path still names the file that was
// opened, by device and inode, and fails loudly otherwise; the runners stop on that failure
// as on a full disk.
void ResultStore::rememberIdentity() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) {
        device_ = static_cast<uint64_t>(st.st_dev);
        inode_ = static_cast<uint64_t>(st.st_ino);
    }
}

void ResultStore::requireSameFile(const char* what) const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0)
        throw std::runtime_error(fmt::format(
            "results store {} was deleted while this run was writing to it, so it cannot {}: {}",
            path_, what, std::strerror(errno)));
    if (static_cast<uint64_t>(st.st_dev) != device_ || static_cast<uint64_t>(st.st_ino) != inode_)
        throw std::runtime_error(
            fmt::format("results store {} was replaced by another file while this run was writing "
                        "to it, so it cannot {}",
                        path_, what));
}

void ResultStore::openReadWrite() {
    // FULLMUTEX: one store may be used from the UI thread and a worker thread.
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        close();
        throw std::runtime_error(fmt::format("results store {}: cannot open: {}", path_, msg));
    }
    try {
        sqlite3_extended_result_codes(db_, 1);
        sqlite3_busy_timeout(db_, kBusyTimeoutMs);
        // WAL: readers (the window) never block the writer (a CLI run). synchronous=NORMAL in
        // WAL mode keeps every commit through a process kill (it is in the WAL file once
        // the commit returns); only an OS crash or power loss may drop the last few commits.
        // Switching a file to WAL needs it to itself, and SQLite does not call the busy
        // handler for that (two processes opening a new file at once): retry here.
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
        for (;;) {
            const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
            const bool busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
            if (!busy || std::chrono::steady_clock::now() > deadline) {
                if (rc != SQLITE_OK)
                    raise(rc, fmt::format("results store {}: journal_mode=WAL: {}", path_,
                                          sqlite3_errmsg(db_)));
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        exec(db_, path_, "PRAGMA synchronous=NORMAL");
        exec(db_, path_, "PRAGMA foreign_keys=ON");

        auto userVersion = [this] {
            Statement st(db_, path_, "PRAGMA user_version");
            return st.step() ? sqlite3_column_int(st.get(), 0) : 0;
        };
        auto checkNotNewer = [this](int version) {
            if (version > kSchemaVersion)
                throw std::runtime_error(fmt::format(
                    "results store {}: schema version {} is newer than this build's {}; "
                    "update TrainScope",
                    path_, version, kSchemaVersion));
        };
        int version = userVersion();
        checkNotNewer(version);
        if (version < kSchemaVersion) {
            // IMMEDIATE, then look again: two processes opening a fresh file must not both
            // create the schema.
            exec(db_, path_, "BEGIN IMMEDIATE");
            try {
                version = userVersion();
                checkNotNewer(version);
                if (version < kSchemaVersion) {
                    exec(db_, path_, kSchema);
                    // See Note [unfinished runs]: a store of schema 1 gets the new columns; its
                    // runs' ends are unknown and taken as ended (they were never marked).
                    if (version == 1)
                        exec(db_, path_,
                             "ALTER TABLE runs ADD COLUMN planned INTEGER NOT NULL DEFAULT 0; "
                             "ALTER TABLE runs ADD COLUMN ended TEXT; "
                             "UPDATE runs SET ended = created;");
                    // Schema 3: older runs' environment is unknown ('{}'); rows may hold it.
                    if (version == 1 || version == 2)
                        exec(db_, path_,
                             "ALTER TABLE runs ADD COLUMN environment_json TEXT NOT NULL DEFAULT "
                             "'{}';");
                    // PRAGMA takes no bound parameters; the value is our own constant.
                    exec(db_, path_, fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
                }
                exec(db_, path_, "COMMIT");
            } catch (...) {
                sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
                throw;
            }
        }
        columns_ = schemaColumns();
    } catch (...) {
        close();
        throw;
    }
}

void ResultStore::close() {
    if (db_) sqlite3_close_v2(db_);
    db_ = nullptr;
}

void ResultStore::openReadOnly(const std::string& reason) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path_, ec)) throw std::runtime_error(reason);  // nothing to read
    // A URI, so that read-only and immutable can be asked for. mode=ro still needs the WAL
    // index (-shm) beside the file; on a read-only medium that cannot be made, and
    // immutable=1 reads the main file alone (no one can be writing to it there).
    std::string uri = "file:";
    for (unsigned char c : fs::absolute(path_, ec).string())
        uri += std::isalnum(c) || std::strchr("/-_.~", c) ? std::string(1, static_cast<char>(c))
                                                          : fmt::format("%{:02X}", c);
    for (const char* query : {"?mode=ro", "?mode=ro&immutable=1"}) {
        close();
        const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX;
        if (sqlite3_open_v2((uri + query).c_str(), &db_, flags, nullptr) != SQLITE_OK) continue;
        sqlite3_extended_result_codes(db_, 1);
        sqlite3_busy_timeout(db_, kBusyTimeoutMs);
        // The queries this build reads with: a newer schema may have changed them.
        columns_ = schemaColumns();
        const std::string list = runSelect(columns_) + "GROUP BY r.id LIMIT 1";
        bool readable = true;
        for (const char* sql :
             {list.c_str(), "SELECT idx, status, config_json, result_json FROM points LIMIT 1"}) {
            if (!readable) break;
            sqlite3_stmt* st = nullptr;
            if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) == SQLITE_OK)
                sqlite3_bind_text(st, 1, "ok", -1, SQLITE_STATIC);  // kRunSelect's status parameter
            const int rc = st ? sqlite3_step(st) : SQLITE_ERROR;
            readable = rc == SQLITE_ROW || rc == SQLITE_DONE;
            sqlite3_finalize(st);
        }
        if (readable) {
            read_only_reason_ = reason;
            return;
        }
    }
    const std::string why = db_ ? sqlite3_errmsg(db_) : "cannot open";
    close();
    throw std::runtime_error(
        fmt::format("{}; and this build cannot read it read-only either: {}", reason, why));
}

void ResultStore::requireWritable(const char* what) const {
    if (!read_only_reason_.empty())
        throw std::runtime_error(
            fmt::format("results store {} can only be read here, so it cannot {} ({})", path_, what,
                        read_only_reason_));
}

ResultStore::~ResultStore() { close(); }

std::string ResultStore::defaultPath() {
    namespace fs = std::filesystem;
    auto env = [](const char* name) -> std::string {
        const char* v = std::getenv(name);
        return v ? v : "";
    };
    fs::path p;
    if (auto db = env("TRAINSCOPE_DB"); !db.empty()) {
        p = db;
    } else if (auto xdg = env("XDG_DATA_HOME"); !xdg.empty() && fs::path(xdg).is_absolute()) {
        p = fs::path(xdg) / "trainscope" / "results.db";  // the XDG spec ignores relative paths
    } else {
        const std::string home = env("HOME");
        if (home.empty())
            throw std::runtime_error("results store: neither TRAINSCOPE_DB nor HOME is set");
        p = fs::path(home) / ".local" / "share" / "trainscope" / "results.db";
    }
    if (p.has_parent_path()) {
        std::error_code ec;
        fs::create_directories(p.parent_path(), ec);
        if (ec)
            throw std::runtime_error(fmt::format("results store {}: cannot create {}: {}",
                                                 p.string(), p.parent_path().string(),
                                                 ec.message()));
    }
    return p.string();
}

int64_t ResultStore::createRun(const std::string& kind, const std::string& label,
                               const std::string& spec_json, const std::string& device_name,
                               int planned, const std::string& environment_json) {
    requireWritable("store a run");
    requireSameFile("store a run");
    Locked lock(db_);
    // RETURNING rather than last_insert_rowid(): the connection may be shared between threads.
    Statement st(db_, path_,
                 "INSERT INTO runs(kind, label, created, device_name, spec_json, planned, "
                 "environment_json) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id");
    st.bind(1, kind).bind(2, label).bind(3, nowIso8601()).bind(4, device_name).bind(5, spec_json);
    st.bind(6, int64_t{std::max(planned, 0)}).bind(7, environment_json);
    if (!st.step()) throw std::runtime_error(fmt::format("results store {}: no run id", path_));
    const int64_t id = sqlite3_column_int64(st.get(), 0);
    while (st.step()) {
    }
    return id;
}

void ResultStore::finishRun(int64_t run_id) {
    requireWritable("mark a run ended");
    requireSameFile("mark a run ended");
    Locked lock(db_);
    Statement st(db_, path_, "UPDATE runs SET ended = ?1 WHERE id = ?2");
    st.bind(1, nowIso8601()).bind(2, run_id);
    st.step();
}

int ResultStore::schemaColumns() const {
    // Without throwing: a read-only open tries ways to read the file, and one that cannot read
    // this says so at its next query.
    auto has = [this](const char* column) {
        sqlite3_stmt* st = nullptr;
        bool found = false;
        if (sqlite3_prepare_v2(db_, "SELECT 1 FROM pragma_table_info('runs') WHERE name = ?1", -1,
                               &st, nullptr) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, column, -1, SQLITE_STATIC);
            found = sqlite3_step(st) == SQLITE_ROW;
        }
        sqlite3_finalize(st);
        return found;
    };
    return !has("ended") ? 1 : !has("environment_json") ? 2 : 3;
}

void ResultStore::addRow(int64_t run_id, const StoredRow& row) {
    requireWritable("store a point");
    requireSameFile("store a point");
    Locked lock(db_);
    // One autocommit INSERT: its own transaction, durable once this returns.
    Statement st(db_, path_,
                 "INSERT INTO points(run_id, idx, status, config_json, result_json) "
                 "VALUES(?1, ?2, ?3, ?4, ?5)");
    st.bind(1, run_id).bind(2, int64_t{row.index}).bind(3, toString(row.status));
    st.bind(4, row.config_json).bind(5, row.result_json);
    try {
        st.step();
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(
            fmt::format("{} (adding point {} to run {})", e.what(), row.index + 1, run_id));
    }
}

std::vector<Status> ResultStore::rowStatuses(int64_t run_id) const {
    Locked lock(db_);
    Statement st(db_, path_, "SELECT status FROM points WHERE run_id = ?1 ORDER BY idx");
    st.bind(1, run_id);
    std::vector<Status> out;
    while (st.step()) out.push_back(parseStatus(columnText(st.get(), 0)).value_or(Status::Failed));
    return out;
}

std::vector<StoredRow> ResultStore::rows(int64_t run_id, std::string_view lab) const {
    Locked lock(db_);
    {
        Statement k(db_, path_, "SELECT kind FROM runs WHERE id = ?1");
        k.bind(1, run_id);
        if (k.step() && columnText(k.get(), 0) != lab)
            throw std::runtime_error(
                fmt::format("results store {}: run {} is of kind '{}', not '{}'", path_, run_id,
                            columnText(k.get(), 0), lab));
    }
    Statement st(
        db_, path_,
        "SELECT idx, status, config_json, result_json FROM points WHERE run_id = ?1 ORDER BY idx");
    st.bind(1, run_id);
    std::vector<StoredRow> out;
    while (st.step()) {
        StoredRow r;
        r.index = sqlite3_column_int(st.get(), 0);
        r.status = parseStatus(columnText(st.get(), 1)).value_or(Status::Failed);
        r.config_json = columnText(st.get(), 2);
        r.result_json = columnText(st.get(), 3);
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<RunInfo> ResultStore::listRuns() const {
    Locked lock(db_);
    const std::string sql = runSelect(columns_) + "GROUP BY r.id ORDER BY r.id DESC";
    Statement st(db_, path_, sql.c_str());
    st.bind(1, toString(Status::Ok));
    std::vector<RunInfo> runs;
    while (st.step()) runs.push_back(runFromRow(st.get()));
    return runs;
}

std::optional<RunInfo> ResultStore::run(int64_t id) const {
    Locked lock(db_);
    const std::string sql = runSelect(columns_) + "WHERE r.id = ?2 GROUP BY r.id";
    Statement st(db_, path_, sql.c_str());
    st.bind(1, toString(Status::Ok)).bind(2, id);
    if (!st.step()) return std::nullopt;
    return runFromRow(st.get());
}

bool ResultStore::removeRun(int64_t id) {
    requireWritable("delete a run");
    requireSameFile("delete a run");
    Locked lock(db_);
    // The points go with it through ON DELETE CASCADE (foreign_keys is on for this connection).
    // RETURNING rather than sqlite3_changes(): the connection may be shared between threads.
    Statement st(db_, path_, "DELETE FROM runs WHERE id = ?1 RETURNING id");
    st.bind(1, id);
    bool removed = false;
    while (st.step()) removed = true;
    return removed;
}

}  // namespace ts
