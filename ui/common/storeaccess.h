// The results store, off the UI thread: each call opens its own connection in a pool
// thread (SQLite connections are not shared across threads) and hands back a value.
#pragma once

#include <QByteArray>
#include <QFuture>
#include <QString>
#include <optional>
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

// A run of one row made from a file another tool wrote (File ▸ Import Trace…): created in the
// store at `storePath` with its spec and environment, its row stored, ended, and read back as
// History would show it; `error` set (and no run) when the store cannot be written.
StoredRun storeImportedRun(const QString& storePath, const std::string& lab, const QString& label,
                           const std::string& specJson, const Environment& env,
                           const StoredRow& row);
// The whole of a file to import, or nullopt with `error` naming it and why it cannot be read.
std::optional<QByteArray> readFileToImport(const QString& path, QString* error);

// The same, blocking: for worker threads and tests.
RunList listRuns(const QString& storePath);
StoredRun loadRun(const QString& storePath, qint64 runId);

}  // namespace ts::ui
