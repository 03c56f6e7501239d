#include "ui/common/format.h"

#include <QJsonArray>
#include <QLocale>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/lab.h"

namespace ts::ui {

QString formatMs(double ms) {
    if (!std::isfinite(ms)) return QStringLiteral("—");
    const double a = std::abs(ms);
    const int decimals = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3;
    return QString::number(ms, 'f', decimals);
}

QString formatMiB(int64_t bytes) {
    return QString::number(static_cast<double>(bytes) / (1024.0 * 1024.0), 'f', 1);
}

QString formatParams(int64_t count) {
    const double n = static_cast<double>(count);
    if (n >= 1e9) return QString::number(n / 1e9, 'f', 2) + QStringLiteral(" B");
    if (n >= 1e6) return QString::number(n / 1e6, 'f', 1) + QStringLiteral(" M");
    if (n >= 1e3) return QString::number(n / 1e3, 'f', 1) + QStringLiteral(" k");
    return QString::number(count);
}

QString formatDuration(double seconds) {
    if (!(seconds >= 0) || !std::isfinite(seconds)) return QStringLiteral("—");
    const auto s = static_cast<long long>(std::llround(seconds));
    if (s < 60) return QStringLiteral("%1 s").arg(s);
    if (s < 3600) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

QString presetLabel(const std::string& name) {
    const auto m = modelPreset(name);
    if (!m) return qstr(name);
    QString label = QObject::tr("%1  (%2 layers, d_model %3)")
                        .arg(qstr(name))
                        .arg(m->num_layers)
                        .arg(m->d_model);
    if (presetEdition(name) == ModelTable::Edition2025) label += QObject::tr("  · 2025 table");
    return label;
}

QString presetTooltip(const std::string& name) {
    const auto m = modelPreset(name);
    if (!m) return {};
    const auto edition = presetEdition(name);
    return QObject::tr("%1: d_model %2, d_ff %3, %4 layers, %5 heads; %6")
        .arg(qstr(name))
        .arg(m->d_model)
        .arg(m->d_ff)
        .arg(m->num_layers)
        .arg(m->num_heads)
        .arg(!edition ? QObject::tr("the same in the course's 2026 and 2025 tables")
             : *edition == ModelTable::Edition2026
                 ? QObject::tr("the course's current (2026) table")
                 : QObject::tr(
                       "the course's 2025 table (its xl; now xl means 2560 wide, 32 layers)"));
}

QString sizeLabel(const ModelConfig& m) {
    if (m.name != "custom" && !m.name.empty()) {
        // A preset name only if the dimensions still match the preset.
        if (auto p = modelPreset(m.name); p && p->d_model == m.d_model && p->d_ff == m.d_ff &&
                                          p->num_layers == m.num_layers &&
                                          p->num_heads == m.num_heads)
            return qstr(m.name);
    }
    return QStringLiteral("custom d%1 L%2 H%3").arg(m.d_model).arg(m.num_layers).arg(m.num_heads);
}

QStringList environmentLines(const Environment& e) {
    QStringList lines;
    auto add = [&](const char* key, const std::string& value) {
        if (!value.empty()) lines << QStringLiteral("%1: %2").arg(QLatin1String(key), qstr(value));
    };
    add("Device", e.device_name);
    add("Driver", e.driver_version);
    if (!e.cuda_version.empty()) add("CUDA", cudaLine(e));
    add("LibTorch", e.torch_version);
    add("CPU", e.cpu);
    add("Host", e.hostname);
    std::string build = e.trainscope_version;
    if (!e.git_commit.empty()) build += (build.empty() ? "" : " ") + ("commit " + e.git_commit);
    add("TrainScope", build);
    add("Date", e.date);
    return lines;
}

bool parseIntList(const QString& text, std::vector<int64_t>* out, QString* error) {
    out->clear();
    const QStringList tokens =
        text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
    if (tokens.isEmpty()) {
        if (error) *error = QObject::tr("enter at least one value");
        return false;
    }
    for (const QString& t : tokens) {
        bool ok = false;
        const qlonglong v = t.toLongLong(&ok);
        if (!ok) {
            static const QRegularExpression digits(QStringLiteral("^[+-]?[0-9]+$"));
            if (error)
                *error = digits.match(t).hasMatch()
                             ? QObject::tr("'%1' is too large (at most %2)")
                                   .arg(t)
                                   .arg(std::numeric_limits<qlonglong>::max())
                             : QObject::tr("'%1' is not a whole number").arg(t);
            return false;
        }
        if (std::find(out->begin(), out->end(), v) == out->end()) out->push_back(v);
    }
    return true;
}

QStringList stringsOf(const QJsonValue& v) {
    QStringList out;
    for (const auto& x : v.toArray()) out << x.toString();
    return out;
}

QString attentionHint(AttentionImpl a) {
    switch (a) {
        case AttentionImpl::Naive:
            return QObject::tr("matmul, masked softmax, matmul, as the course writes it");
        case AttentionImpl::Tiled:
            return QObject::tr("FlashAttention-2's algorithm in LibTorch ops");
        case AttentionImpl::Sdpa:
            return QObject::tr(
                "LibTorch's fused scaled_dot_product_attention, backend of its choice");
        case AttentionImpl::SdpaFlash:
            return QObject::tr("LibTorch's SDPA, forced to its FlashAttention backend");
        case AttentionImpl::SdpaEfficient:
            return QObject::tr("LibTorch's SDPA, forced to its memory-efficient backend");
        case AttentionImpl::SdpaCudnn:
            return QObject::tr("LibTorch's SDPA, forced to its cuDNN backend");
        case AttentionImpl::SdpaMath:
            return QObject::tr("LibTorch's SDPA, forced to its math (unfused) backend");
        case AttentionImpl::Flash:
            return QObject::tr("TrainScope's own CUDA kernels");
    }
    return {};
}

QStringList jsonListText(const QJsonValue& v, const QJsonValue& fallback) {
    QStringList out;
    for (const QJsonValue& x : v.toArray())
        out << (x.isString() ? x.toString()
                : x.isBool() ? QString()
                             : QString::number(x.toInteger()));
    out.removeAll(QString());
    if (out.isEmpty() && !fallback.isUndefined() && !fallback.isNull())
        out << (fallback.isString() ? fallback.toString() : QString::number(fallback.toInteger()));
    return out;
}

}  // namespace ts::ui
