#include "ui/shell/presets.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <algorithm>

#include "ui/labs.h"

// Q_INIT_RESOURCE must be called outside a namespace. Calling it also makes the linker
// keep the resources of the static library.
static void initTrainscopeResources() { Q_INIT_RESOURCE(trainscope); }

namespace ts::ui {

void ensureResources() {
    static const bool once = (initTrainscopeResources(), true);
    (void)once;
}

std::optional<ClassroomPreset> readPreset(const QString& path, QString* error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = QObject::tr("cannot read %1").arg(path);
        return std::nullopt;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        if (error) *error = QObject::tr("%1: %2").arg(path, pe.errorString());
        return std::nullopt;
    }
    const QJsonObject o = doc.object();
    if (!o.value(QLatin1String("config")).isObject()) {
        if (error) *error = QObject::tr("%1: no \"config\" object").arg(path);
        return std::nullopt;
    }
    ClassroomPreset p;
    p.id = QFileInfo(path).completeBaseName();
    p.title = o.value(QLatin1String("title")).toString(p.id);
    p.description = o.value(QLatin1String("description")).toString();
    // Presets from before there were several labs name none: they are the first lab's.
    p.experiment = o.value(QLatin1String("experiment")).toString(uiLabs().front().id);
    p.config = o.value(QLatin1String("config")).toObject();
    p.cpuConfig = o.value(QLatin1String("cpu")).toObject();
    p.view = o.value(QLatin1String("view")).toObject();
    p.order = o.value(QLatin1String("order")).toInt(100);
    return p;
}

QList<ClassroomPreset> loadPresets(const QString& dir) {
    ensureResources();
    QList<ClassroomPreset> out;
    const QDir d(dir);
    for (const QString& name : d.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        if (auto p = readPreset(d.filePath(name))) out.append(*p);
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.order < b.order; });
    return out;
}

std::optional<ClassroomPreset> findPreset(const QString& id) {
    for (const auto& p : loadPresets())
        if (p.id == id) return p;
    return std::nullopt;
}

bool ClassroomPreset::gpuOnly() const {
    if (!cpuConfig.isEmpty()) return false;
    return config.value(QLatin1String("device")).toString().startsWith(QLatin1String("cuda")) ||
           config.value(QLatin1String("backend")).toString() == QLatin1String("nccl");
}

QString gpuOnlyReason(const ClassroomPreset& preset) {
    return QObject::tr(
               "The preset '%1' needs a CUDA GPU, and this machine has none: what it "
               "compares (%2) cannot run on the CPU")
        .arg(preset.title,
             preset.config.value(QLatin1String("backend")).toString() == QLatin1String("nccl")
                 ? QObject::tr("NCCL ranks, one per GPU")
                 : QObject::tr("its device is cuda"));
}

}  // namespace ts::ui
