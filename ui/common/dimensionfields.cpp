#include "ui/common/dimensionfields.h"

#include <QFormLayout>
#include <QJsonValue>
#include <QLineEdit>
#include <algorithm>
#include <iterator>

#include "ui/common/dimensions.h"
#include "ui/common/format.h"

namespace ts::ui {

namespace {
QStringList valuesOf(const DimensionDef& d, const QJsonObject& lists, const QJsonObject& point) {
    return jsonListText(lists.value(qstr(d.list_key)), point.value(qstr(d.json_key)));
}
}  // namespace

std::vector<const DimensionDef*> DimensionFields::shown() {
    // The dimensions a point's panel has fields of its own for (a spin box, a combo, the code's
    // choice, the device list); every other one is a line here.
    static const Dimension own[] = {Dimension::Size,      Dimension::Context,   Dimension::Batch,
                                    Dimension::Precision, Dimension::Attention, Dimension::Mode,
                                    Dimension::Exec,      Dimension::Source,    Dimension::Warmup,
                                    Dimension::Steps,     Dimension::Device};
    std::vector<const DimensionDef*> out;
    for (const auto& d : pointDimensions())
        if (!d.list_key.empty() && !d.json_key.empty() &&
            std::find(std::begin(own), std::end(own), d.id()) == std::end(own))
            out.push_back(&d);
    return out;
}

DimensionFields::DimensionFields(QWidget* parent, QFormLayout* form, bool lists) : lists_(lists) {
    for (const DimensionDef* d : shown()) {
        auto* edit = new QLineEdit(qstr(d->get(PointConfig{})), parent);
        QString tip = qstr(d->help);
        if (d->kind == DimensionDef::Kind::Choice) {
            QStringList choices;
            for (const auto& c : d->choices()) choices << qstr(c);
            tip += QStringLiteral(": ") + choices.join(QStringLiteral(" | "));
        }
        edit->setToolTip(tip + (lists ? QObject::tr("; a comma list sweeps over it") : QString()));
        QString name = qstr(d->name);
        name[0] = name[0].toUpper();
        form->addRow(name + QLatin1Char(':'), edit);
        edits_[d->id()] = edit;
    }
}

std::map<Dimension, std::vector<std::string>> DimensionFields::values(
    QHash<QWidget*, QStringList>& problems) const {
    std::map<Dimension, std::vector<std::string>> out;
    for (const auto& [dim, edit] : edits_) {
        const DimensionDef& d = dimensionDef(dim);
        const QString name = dimensionName(dim);
        const QStringList items = edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts);
        auto& values = out[dim];
        for (const QString& item : items) {
            try {
                values.push_back(parseValue(d, item.trimmed().toStdString()));
            } catch (const std::invalid_argument& e) {
                problems[edit] << QObject::tr("%1: %2").arg(name, qstr(std::string(e.what())));
            }
        }
        if (items.isEmpty())
            problems[edit] << QObject::tr("%1: give a value (%2 by default)")
                                  .arg(name, qstr(d.get(PointConfig{})));
        else if (!lists_ && items.size() > 1)
            problems[edit]
                << QObject::tr("%1: one value here (the benchmark sweeps a list)").arg(name);
    }
    return out;
}

QWidget* DimensionFields::fieldFor(const QString& message) const {
    for (const auto& [dim, edit] : edits_)
        if (message.contains(dimensionKey(dim))) return edit;
    return nullptr;
}

void DimensionFields::stateFromSpec(const QJsonObject& lists, const QJsonObject& point,
                                    QJsonObject& state) {
    for (const DimensionDef* d : shown()) {
        const QStringList values = valuesOf(*d, lists, point);
        state[qstr(d->key)] =
            values.isEmpty() ? qstr(d->get(PointConfig{})) : values.join(QStringLiteral(", "));
    }
}

QStringList DimensionFields::describe(const QJsonObject& lists, const QJsonObject& point) {
    QStringList parts;
    for (const DimensionDef* d : shown()) {
        const QStringList values = valuesOf(*d, lists, point);
        if (!values.isEmpty() && values != QStringList{qstr(d->get(PointConfig{}))})
            parts << qstr(d->name) + QLatin1Char(' ') + values.join(QStringLiteral(", "));
    }
    return parts;
}

}  // namespace ts::ui
