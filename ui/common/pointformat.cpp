#include "ui/common/pointformat.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark_json.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"

namespace ts::ui {

QString describeConfig(const PointConfig& c) { return describeConfig(c, {}); }

QString describeConfig(const PointConfig& c, std::initializer_list<Dimension> leaveOut) {
    QStringList parts;
    for (Dimension d : allDimensions()) {
        if (std::find(leaveOut.begin(), leaveOut.end(), d) != leaveOut.end()) continue;
        const DimensionDef& def = dimensionDef(d);
        if (def.unsaid_default && def.get(c) == def.get(PointConfig{}))
            continue;  // eager, TrainScope's model, no checkpoints: said by their absence
        if (d == Dimension::Attention && c.source == Source::Python)
            continue;  // the user's model has its own
        parts << dimensionLabel(d, c);
    }
    return parts.join(QStringLiteral(" · "));
}

QString describeSweep(const std::vector<PointConfig>& points) {
    if (points.empty()) return {};
    if (points.size() == 1) return describeConfig(points.front());
    QStringList parts;
    for (Dimension d : allDimensions()) {
        QStringList values;
        for (const auto& p : points) {
            const QString v = dimensionValue(d, p);
            if (!values.contains(v)) values << v;
        }
        if (d == Dimension::Exec && values == QStringList{qstr(toString(ExecMode::Eager))})
            continue;
        if (d == Dimension::Source && values == QStringList{qstr(toString(Source::TrainScope))})
            continue;
        parts << QStringLiteral("%1 %2").arg(dimensionName(d), values.join(QStringLiteral(", ")));
    }
    return QStringLiteral("%1 points: %2").arg(points.size()).arg(parts.join(QStringLiteral("; ")));
}

bool measuresDeviceMemory(const PointConfig& c) { return c.device.rfind("cuda", 0) == 0; }

QString configurationJson(const std::vector<PointConfig>& configs) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& c : configs) arr.push_back(toJson(c));
    return QString::fromStdString(
        arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace ts::ui
