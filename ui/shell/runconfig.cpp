#include "shell/runconfig.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>

#include "attention/attention_lab.h"
#include "benchmark/benchmark.h"
#include "common/format.h"

namespace ts::ui {

namespace {

QJsonObject specOf(const RunInfo& run) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(run.spec_json)).object();
}

// The values of a list field, as text; `fallback` (a scalar of the base) when the list is empty.
QStringList listOf(const QJsonValue& v, const QJsonValue& fallback = {}) {
    QStringList out;
    for (const QJsonValue& x : v.toArray())
        out << (x.isString() ? x.toString() : x.isBool() ? QString() : QString::number(x.toInteger()));
    out.removeAll(QString());
    if (out.isEmpty() && !fallback.isUndefined() && !fallback.isNull())
        out << (fallback.isString() ? fallback.toString() : QString::number(fallback.toInteger()));
    return out;
}

QJsonArray arrayOf(const QStringList& l) { return QJsonArray::fromStringList(l); }

// The benchmark: a sweep file's fields (benchSpecJson) → BenchPanel's state.
QString benchSummary(const QJsonObject& s) {
    const QJsonObject base = s.value(QLatin1String("base")).toObject();
    const QJsonObject model = base.value(QLatin1String("model")).toObject();
    const QString dot = QStringLiteral(", ");
    QStringList parts;
    parts << listOf(s.value(QLatin1String("sizes")), model.value(QLatin1String("name"))).join(dot)
          << QStringLiteral("ctx ") + listOf(s.value(QLatin1String("context_lengths")), model.value(QLatin1String("context_length"))).join(dot)
          << QStringLiteral("bs ") + listOf(s.value(QLatin1String("batch_sizes")), base.value(QLatin1String("batch_size"))).join(dot)
          << listOf(s.value(QLatin1String("precisions")), base.value(QLatin1String("precision"))).join(dot)
          << listOf(s.value(QLatin1String("attentions")), base.value(QLatin1String("attention"))).join(dot)
          << listOf(s.value(QLatin1String("modes")), base.value(QLatin1String("mode"))).join(dot)
          << QObject::tr("warm-up %1").arg(listOf(s.value(QLatin1String("warmups")), base.value(QLatin1String("warmup"))).join(dot))
          << QObject::tr("steps %1").arg(base.value(QLatin1String("steps")).toInteger())
          << listOf(s.value(QLatin1String("devices")), base.value(QLatin1String("device"))).join(dot);
    return parts.join(QStringLiteral(" · "));
}

QJsonObject benchState(const RunInfo& run, const QJsonObject& s) {
    const QJsonObject base = s.value(QLatin1String("base")).toObject();
    const QJsonObject model = base.value(QLatin1String("model")).toObject();
    const QString comma = QStringLiteral(", ");
    QJsonObject o;
    o[QStringLiteral("label")] = qstr(run.label);
    o[QStringLiteral("sizes")] = arrayOf(listOf(s.value(QLatin1String("sizes")), model.value(QLatin1String("name"))));
    o[QStringLiteral("custom")] = QJsonObject{{QStringLiteral("vocab"), model.value(QLatin1String("vocab_size"))},
                                             {QStringLiteral("d_model"), model.value(QLatin1String("d_model"))},
                                             {QStringLiteral("d_ff"), model.value(QLatin1String("d_ff"))},
                                             {QStringLiteral("layers"), model.value(QLatin1String("num_layers"))},
                                             {QStringLiteral("heads"), model.value(QLatin1String("num_heads"))}};
    o[QStringLiteral("context")] = listOf(s.value(QLatin1String("context_lengths")), model.value(QLatin1String("context_length"))).join(comma);
    o[QStringLiteral("batch")] = listOf(s.value(QLatin1String("batch_sizes")), base.value(QLatin1String("batch_size"))).join(comma);
    o[QStringLiteral("warmup")] = listOf(s.value(QLatin1String("warmups")), base.value(QLatin1String("warmup"))).join(comma);
    o[QStringLiteral("steps")] = base.value(QLatin1String("steps"));
    o[QStringLiteral("modes")] = arrayOf(listOf(s.value(QLatin1String("modes")), base.value(QLatin1String("mode"))));
    o[QStringLiteral("precisions")] = arrayOf(listOf(s.value(QLatin1String("precisions")), base.value(QLatin1String("precision"))));
    o[QStringLiteral("attentions")] = arrayOf(listOf(s.value(QLatin1String("attentions")), base.value(QLatin1String("attention"))));
    o[QStringLiteral("device")] = listOf(s.value(QLatin1String("devices")), base.value(QLatin1String("device"))).value(0);
    return o;
}

// The attention lab: attentionSpecJson → AttentionPanel's state.
QStringList causalNames(const QJsonValue& v) {
    QStringList out;
    for (const QJsonValue& x : v.toArray()) out << (x.toBool() ? QStringLiteral("causal") : QStringLiteral("full"));
    return out;
}

QString attentionSummary(const QJsonObject& s) {
    const QString comma = QStringLiteral(", ");
    QStringList parts;
    parts << listOf(s.value(QLatin1String("impls"))).join(comma)
          << QStringLiteral("seq ") + listOf(s.value(QLatin1String("seq_lens"))).join(comma)
          << QStringLiteral("d ") + listOf(s.value(QLatin1String("head_dims"))).join(comma)
          << listOf(s.value(QLatin1String("dtypes"))).join(comma) << causalNames(s.value(QLatin1String("causal"))).join(comma)
          << listOf(s.value(QLatin1String("passes"))).join(comma)
          << QStringLiteral("b ") + listOf(s.value(QLatin1String("batches"))).join(comma)
          << QStringLiteral("h ") + listOf(s.value(QLatin1String("heads"))).join(comma)
          << QObject::tr("warm-up %1").arg(s.value(QLatin1String("warmup")).toInteger())
          << QObject::tr("steps %1").arg(s.value(QLatin1String("steps")).toInteger())
          << s.value(QLatin1String("device")).toString();
    return parts.join(QStringLiteral(" · "));
}

QJsonObject attentionState(const RunInfo& run, const QJsonObject& s) {
    const QString comma = QStringLiteral(", ");
    QJsonObject o;
    o[QStringLiteral("label")] = qstr(run.label);
    o[QStringLiteral("impls")] = arrayOf(listOf(s.value(QLatin1String("impls"))));
    o[QStringLiteral("seq")] = listOf(s.value(QLatin1String("seq_lens"))).join(comma);
    o[QStringLiteral("head_dims")] = listOf(s.value(QLatin1String("head_dims"))).join(comma);
    o[QStringLiteral("batches")] = listOf(s.value(QLatin1String("batches"))).join(comma);
    o[QStringLiteral("heads")] = listOf(s.value(QLatin1String("heads"))).join(comma);
    o[QStringLiteral("dtypes")] = arrayOf(listOf(s.value(QLatin1String("dtypes"))));
    o[QStringLiteral("causal")] = arrayOf(causalNames(s.value(QLatin1String("causal"))));
    o[QStringLiteral("passes")] = arrayOf(listOf(s.value(QLatin1String("passes"))));
    o[QStringLiteral("warmup")] = s.value(QLatin1String("warmup"));
    o[QStringLiteral("steps")] = s.value(QLatin1String("steps"));
    o[QStringLiteral("device")] = s.value(QLatin1String("device"));
    o[QStringLiteral("check")] = s.value(QLatin1String("check"));
    return o;
}

}  // namespace

QString configurationSummary(const RunInfo& run) {
    const QJsonObject spec = specOf(run);
    if (spec.isEmpty()) return {};
    if (run.lab == kBenchLab) return benchSummary(spec);
    if (run.lab == kAttentionLab) return attentionSummary(spec);
    return {};
}

std::optional<QJsonObject> panelStateForRun(const RunInfo& run, QString* why) {
    const QJsonObject spec = specOf(run);
    auto fail = [&](const QString& reason) -> std::optional<QJsonObject> {
        if (why) *why = reason;
        return std::nullopt;
    };
    if (spec.isEmpty()) return fail(QObject::tr("run %1 has no readable configuration").arg(run.id));
    if (run.lab == kBenchLab) return benchState(run, spec);
    if (run.lab == kAttentionLab) return attentionState(run, spec);
    return fail(QObject::tr("runs of kind '%1' have no configuration this window can load").arg(qstr(run.lab)));
}

}  // namespace ts::ui
