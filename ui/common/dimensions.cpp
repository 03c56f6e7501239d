#include "ui/common/dimensions.h"

#include <QStringList>
#include <algorithm>

#include "ui/common/format.h"

namespace ts::ui {

const std::vector<Dimension>& allDimensions() {
    static const std::vector<Dimension> dims = [] {
        std::vector<Dimension> out;
        for (const auto& d : pointDimensions()) out.push_back(d.id());
        return out;
    }();
    return dims;
}

QString dimensionName(Dimension d) { return qstr(std::string(dimensionDef(d).name)); }

QString dimensionKey(Dimension d) { return qstr(std::string(dimensionDef(d).key)); }

std::optional<Dimension> dimensionFromKey(const QString& key) {
    for (const auto& d : pointDimensions())
        if (qstr(std::string(d.key)) == key) return d.id();
    return std::nullopt;
}

QString dimensionValue(Dimension d, const PointConfig& c) {
    // A size by its preset name only while the dimensions are the preset's.
    if (d == Dimension::Size) return sizeLabel(c.model);
    return qstr(dimensionDef(d).get(c));
}

QString dimensionLabel(Dimension d, const PointConfig& c) {
    if (d == Dimension::Size) return sizeLabel(c.model);
    return qstr(ts::dimensionLabel(dimensionDef(d), c));
}

double dimensionNumber(Dimension d, const PointConfig& c) { return dimensionDef(d).number(c); }

bool isNumericDimension(Dimension d) {
    return d == Dimension::Size || dimensionDef(d).kind == DimensionDef::Kind::Integer;
}

QStringList dimensionValues(const std::vector<PointConfig>& points, Dimension d) {
    QStringList values;
    for (const auto& p : points) {
        const QString v = dimensionValue(d, p);
        if (!values.contains(v)) values << v;
    }
    return values;
}

std::vector<Dimension> varyingDimensions(const std::vector<PointConfig>& points) {
    std::vector<Dimension> out;
    for (Dimension d : allDimensions())
        if (dimensionValues(points, d).size() > 1) out.push_back(d);
    return out;
}

QString pointKey(const PointConfig& c, const std::vector<Dimension>& except) {
    QStringList parts;
    for (Dimension d : allDimensions()) {
        if (std::find(except.begin(), except.end(), d) != except.end()) continue;
        parts << dimensionValue(d, c);
    }
    // Custom dimensions with the same label differ in vocabulary or d_ff: keep them apart.
    if (std::find(except.begin(), except.end(), Dimension::Size) == except.end())
        parts << QString::number(c.model.d_ff) << QString::number(c.model.vocab_size);
    return parts.join(QLatin1Char('|'));
}

QString labelOver(const PointConfig& c, const std::vector<Dimension>& dims) {
    if (dims.empty()) return QStringLiteral("all");
    QStringList parts;
    for (Dimension d : dims) parts << dimensionLabel(d, c);
    return parts.join(QStringLiteral(" · "));
}

}  // namespace ts::ui
