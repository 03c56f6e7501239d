// The results store, off the UI thread: each call opens its own connection in a pool
// thread (SQLite connections are not shared across threads) and hands back a value.
#pragma once

#include <QByteArray>
#include <QFuture>
#include <QString>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/store.h"

namespace ts::ui {

// A stored run as the store holds it: its info and its rows, which the lab's view reads.
struct StoredRun {
    RunInfo info;
    std::vector<StoredRow> rows;
    QString error;  // set when the store could not be read
};

struct RunList {
    std::vector<RunInfo> runs;
    QString error;
    QString readOnly;  // why the store opened read-only (runs are not stored then); empty: writable
};

QString defaultStorePath();
QFuture<RunList> listRunsAsync(const QString& storePath);
QFuture<StoredRun> loadRunAsync(const QString& storePath, qint64 runId);
QFuture<QString> removeRunAsync(const QString& storePath, qint64 runId);  // error or empty

// What a lab makes of a file another tool wrote: the run's spec and environment, its one row.
struct ImportedRun {
    std::string specJson;
    Environment environment;
    StoredRow row;
};
// File ▸ Import Trace… for every lab: reads the file at `path`, hands its bytes and name to
// `parse` (which throws with the reason it is not what the lab reads), creates the run in the
// store at `storePath` with its row, ends it and reads it back as History would show it.
// nullopt with `error` naming the file and why (unreadable, not parsed, the store not
// written: "the imported `what` could not be stored").
std::optional<StoredRun> importRun(
    const QString& path, const QString& storePath, const std::string& lab, const QString& what,
    const std::function<ImportedRun(std::string_view bytes, const std::string& name)>& parse,
    QString* error);

// The same, blocking: for worker threads and tests.
RunList listRuns(const QString& storePath);
StoredRun loadRun(const QString& storePath, qint64 runId);

}  // namespace ts::ui
