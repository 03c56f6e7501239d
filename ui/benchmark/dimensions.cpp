#include "benchmark/dimensions.h"

#include <QStringList>
#include <algorithm>

#include "common/format.h"

namespace ts::ui {

const std::vector<Dimension>& allDimensions() {
    static const std::vector<Dimension> dims = {
        Dimension::Size,      Dimension::Context, Dimension::Batch, Dimension::Precision,
        Dimension::Attention, Dimension::Mode,    Dimension::Exec,  Dimension::Source,
        Dimension::Warmup,    Dimension::Steps,   Dimension::Device};
    return dims;
}

QString dimensionName(Dimension d) {
    switch (d) {
        case Dimension::Size:
            return QStringLiteral("model size");
        case Dimension::Context:
            return QStringLiteral("context length");
        case Dimension::Batch:
            return QStringLiteral("batch size");
        case Dimension::Precision:
            return QStringLiteral("precision");
        case Dimension::Attention:
            return QStringLiteral("attention");
        case Dimension::Mode:
            return QStringLiteral("mode");
        case Dimension::Exec:
            return QStringLiteral("execution");
        case Dimension::Source:
            return QStringLiteral("code");
        case Dimension::Warmup:
            return QStringLiteral("warm-up steps");
        case Dimension::Steps:
            return QStringLiteral("measured steps");
        case Dimension::Device:
            return QStringLiteral("device");
    }
    return {};
}

QString dimensionKey(Dimension d) {
    switch (d) {
        case Dimension::Size:
            return QStringLiteral("size");
        case Dimension::Context:
            return QStringLiteral("context");
        case Dimension::Batch:
            return QStringLiteral("batch");
        case Dimension::Precision:
            return QStringLiteral("precision");
        case Dimension::Attention:
            return QStringLiteral("attention");
        case Dimension::Mode:
            return QStringLiteral("mode");
        case Dimension::Exec:
            return QStringLiteral("exec");
        case Dimension::Source:
            return QStringLiteral("source");
        case Dimension::Warmup:
            return QStringLiteral("warmup");
        case Dimension::Steps:
            return QStringLiteral("steps");
        case Dimension::Device:
            return QStringLiteral("device");
    }
    return {};
}

std::optional<Dimension> dimensionFromKey(const QString& key) {
    for (Dimension d : allDimensions())
        if (dimensionKey(d) == key) return d;
    return std::nullopt;
}

QString dimensionValue(Dimension d, const BenchConfig& c) {
    switch (d) {
        case Dimension::Size:
            return sizeLabel(c.model);
        case Dimension::Context:
            return QString::number(c.model.context_length);
        case Dimension::Batch:
            return QString::number(c.batch_size);
        case Dimension::Precision:
            return qstr(toString(c.precision));
        case Dimension::Attention:
            return qstr(toString(c.attention));
        case Dimension::Mode:
            return qstr(toString(c.mode));
        case Dimension::Exec:
            return qstr(toString(c.exec));
        case Dimension::Source:
            return qstr(toString(c.source));
        case Dimension::Warmup:
            return QString::number(c.warmup);
        case Dimension::Steps:
            return QString::number(c.steps);
        case Dimension::Device:
            return qstr(c.device);
    }
    return {};
}

QString dimensionLabel(Dimension d, const BenchConfig& c) {
    const QString v = dimensionValue(d, c);
    switch (d) {
        case Dimension::Context:
            return QStringLiteral("ctx ") + v;
        case Dimension::Batch:
            return QStringLiteral("bs ") + v;
        case Dimension::Warmup:
            return QStringLiteral("warm-up ") + v;
        case Dimension::Steps:
            return QStringLiteral("steps ") + v;
        case Dimension::Source:
            return c.source == Source::Python ? QStringLiteral("your code")
                                              : QStringLiteral("TrainScope");
        default:
            return v;
    }
}

double dimensionNumber(Dimension d, const BenchConfig& c) {
    switch (d) {
        case Dimension::Size:
            return static_cast<double>(parameterCount(c.model));
        case Dimension::Context:
            return static_cast<double>(c.model.context_length);
        case Dimension::Batch:
            return static_cast<double>(c.batch_size);
        case Dimension::Precision:
            return static_cast<double>(c.precision);
        case Dimension::Attention:
            return static_cast<double>(c.attention);
        case Dimension::Mode:
            return static_cast<double>(c.mode);
        case Dimension::Exec:
            return static_cast<double>(c.exec);
        case Dimension::Source:
            return static_cast<double>(c.source);
        case Dimension::Warmup:
            return c.warmup;
        case Dimension::Steps:
            return c.steps;
        case Dimension::Device:
            return 0;
    }
    return 0;
}

bool isNumericDimension(Dimension d) {
    return d == Dimension::Size || d == Dimension::Context || d == Dimension::Batch ||
           d == Dimension::Warmup || d == Dimension::Steps;
}

QStringList dimensionValues(const std::vector<BenchConfig>& points, Dimension d) {
    QStringList values;
    for (const auto& p : points) {
        const QString v = dimensionValue(d, p);
        if (!values.contains(v)) values << v;
    }
    return values;
}

std::vector<Dimension> varyingDimensions(const std::vector<BenchConfig>& points) {
    std::vector<Dimension> out;
    for (Dimension d : allDimensions())
        if (dimensionValues(points, d).size() > 1) out.push_back(d);
    return out;
}

QString pointKey(const BenchConfig& c, const std::vector<Dimension>& except) {
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

QString labelOver(const BenchConfig& c, const std::vector<Dimension>& dims) {
    if (dims.empty()) return QStringLiteral("all");
    QStringList parts;
    for (Dimension d : dims) parts << dimensionLabel(d, c);
    return parts.join(QStringLiteral(" · "));
}

}  // namespace ts::ui
