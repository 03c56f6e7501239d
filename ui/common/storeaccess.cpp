#include "ui/common/storeaccess.h"

#include <QFile>
#include <QFileInfo>
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

std::optional<StoredRun> importRun(
    const QString& path, const QString& storePath, const std::string& lab, const QString& what,
    const std::function<ImportedRun(std::string_view bytes, const std::string& name)>& parse,
    QString* error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = QObject::tr("cannot read %1: %2").arg(path, f.errorString());
        return std::nullopt;
    }
    const QByteArray bytes = f.readAll();
    const QString name = QFileInfo(path).fileName();
    StoredRun out;
    try {
        const ImportedRun imported =
            parse(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())),
                  name.toStdString());
        try {
            ResultStore store(storePath.toStdString());
            const int64_t id = store.createRun(lab, name.toStdString(), imported.specJson,
                                               imported.environment.device_name, 1,
                                               toJson(imported.environment).dump());
            store.addRow(id, imported.row);
            store.finishRun(id);
            out.info = *store.run(id);
            out.rows = store.rows(id, lab);
        } catch (const std::exception& e) {
            if (error)
                *error = QObject::tr("the imported %1 could not be stored: %2")
                             .arg(what, qstr(std::string(e.what())));
            return std::nullopt;
        }
    } catch (const std::exception& e) {
        if (error) *error = QObject::tr("%1: %2").arg(name, qstr(std::string(e.what())));
        return std::nullopt;
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

}  // namespace ts::ui
