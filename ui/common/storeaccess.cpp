#include "ui/common/storeaccess.h"

#include <QFile>
#include <QtConcurrent/QtConcurrentRun>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "ui/common/format.h"

namespace ts::ui {

QString defaultStorePath() {
    try {
        return qstr(ResultStore::defaultPath());
    } catch (const std::exception&) {
        return {};
    }
}

RunList listRuns(const QString& storePath) {
    RunList out;
    try {
        // A store this window cannot write (a read-only medium, a newer TrainScope's) still lists.
        ResultStore store(storePath.toStdString(), ResultStore::Access::ReadIfNeeded);
        out.runs = store.listRuns();
        out.readOnly = qstr(store.readOnlyReason());
    } catch (const std::exception& e) {
        out.error = qstr(std::string(e.what()));
    }
    return out;
}

StoredRun loadRun(const QString& storePath, qint64 runId) {
    StoredRun out;
    try {
        ResultStore store(storePath.toStdString(), ResultStore::Access::ReadIfNeeded);
        auto info = store.run(runId);
        if (!info) {
            out.error = QObject::tr("run %1 is not in the store").arg(runId);
            return out;
        }
        out.info = *info;
        out.rows = store.rows(runId, info->lab);
    } catch (const std::exception& e) {
        out.error = qstr(std::string(e.what()));
    }
    return out;
}

StoredRun storeImportedRun(const QString& storePath, const std::string& lab, const QString& label,
                           const std::string& specJson, const Environment& env,
                           const StoredRow& row) {
    StoredRun out;
    try {
        ResultStore store(storePath.toStdString());
        const int64_t id = store.createRun(lab, label.toStdString(), specJson, env.device_name, 1,
                                           toJson(env).dump());
        store.addRow(id, row);
        store.finishRun(id);
        out.info = *store.run(id);
        out.rows = store.rows(id, lab);
    } catch (const std::exception& e) {
        out.error = qstr(std::string(e.what()));
    }
    return out;
}

QFuture<RunList> listRunsAsync(const QString& storePath) {
    return QtConcurrent::run([storePath] { return listRuns(storePath); });
}

QFuture<StoredRun> loadRunAsync(const QString& storePath, qint64 runId) {
    return QtConcurrent::run([storePath, runId] { return loadRun(storePath, runId); });
}

QFuture<QString> removeRunAsync(const QString& storePath, qint64 runId) {
    return QtConcurrent::run([storePath, runId]() -> QString {
        try {
            ResultStore store(storePath.toStdString());
            if (!store.removeRun(runId))
                return QObject::tr("run %1 is not in the store").arg(runId);
            return {};
        } catch (const std::exception& e) {
            return qstr(std::string(e.what()));
        }
    });
}

std::optional<QByteArray> readFileToImport(const QString& path, QString* error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = QObject::tr("cannot read %1: %2").arg(path, f.errorString());
        return std::nullopt;
    }
    return f.readAll();
}

}  // namespace ts::ui
