// History follows the results store: runs added by the CLI, another window or a distributed
// run's rank 0 appear without pressing Refresh. The store's file and its write-ahead log are
// looked at every two seconds (their size and modification time; no SQLite call on the UI
// thread); a change since History last read the store asks for a refresh.
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

namespace ts::ui {

class StoreFollower : public QObject {
    Q_OBJECT
public:
    explicit StoreFollower(QObject* parent = nullptr, int intervalMs = 2000);
    // History has just read the store at `path` (it may be another store than before).
    void markRead(const QString& path);
    // What the store's files look like now: sizes and times of the file and its -wal.
    static QString signatureOf(const QString& path);

Q_SIGNALS:
    void changed();  // the store was written since it was last read

private:
    void check();
    QTimer timer_;
    QString path_, seen_;
};

}  // namespace ts::ui
