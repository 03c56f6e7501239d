#include "ui/shell/runconfig.h"

#include <QJsonDocument>

#include "ui/common/format.h"
#include "ui/labs.h"

namespace ts::ui {

namespace {

QJsonObject specOf(const RunInfo& run) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(run.spec_json)).object();
}

const LabEntry* labOf(const RunInfo& run) {
    for (const LabEntry& lab : uiLabs())
        if (lab.id == qstr(run.lab)) return &lab;
    return nullptr;
}

}  // namespace

QString configurationSummary(const RunInfo& run) {
    const QJsonObject spec = specOf(run);
    const LabEntry* lab = labOf(run);
    return spec.isEmpty() || !lab ? QString() : lab->describeSpec(spec);
}

std::optional<QJsonObject> panelStateForRun(const RunInfo& run, QString* why) {
    const QJsonObject spec = specOf(run);
    const LabEntry* lab = labOf(run);
    QString reason;
    if (spec.isEmpty())
        reason = QObject::tr("run %1 has no readable configuration").arg(run.id);
    else if (!lab)
        reason = QObject::tr("runs of kind '%1' have no configuration this window can load")
                     .arg(qstr(run.lab));
    if (!reason.isEmpty()) {
        if (why) *why = reason;
        return std::nullopt;
    }
    QJsonObject state = lab->stateFromSpec(spec);
    state[QStringLiteral("label")] = qstr(run.label);
    return state;
}

}  // namespace ts::ui
