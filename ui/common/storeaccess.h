// The results store, off the UI thread: each call opens its own connection in a pool
// thread (SQLite connections are not shared across threads) and hands back a value.
#pragma once

#include <QFuture>
#include <QString>
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

// The same, blocking: for worker threads and tests.
RunList listRuns(const QString& storePath);
StoredRun loadRun(const QString& storePath, qint64 runId);

}  // namespace ts::ui
