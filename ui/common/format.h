// Small text helpers shared by the models, the exports and the widgets.
#pragma once

#include <QJsonValue>
#include <QString>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/result.h"

namespace ts::ui {

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }
inline QString qstr(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}
inline std::string sstr(const QString& s) { return s.toStdString(); }

QString formatMs(double ms);             // "12.34", fewer decimals for large values
QString formatMiB(int64_t bytes);        // "1536.0"
QString formatParams(int64_t count);     // "128.6 M"
QString formatDuration(double seconds);  // "1 min 12 s", "—" when unknown (< 0)

// "tiny", or "custom d768 L12 H12" for dimensions that are no preset.
QString sizeLabel(const ModelConfig& m);
// A preset in a size list: "xl  (32 layers, d_model 2560)", and "  · 2025 table" for the 2025
// edition's own sizes (see Note [two model tables]).
QString presetLabel(const std::string& name);
QString presetTooltip(const std::string& name);  // the dimensions and the edition

// The environment of a run as "Key: value" lines (device, driver, CUDA, LibTorch, commit,
// date, ...), empty values left out.
QStringList environmentLines(const Environment& env);

// "256, 512 1024" → numbers; false with `error` naming the bad token.
bool parseIntList(const QString& text, std::vector<int64_t>* out, QString* error);

// The strings of a JSON array (a panel's saved state); anything else gives none.
QStringList stringsOf(const QJsonValue& v);

// What an attention implementation is, in a line, for tooltips.
QString attentionHint(AttentionImpl a);

// The values of a JSON list as text (numbers as whole numbers); `fallback` (a scalar) when
// the list is empty or missing. For reading stored spec JSON back into fields.
QStringList jsonListText(const QJsonValue& v, const QJsonValue& fallback = {});

}  // namespace ts::ui
