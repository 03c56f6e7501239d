// The SQLite results store: runs and points, reopening, concurrent use, and durability of
// every finished point through a SIGKILL.
#include <ftw.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "attention/attention_json.h"
#include "benchmark/benchmark_json.h"
#include "core/json.h"
#include "core/store.h"

using namespace ts;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test, removed afterwards.
class StoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "tst_store_XXXXXX").string();
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        // Not fs::remove_all: libtorch.so exports its own copy of it, which interposes on
        // libstdc++'s and segfaults (pip torch 2.11). nftw, depth first, does the same.
        nftw(
            dir_.c_str(),
            [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
            FTW_DEPTH | FTW_PHYS);
    }
    std::string dbPath(const std::string& name = "results.db") const {
        return (dir_ / name).string();
    }
    fs::path dir_;
};

BenchResult makeResult(int i, Status status = Status::Ok) {
    BenchResult r;
    r.config.model = *modelPreset(i % 2 ? "tiny" : "mini");
    r.config.model.context_length = 64 * (1 + i % 3);
    r.config.batch_size = 1 + i;
    r.config.precision = i % 2 ? Precision::BF16 : Precision::FP32;
    r.config.seed = static_cast<uint64_t>(i) * 7919;
    r.status = status;
    if (status != Status::Ok) r.error = "point " + std::to_string(i) + " failed: 'quoted'";
    r.parameter_count = parameterCount(r.config.model);
    for (int s = 0; s < 4; ++s) {
        StepSample st;
        st.index = s;
        st.warmup = s == 0;
        st.forward_ms = 1.0 / (i + 3) + s;
        st.total_ms = st.forward_ms * 2;
        st.loss = 10.0 - 0.1 * s;
        st.memory_peak = (int64_t{1} << 32) + i;
        r.steps.push_back(st);
    }
    summarize(r);
    r.environment.device_name = "test device";
    r.environment.hostname = "host-" + std::to_string(i);
    return r;
}

// Compared through their JSON form: every field, doubles bit for bit.
void expectSame(const BenchResult& got, const BenchResult& want) {
    EXPECT_EQ(toJson(got), toJson(want));
}

// Direct SQLite access, to look at what the store wrote.
struct RawDb {
    explicit RawDb(const std::string& path) {
        if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("open");
        sqlite3_busy_timeout(db, 5000);
    }
    ~RawDb() { sqlite3_close(db); }
    std::string text(const char* sql) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK)
            throw std::runtime_error(sqlite3_errmsg(db));
        std::string out;
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        return out;
    }
    void exec(const char* sql) {
        if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
            throw std::runtime_error(sqlite3_errmsg(db));
    }
    sqlite3* db = nullptr;
};

// A store as schema `version` (1 or 2) wrote it, holding one old run of `kind`.
void writeOldStore(const std::string& path, int version, const std::string& kind) {
    const std::string ends = version >= 2 ? ", planned INTEGER NOT NULL DEFAULT 0, ended TEXT" : "";
    const std::string sql =
        "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, label "
        "TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, device_name TEXT NOT NULL DEFAULT "
        "'', spec_json TEXT NOT NULL DEFAULT '{}'" +
        ends +
        "); "
        "CREATE TABLE points(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, "
        "idx INTEGER NOT NULL, status TEXT NOT NULL, config_json TEXT NOT NULL, result_json "
        "TEXT NOT NULL, PRIMARY KEY(run_id, idx)); "
        "INSERT INTO runs(kind, label, created) VALUES('" +
        kind +
        "', 'old', "
        "'2026-11-01T00:00:00Z'); "
        "PRAGMA user_version=" +
        std::to_string(version);
    RawDb(path).exec(sql.c_str());
}

template <typename F>
std::string runtimeErrorOf(F&& f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

TEST_F(StoreTest, CreateAddListPoints) {
    ResultStore store(dbPath());
    EXPECT_EQ(store.path(), dbPath());
    EXPECT_TRUE(store.listRuns().empty());

    const int64_t id = store.createRun("bench", "first try", R"({"sizes":["tiny"]})", "cpu model");
    std::optional<RunInfo> info = store.run(id);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->id, id);
    EXPECT_EQ(info->lab, "bench");
    EXPECT_EQ(info->label, "first try");
    EXPECT_EQ(info->spec_json, R"({"sizes":["tiny"]})");
    EXPECT_EQ(info->device_name, "cpu model");
    EXPECT_EQ(info->point_count, 0);
    EXPECT_EQ(info->ok_count, 0);
    // ISO 8601 UTC: 2025-01-02T03:04:05Z
    ASSERT_EQ(info->created.size(), 20u) << info->created;
    EXPECT_EQ(info->created[4], '-');
    EXPECT_EQ(info->created[10], 'T');
    EXPECT_EQ(info->created.back(), 'Z');

    const std::vector<BenchResult> want = {makeResult(0), makeResult(1, Status::OOM), makeResult(2),
                                           makeResult(3, Status::Failed),
                                           makeResult(4, Status::Cancelled)};
    // Added out of order: points() returns them by index.
    for (int i : {2, 0, 4, 1, 3}) storeBenchPoint(store, id, i, want[i]);

    const auto got = loadBenchPoints(store, id);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) expectSame(got[i], want[i]);

    info = store.run(id);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->point_count, 5);
    EXPECT_EQ(info->ok_count, 2);
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].point_count, 5);
    EXPECT_EQ(runs[0].ok_count, 2);

    EXPECT_FALSE(store.run(id + 1000));
    EXPECT_TRUE(loadBenchPoints(store, id + 1000).empty());
}

// Rows with an integer "point" in their result are counted as that point (the distributed
// lab stores one row per rank and step and a closing row per point); other rows one each.
TEST_F(StoreTest, RowsOfOnePointCountAsOnePoint) {
    ResultStore store(dbPath());
    const int64_t id = store.createRun("distributed", "ddp", "{}", "gpu");
    int index = 0;
    const auto add = [&](const std::string& result, Status status) {
        store.addRow(id, {index++, status, "{}", result});
    };
    for (int step = 0; step < 3; ++step)
        for (int rank = 0; rank < 2; ++rank) add(R"({"point":0,"type":"ddp_step"})", Status::Ok);
    add(R"({"point":0,"type":"point","status":"ok"})", Status::Ok);
    add(R"({"point":1,"type":"ddp_step"})", Status::Ok);
    add(R"({"point":1,"type":"point","status":"failed"})", Status::Failed);
    add(R"({"point":2,"type":"point","status":"ok"})", Status::Ok);
    auto info = store.run(id);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->point_count, 3);
    EXPECT_EQ(info->ok_count, 2);  // point 1 failed
    // Rows without an integer "point" (and text that is not JSON) count one each.
    add(R"({"point":"x"})", Status::Ok);
    add("not json", Status::Ok);
    add(R"({"other":1})", Status::OOM);
    info = store.run(id);
    EXPECT_EQ(info->point_count, 6);
    EXPECT_EQ(info->ok_count, 4);
    EXPECT_EQ(store.listRuns().front().point_count, 6);
}

TEST_F(StoreTest, AttentionCellsRoundTripAndCount) {
    ResultStore store(dbPath());
    const int64_t id = store.createRun("attention", "cells", "{}", "gpu");
    AttentionCell a;
    a.impl = AttentionImpl::Flash;
    a.dtype = Precision::BF16;
    a.causal = true;
    a.batch = 8;
    a.heads = 16;
    a.head_dim = 128;
    a.seq = 4096;
    a.forward_ms = 1.25;
    a.backward_ms = 3.5;
    a.forward_tflops = 220.5;
    a.peak_memory = 123456789;
    a.err_out = 2e-3;
    a.err_grad = 2.5e-3;
    a.tolerance = 1e-2;
    AttentionCell b = a;
    b.impl = AttentionImpl::Naive;
    b.status = Status::OOM;
    b.error = "CUDA out of memory";
    storeAttentionCell(store, id, 1, b);
    storeAttentionCell(store, id, 0, a);
    const auto cells = loadAttentionCells(store, id);
    ASSERT_EQ(cells.size(), 2u);
    EXPECT_EQ(cells[0].impl, AttentionImpl::Flash);
    EXPECT_EQ(cells[0].dtype, Precision::BF16);
    EXPECT_TRUE(cells[0].causal);
    EXPECT_EQ(cells[0].head_dim, 128);
    EXPECT_EQ(cells[0].seq, 4096);
    EXPECT_DOUBLE_EQ(cells[0].forward_ms, 1.25);
    EXPECT_DOUBLE_EQ(cells[0].backward_ms, 3.5);
    EXPECT_DOUBLE_EQ(cells[0].forward_tflops, 220.5);
    EXPECT_EQ(cells[0].peak_memory, 123456789);
    EXPECT_DOUBLE_EQ(cells[0].err_grad, 2.5e-3);
    EXPECT_EQ(cells[1].status, Status::OOM);
    EXPECT_EQ(cells[1].error, "CUDA out of memory");
    const auto info = store.run(id);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->lab, "attention");
    EXPECT_EQ(info->point_count, 2);
    EXPECT_EQ(info->ok_count, 1);
    // A bench reader on an attention run says what is wrong instead of inventing results.
    EXPECT_NE(runtimeErrorOf([&] {
                  loadBenchPoints(store, id);
              }).find("is of kind 'attention', not 'bench'"),
              std::string::npos);
}

TEST_F(StoreTest, ListRunsNewestFirstWithOwnCounts) {
    ResultStore store(dbPath());
    const int64_t a = store.createRun("bench", "a", "{}", "d");
    const int64_t b = store.createRun("attention", "b", "{}", "d");
    const int64_t c = store.createRun("bench", "c", "{}", "d");
    storeBenchPoint(store, a, 0, makeResult(0));
    storeBenchPoint(store, a, 1, makeResult(1));
    storeBenchPoint(store, c, 0, makeResult(2, Status::OOM));
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].id, c);
    EXPECT_EQ(runs[1].id, b);
    EXPECT_EQ(runs[2].id, a);
    EXPECT_EQ(runs[0].label, "c");
    EXPECT_EQ(runs[1].lab, "attention");
    EXPECT_EQ(runs[0].point_count, 1);
    EXPECT_EQ(runs[0].ok_count, 0);
    EXPECT_EQ(runs[1].point_count, 0);
    EXPECT_EQ(runs[2].point_count, 2);
    EXPECT_EQ(runs[2].ok_count, 2);
}

TEST_F(StoreTest, RemoveRunDeletesItsPointsOnly) {
    ResultStore store(dbPath());
    const int64_t keep = store.createRun("bench", "keep", "{}", "d");
    const int64_t drop = store.createRun("bench", "drop", "{}", "d");
    for (int i = 0; i < 3; ++i) {
        storeBenchPoint(store, keep, i, makeResult(i));
        storeBenchPoint(store, drop, i, makeResult(i + 10));
    }
    EXPECT_TRUE(store.removeRun(drop));
    EXPECT_FALSE(store.removeRun(drop));
    EXPECT_FALSE(store.removeRun(12345));
    EXPECT_FALSE(store.run(drop));
    EXPECT_TRUE(loadBenchPoints(store, drop).empty());
    ASSERT_EQ(store.listRuns().size(), 1u);
    EXPECT_EQ(loadBenchPoints(store, keep).size(), 3u);

    // The rows are gone from the file (cascade), not merely hidden.
    RawDb raw(dbPath());
    EXPECT_EQ(raw.text("SELECT COUNT(*) FROM points"), "3");

    // A removed id is not handed out again (a window may still hold it).
    const int64_t next = store.createRun("bench", "next", "{}", "d");
    EXPECT_GT(next, drop);
}

TEST_F(StoreTest, BadPointsRejected) {
    ResultStore store(dbPath());
    const int64_t id = store.createRun("bench", "", "{}", "d");
    storeBenchPoint(store, id, 0, makeResult(0));
    const std::string dup = runtimeErrorOf([&] { storeBenchPoint(store, id, 0, makeResult(1)); });
    EXPECT_NE(dup.find(dbPath()), std::string::npos) << dup;
    EXPECT_NE(dup.find("UNIQUE"), std::string::npos) << dup;
    // The first one is still the one stored.
    ASSERT_EQ(loadBenchPoints(store, id).size(), 1u);
    expectSame(loadBenchPoints(store, id)[0], makeResult(0));

    const std::string orphan =
        runtimeErrorOf([&] { storeBenchPoint(store, id + 99, 0, makeResult(0)); });
    EXPECT_NE(orphan.find("FOREIGN KEY"), std::string::npos) << orphan;
}

TEST_F(StoreTest, SchemaVersionAndWal) {
    { ResultStore store(dbPath()); }
    RawDb raw(dbPath());
    EXPECT_EQ(raw.text("PRAGMA user_version"), "3");
    EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw.text("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN "
                       "('runs','points')"),
              "2");
    EXPECT_NE(
        raw.text("SELECT sql FROM sqlite_master WHERE name='points'").find("ON DELETE CASCADE"),
        std::string::npos);
}

// See Note [unfinished runs]: a run is unfinished until its process marks it ended; one killed
// before that stays so, with the points it meant to measure.
TEST_F(StoreTest, UnfinishedRunsKeepTheirPlan) {
    int64_t killed = 0, ended = 0;
    {
        ResultStore store(dbPath());
        killed = store.createRun("bench", "killed", "{}", "cpu", 5);
        storeBenchPoint(store, killed, 0, makeResult(0));
        storeBenchPoint(store, killed, 1, makeResult(1));
        ended = store.createRun("bench", "ended", "{}", "cpu", 1);
        storeBenchPoint(store, ended, 0, makeResult(0));
        store.finishRun(ended);
    }
    ResultStore store(dbPath());
    const auto a = store.run(killed), b = store.run(ended);
    ASSERT_TRUE(a && b);
    EXPECT_FALSE(a->finished());
    EXPECT_EQ(a->planned, 5);
    EXPECT_EQ(a->point_count, 2);
    EXPECT_TRUE(b->finished());
    EXPECT_EQ(b->planned, 1);
    EXPECT_GE(b->ended, b->created);
    EXPECT_EQ(store.listRuns().size(), 2u);
}

// A store of schema 1 (before runs knew their end) is brought to schema 2 when opened to write:
// its runs read as ended (their end was never marked, and is not known); read-only, it is read
// as it is.
TEST_F(StoreTest, SchemaOneStoresAreMigrated) {
    writeOldStore(dbPath(), 1, "bench");
    ResultStore store(dbPath());
    EXPECT_EQ(RawDb(dbPath()).text("PRAGMA user_version"), "3");
    const auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].label, "old");
    EXPECT_TRUE(runs[0].finished());
    EXPECT_EQ(runs[0].ended, "2026-11-01T00:00:00Z");
    EXPECT_EQ(runs[0].planned, 0);
    EXPECT_EQ(runs[0].environment_json, "{}");
    const int64_t id = store.createRun("bench", "new", "{}", "cpu", 3);
    EXPECT_FALSE(store.run(id)->finished());
}

// Schema 3: a run keeps the environment it was measured in, for every lab (the attention and
// precision labs' rows do not hold it); a store of schema 2 gains the column, its runs "{}".
TEST_F(StoreTest, RunsKeepTheirEnvironment) {
    writeOldStore(dbPath(), 2, "attention");
    ResultStore store(dbPath());
    EXPECT_EQ(RawDb(dbPath()).text("PRAGMA user_version"), "3");
    ASSERT_EQ(store.listRuns().size(), 1u);
    EXPECT_EQ(store.listRuns()[0].environment_json, "{}");
    const std::string env = R"({"torch_version":"2.11.0","cuda_version":"13.0"})";
    const int64_t id = store.createRun("attention", "new", "{}", "cpu", 1, env);
    EXPECT_EQ(store.run(id)->environment_json, env);
    EXPECT_EQ(store.listRuns()[0].environment_json, env);
    EXPECT_EQ(store.run(1)->environment_json, "{}");
}

TEST_F(StoreTest, ReopenSeesData) {
    int64_t id = 0;
    {
        ResultStore store(dbPath());
        id = store.createRun("bench", "persisted", "{\"x\":1}", "dev");
        for (int i = 0; i < 4; ++i) storeBenchPoint(store, id, i, makeResult(i));
    }
    ResultStore again(dbPath());
    const auto info = again.run(id);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->label, "persisted");
    EXPECT_EQ(info->point_count, 4);
    const auto pts = loadBenchPoints(again, id);
    ASSERT_EQ(pts.size(), 4u);
    for (int i = 0; i < 4; ++i) expectSame(pts[i], makeResult(i));
}

TEST_F(StoreTest, SecondOpenStoreSeesWritesAtOnce) {
    ResultStore writer(dbPath());
    ResultStore reader(dbPath());
    const int64_t id = writer.createRun("bench", "live", "{}", "d");
    ASSERT_TRUE(reader.run(id));
    for (int i = 0; i < 3; ++i) {
        storeBenchPoint(writer, id, i, makeResult(i));
        EXPECT_EQ(reader.run(id)->point_count, i + 1);
        ASSERT_EQ(loadBenchPoints(reader, id).size(), static_cast<size_t>(i + 1));
        expectSame(loadBenchPoints(reader, id).back(), makeResult(i));
    }
    EXPECT_TRUE(reader.removeRun(id));
    EXPECT_FALSE(writer.run(id));
}

TEST_F(StoreTest, ConcurrentReadersWhileWriting) {
    constexpr int kPoints = 150;
    int64_t id = 0;
    {
        ResultStore s(dbPath());
        id = s.createRun("bench", "concurrent", "{}", "d");
    }
    std::atomic<bool> done{false};
    std::mutex m;
    std::vector<std::string> errors;
    std::atomic<bool> failed{false};
    auto record = [&](const std::string& e) {
        std::lock_guard lock(m);
        errors.push_back(e);
        failed = true;
    };

    std::vector<std::thread> readers;
    std::atomic<int> reads{0}, started{0};
    for (int t = 0; t < 3; ++t) {
        readers.emplace_back([&, t] {
            try {
                ResultStore s(dbPath());  // each reader its own connection, like another process
                size_t last = 0;
                bool first = true;
                while (!done) {
                    const auto pts = loadBenchPoints(s, id);
                    const auto runs = s.listRuns();
                    if (pts.size() < last) record("point count went backwards");
                    last = pts.size();
                    for (size_t i = 0; i < pts.size(); ++i)
                        if (toJson(pts[i]) != toJson(makeResult(static_cast<int>(i))))
                            record("reader " + std::to_string(t) + ": point differs");
                    if (runs.size() != 1 || runs[0].point_count < static_cast<int>(pts.size()))
                        record("listRuns behind points()");
                    if (first) ++started;
                    first = false;
                    ++reads;
                }
            } catch (const std::exception& e) {
                record(std::string("reader: ") + e.what());
            }
        });
    }
    std::thread writer([&] {
        try {
            ResultStore s(dbPath());
            // Start once every reader is reading, so that reads and writes overlap.
            while (started < 3 && !failed) std::this_thread::yield();
            for (int i = 0; i < kPoints; ++i) storeBenchPoint(s, id, i, makeResult(i));
        } catch (const std::exception& e) {
            record(std::string("writer: ") + e.what());
        }
        done = true;
    });
    writer.join();
    for (auto& r : readers) r.join();

    EXPECT_TRUE(errors.empty()) << errors.size() << " errors, first: " << errors.front();
    EXPECT_GT(reads.load(), 3);
    ResultStore s(dbPath());
    EXPECT_EQ(s.run(id)->point_count, kPoints);
}

TEST_F(StoreTest, ConcurrentWritersAndFreshOpen) {
    // Several connections open a file that does not exist yet and write at once (the window
    // and a CLI run): the busy timeout makes them wait for each other instead of failing.
    constexpr int kWriters = 4, kPoints = 40;
    std::mutex m;
    std::vector<std::string> errors;
    std::vector<int64_t> ids(kWriters);
    std::vector<std::thread> threads;
    for (int t = 0; t < kWriters; ++t) {
        threads.emplace_back([&, t] {
            try {
                ResultStore s(dbPath());
                ids[t] = s.createRun("bench", "writer " + std::to_string(t), "{}", "d");
                for (int i = 0; i < kPoints; ++i) storeBenchPoint(s, ids[t], i, makeResult(i));
            } catch (const std::exception& e) {
                std::lock_guard lock(m);
                errors.push_back(e.what());
            }
        });
    }
    for (auto& t : threads) t.join();
    ASSERT_TRUE(errors.empty()) << errors.front();
    ResultStore s(dbPath());
    const auto runs = s.listRuns();
    ASSERT_EQ(runs.size(), static_cast<size_t>(kWriters));
    for (const auto& r : runs) {
        EXPECT_EQ(r.point_count, kPoints);
        EXPECT_EQ(r.ok_count, kPoints);
    }
}

TEST_F(StoreTest, OneStoreSharedBetweenThreads) {
    ResultStore store(dbPath());
    const int64_t id = store.createRun("bench", "", "{}", "d");
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            try {
                for (int i = 0; i < 20; ++i) {
                    storeBenchPoint(store, id, t * 100 + i, makeResult(i));
                    store.listRuns();
                }
            } catch (const std::exception&) {
                ++failures;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(store.run(id)->point_count, 80);
}

TEST_F(StoreTest, SurvivesSigkillAfterAddPoint) {
    // A child adds points one by one; after the k-th addPoint returns it tells the parent,
    // which kills it at once (usually in the middle of a later write). Every point whose
    // addPoint returned must be there, whole, after reopening.
    for (int k : {1, 5, 40, 200}) {
        SCOPED_TRACE("k = " + std::to_string(k));
        const std::string path = dbPath("kill" + std::to_string(k) + ".db");
        int64_t id = 0;
        {
            ResultStore s(path);  // closed before fork: SQLite connections must not cross it
            id = s.createRun("bench", "killed", "{}", "d");
        }
        int fds[2];
        ASSERT_EQ(pipe(fds), 0);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            close(fds[0]);
            try {
                ResultStore s(path);
                for (int i = 0; i < 1000000; ++i) {
                    storeBenchPoint(s, id, i, makeResult(i));
                    if (i + 1 == k && write(fds[1], "k", 1) != 1) _exit(3);
                }
            } catch (...) {
                _exit(2);
            }
            _exit(0);  // not reached in practice: the parent kills it first
        }
        close(fds[1]);
        char c = 0;
        const ssize_t n = read(fds[0], &c, 1);
        if (n == 1) kill(pid, SIGKILL);
        close(fds[0]);
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_EQ(n, 1) << "child exited before adding " << k << " points, status " << status;
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

        {
            RawDb raw(path);
            EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
        }
        ResultStore s(path);
        const auto info = s.run(id);
        ASSERT_TRUE(info);
        const auto pts = loadBenchPoints(s, id);  // throws if any stored point does not parse
        EXPECT_GE(pts.size(), static_cast<size_t>(k));
        EXPECT_EQ(info->point_count, static_cast<int>(pts.size()));
        // Written in order, one transaction each: what survived is a prefix, each whole.
        for (size_t i = 0; i < pts.size(); ++i) expectSame(pts[i], makeResult(static_cast<int>(i)));
        // And the store still takes writes after the crash.
        storeBenchPoint(s, id, static_cast<int>(pts.size()), makeResult(0));
    }
}

TEST_F(StoreTest, OpenErrorsNameThePath) {
    const std::string missing = (dir_ / "no" / "such" / "dir" / "x.db").string();
    std::string msg = runtimeErrorOf([&] { ResultStore s(missing); });
    EXPECT_NE(msg.find(missing), std::string::npos) << msg;
    EXPECT_NE(msg.find("unable to open"), std::string::npos) << msg;

    const std::string junk = dbPath("junk.db");
    {
        std::ofstream f(junk);
        for (int i = 0; i < 200; ++i) f << "this is not a database, just some text\n";
    }
    msg = runtimeErrorOf([&] { ResultStore s(junk); });
    EXPECT_NE(msg.find(junk), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a database"), std::string::npos) << msg;
}

TEST_F(StoreTest, NewerSchemaRefused) {
    {
        RawDb raw(dbPath());
        raw.exec("CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA user_version=7");
    }
    const std::string msg = runtimeErrorOf([&] { ResultStore s(dbPath()); });
    EXPECT_NE(msg.find(dbPath()), std::string::npos) << msg;
    EXPECT_NE(msg.find("7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
}

TEST_F(StoreTest, DefaultPathFollowsEnvironmentAndCreatesDirectory) {
    struct SavedEnv {
        const char* name;
        std::optional<std::string> value;
    };
    std::vector<SavedEnv> saved;
    for (const char* name : {"TRAINSCOPE_DB", "XDG_DATA_HOME", "HOME"}) {
        const char* v = std::getenv(name);
        saved.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
    }

    const fs::path explicitDb = dir_ / "explicit" / "sub" / "mine.db";
    setenv("TRAINSCOPE_DB", explicitDb.c_str(), 1);
    setenv("XDG_DATA_HOME", (dir_ / "xdg").c_str(), 1);
    setenv("HOME", (dir_ / "home").c_str(), 1);
    EXPECT_EQ(ResultStore::defaultPath(), explicitDb.string());
    EXPECT_TRUE(fs::is_directory(explicitDb.parent_path()));

    unsetenv("TRAINSCOPE_DB");
    EXPECT_EQ(ResultStore::defaultPath(), (dir_ / "xdg" / "trainscope" / "results.db").string());
    EXPECT_TRUE(fs::is_directory(dir_ / "xdg" / "trainscope"));

    setenv("TRAINSCOPE_DB", "", 1);          // empty counts as unset
    setenv("XDG_DATA_HOME", "relative", 1);  // the XDG spec says to ignore relative paths
    const fs::path homeDb = dir_ / "home" / ".local" / "share" / "trainscope" / "results.db";
    EXPECT_EQ(ResultStore::defaultPath(), homeDb.string());
    EXPECT_TRUE(fs::is_directory(homeDb.parent_path()));
    EXPECT_FALSE(fs::exists("relative"));

    // And a store opens there.
    { ResultStore s(ResultStore::defaultPath()); }
    EXPECT_TRUE(fs::exists(homeDb));

    for (const auto& e : saved) {
        if (e.value)
            setenv(e.name, e.value->c_str(), 1);
        else
            unsetenv(e.name);
    }
}

// A store this build may not write (a newer schema) still opens for reading when asked to,
// and every write says why it cannot.
TEST_F(StoreTest, NewerSchemaOpensReadOnlyForReading) {
    {
        ResultStore store(dbPath());
        const int64_t id = store.createRun("bench", "kept", "{}", "cpu");
        storeBenchPoint(store, id, 0, makeResult(0));
    }
    RawDb(dbPath()).exec("PRAGMA user_version=4");
    EXPECT_NE(runtimeErrorOf([&] { ResultStore s(dbPath()); }).find("newer"), std::string::npos);
    ResultStore store(dbPath(), ResultStore::Access::ReadIfNeeded);
    EXPECT_NE(store.readOnlyReason().find("schema version 4 is newer"), std::string::npos)
        << store.readOnlyReason();
    ASSERT_EQ(store.listRuns().size(), 1u);
    EXPECT_EQ(store.listRuns()[0].label, "kept");
    EXPECT_EQ(loadBenchPoints(store, store.listRuns()[0].id).size(), 1u);
    for (auto write : std::initializer_list<std::function<void()>>{
             [&] { store.createRun("bench", "", "{}", "cpu"); },
             [&] { storeBenchPoint(store, 1, 1, makeResult(1)); }, [&] { store.removeRun(1); }}) {
        const std::string msg = runtimeErrorOf(write);
        EXPECT_NE(msg.find("can only be read here"), std::string::npos) << msg;
        EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
    }
}

TEST_F(StoreTest, NewerSchemaThatCannotBeReadSaysWhy) {
    RawDb(dbPath()).exec("CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA user_version=7");
    const std::string msg =
        runtimeErrorOf([&] { ResultStore s(dbPath(), ResultStore::Access::ReadIfNeeded); });
    EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot read it"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no such table: points"), std::string::npos) << msg;
}

// A store on a medium this process cannot write (here: a folder and file it does not own,
// as another user when the test runs as root) is listed, read-only, with the reason.
TEST_F(StoreTest, ReadOnlyMediumIsListedReadOnly) {
    {
        ResultStore store(dbPath());
        const int64_t id = store.createRun("bench", "on a CD", "{}", "cpu");
        storeBenchPoint(store, id, 0, makeResult(0));
    }
    ASSERT_FALSE(fs::exists(dbPath() + "-wal")) << "closing checkpoints the WAL";
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    auto check = [&] {
        ResultStore store(dbPath(), ResultStore::Access::ReadIfNeeded);
        if (store.readOnlyReason().empty()) return 10;
        if (store.listRuns().size() != 1 || store.listRuns()[0].label != "on a CD") return 11;
        if (loadBenchPoints(store, store.listRuns()[0].id).size() != 1) return 12;
        if (runtimeErrorOf([&] {
                store.createRun("bench", "", "{}", "cpu");
            }).find("can only be read here") == std::string::npos)
            return 13;
        if (runtimeErrorOf([&] { ResultStore s(dbPath()); }) == "(no exception)") return 14;
        return 0;
    };
    if (::geteuid() != 0) {
        fs::permissions(dbPath(),
                        fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
        fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec,
                        fs::perm_options::replace);
        const int rc = check();
        fs::permissions(dir_, fs::perms::owner_all);
        EXPECT_EQ(rc, 0);
        return;
    }
    // Root writes anywhere: check as nobody, in a child, on root's folder and file.
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
            ::_exit(20);
        ::_exit(check());
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "10: opened writable, 11/12: not listed, 13: wrote, 14: Access::Write opened";
}
