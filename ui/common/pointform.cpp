#include "ui/common/pointform.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QSpinBox>
#include <QStandardItemModel>

#include "ui/common/dimensionfields.h"
#include "ui/common/format.h"

namespace ts::ui {

void CustomModelFields::applyTo(ModelConfig& m) const {
    m.name = "custom";
    m.vocab_size = vocab->value();
    m.d_model = dModel->value();
    m.d_ff = dFf->value();
    m.num_layers = layers->value();
    m.num_heads = heads->value();
}

QWidget* CustomModelFields::fieldFor(const QString& m) const {
    const QList<QPair<QString, QWidget*>> keys = {{QStringLiteral("vocab_size"), vocab},
                                                  {QStringLiteral("d_model"), dModel},
                                                  {QStringLiteral("head dimension"), heads},
                                                  {QStringLiteral("num_heads"), heads},
                                                  {QStringLiteral("d_ff"), dFf},
                                                  {QStringLiteral("num_layers"), layers}};
    for (const auto& [key, w] : keys)
        if (m.contains(key)) return w;
    return nullptr;
}

CustomModelFields PointForm::addCustomModel(LabPanel* panel, QWidget* parent) {
    CustomModelFields f;
    f.box = new QGroupBox(LabPanel::tr("Custom dimensions"), parent);
    f.box->setObjectName(QStringLiteral("customDimensions"));
    auto* form = new QFormLayout(f.box);
    f.vocab = panel->addSpin(form, QStringLiteral("custom/vocab"), LabPanel::tr("Vocabulary:"), 1,
                             1'000'000, 10000, LabPanel::tr("vocabulary size"));
    f.dModel = panel->addSpin(form, QStringLiteral("custom/d_model"), LabPanel::tr("d_model:"), 1,
                              65536, 768, LabPanel::tr("model width"));
    f.dFf = panel->addSpin(form, QStringLiteral("custom/d_ff"), LabPanel::tr("d_ff:"), 1, 262144,
                           3072, LabPanel::tr("feed-forward width"));
    f.layers = panel->addSpin(form, QStringLiteral("custom/layers"), LabPanel::tr("Layers:"), 1,
                              1000, 12, LabPanel::tr("Transformer blocks"));
    f.heads = panel->addSpin(form, QStringLiteral("custom/heads"), LabPanel::tr("Heads:"), 1, 1024,
                             12, LabPanel::tr("attention heads; d_model must divide by them"));
    return f;
}

PointForm::PointForm(LabPanel* panel, QFormLayout* form, const Options& options)
    : panel_(panel), options_(options) {
    QList<LabPanel::Choice> sizes;
    for (const auto& name : modelPresetNames())
        sizes.push_back({presetLabel(name), qstr(name), presetTooltip(name)});
    if (options.custom)
        sizes.push_back({LabPanel::tr("custom (dimensions below)"), QStringLiteral("custom"), {}});
    size_ = panel->addCombo(form, QStringLiteral("size"), LabPanel::tr("&Model size:"), sizes,
                            QStringLiteral("tiny"));
    if (options.custom) {
        custom_ = addCustomModel(panel, form->parentWidget());
        form->addRow(custom_.box);
    }
    context_ = panel->addSpin(form, QStringLiteral("context"), LabPanel::tr("&Context length:"), 1,
                              1 << 20, 128, LabPanel::tr("tokens per sequence"));
    batch_ = panel->addSpin(form, QStringLiteral("batch"), LabPanel::tr("&Batch size:"), 1,
                            1'000'000, 4, LabPanel::tr("sequences per step"));
    mode_ = panel->addCombo(form, QStringLiteral("mode"), LabPanel::tr("M&ode:"),
                            LabPanel::choicesOf(allModes()), qstr(toString(Mode::Train)));
    precision_ = panel->addCombo(form, QStringLiteral("precision"), LabPanel::tr("&Precision:"),
                                 LabPanel::choicesOf(allPrecisions()), QStringLiteral("fp32"));
    attention_ = panel->addCombo(form, QStringLiteral("attention"), LabPanel::tr("&Attention:"),
                                 LabPanel::choicesOf(options.attentions), QStringLiteral("naive"));
    // What the device allows is known once the device is read back.
    for (auto& f : panel->registry_)
        if (f.widget == precision_ || f.widget == attention_) f.late = true;
    if (options.dimensions) {
        dims_ = std::make_unique<DimensionFields>(panel, form, /*lists=*/false);
        panel->addDimensions(*dims_);
    }
}

PointForm::~PointForm() = default;

PointConfig PointForm::point(QHash<QWidget*, QStringList>& problems) const {
    PointConfig c;
    const QString size = size_->currentData().toString();
    const bool custom = size == QLatin1String("custom");
    if (custom_.box) custom_.box->setEnabled(custom);
    if (custom)
        custom_.applyTo(c.model);
    else if (auto m = modelPreset(size.toStdString()))
        c.model = *m;
    c.model.context_length = context_->value();
    c.batch_size = batch_->value();
    c.mode = parseMode(mode_->currentData().toString().toStdString()).value_or(Mode::Train);
    c.precision = parsePrecision(precision_->currentData().toString().toStdString())
                      .value_or(Precision::FP32);
    c.attention = parseAttentionImpl(attention_->currentData().toString().toStdString())
                      .value_or(AttentionImpl::Naive);
    c.device = panel_->device_->currentData().toString().toStdString();
    if (c.device.empty()) c.device = "cpu";
    if (dims_)
        for (const auto& [dim, values] : dims_->values(problems))
            if (!values.empty()) dimensionDef(dim).set(c, values.front());
    return c;
}

QWidget* PointForm::fieldFor(const QString& m) const {
    if (m.startsWith(QLatin1String("device '"))) return panel_->device_;
    if (dims_)
        if (QWidget* w = dims_->fieldFor(m)) return w;
    if (m.contains(QLatin1String("attention '")) || m.contains(QLatin1String("flash")))
        return attention_;
    if (m.contains(QLatin1String("bf16")) || m.contains(QLatin1String("fp16"))) return precision_;
    if (m.contains(QLatin1String("vocab_size")) && custom_.box) return custom_.vocab;
    if (m.contains(QLatin1String("context_length"))) return context_;
    if (custom_.box)
        if (QWidget* w = custom_.fieldFor(m)) return w;
    if (m.contains(QLatin1String("batch_size"))) return batch_;
    return nullptr;
}

void PointForm::updateAvailability() {
    if (!options_.probe) return;
    PointConfig probe;
    if (auto tiny = modelPreset("tiny")) probe.model = *tiny;
    probe.model.context_length = 64;
    probe.batch_size = 1;
    probe.warmup = 0;
    probe.steps = 1;
    probe.device = panel_->device_->currentData().toString().toStdString();
    auto reasonFor = [&](const PointConfig& c) -> QString {
        if (!panel_->capsKnown_) return LabPanel::tr("Checking what this machine can run…");
        QStringList msgs;
        for (const auto& m : checkPointRunnable(c)) msgs << qstr(m);
        return msgs.join(QLatin1Char('\n'));
    };
    auto* pm = qobject_cast<QStandardItemModel*>(precision_->model());
    for (int i = 0; i < precision_->count(); ++i) {
        PointConfig c = probe;
        c.precision = *parsePrecision(precision_->itemData(i).toString().toStdString());
        const QString why = c.precision == Precision::FP32 ? QString() : reasonFor(c);
        if (pm) pm->item(i)->setEnabled(why.isEmpty());
        precision_->setItemData(
            i, why.isEmpty() ? LabPanel::tr("autocast to %1").arg(precision_->itemText(i)) : why,
            Qt::ToolTipRole);
    }
    auto* am = qobject_cast<QStandardItemModel*>(attention_->model());
    for (int i = 0; i < attention_->count(); ++i) {
        PointConfig c = probe;
        c.attention = *parseAttentionImpl(attention_->itemData(i).toString().toStdString());
        // The flash kernels run in half precision only; probe them as they would be used.
        if (c.attention == AttentionImpl::Flash) c.precision = Precision::BF16;
        const QString why = c.attention == AttentionImpl::Naive ? QString() : reasonFor(c);
        if (am) am->item(i)->setEnabled(why.isEmpty());
        attention_->setItemData(i,
                                why.isEmpty()
                                    ? attentionHint(c.attention)
                                    : attentionHint(c.attention) + QLatin1Char('\n') + why,
                                Qt::ToolTipRole);
    }
}

QJsonObject PointForm::stateFromPoint(const QJsonObject& point, bool dimensions) {
    const QJsonObject model = point.value(QLatin1String("model")).toObject();
    QJsonObject o;
    o[QStringLiteral("size")] = model.value(QLatin1String("name"));
    o[QStringLiteral("custom")] =
        QJsonObject{{QStringLiteral("vocab"), model.value(QLatin1String("vocab_size"))},
                    {QStringLiteral("d_model"), model.value(QLatin1String("d_model"))},
                    {QStringLiteral("d_ff"), model.value(QLatin1String("d_ff"))},
                    {QStringLiteral("layers"), model.value(QLatin1String("num_layers"))},
                    {QStringLiteral("heads"), model.value(QLatin1String("num_heads"))}};
    o[QStringLiteral("context")] = model.value(QLatin1String("context_length"));
    o[QStringLiteral("batch")] = point.value(QLatin1String("batch_size"));
    for (const char* k : {"mode", "precision", "attention", "device", "warmup"})
        o[QLatin1String(k)] = point.value(QLatin1String(k));
    // Points stored before the field are of TrainScope's model.
    o[QStringLiteral("sources")] =
        QJsonArray{point.value(QLatin1String("source")).toString(QStringLiteral("trainscope"))};
    o[QStringLiteral("code")] = point.value(QLatin1String("code")).toString();
    o[QStringLiteral("python")] = point.value(QLatin1String("python")).toString();
    if (dimensions) DimensionFields::stateFromSpec({}, point, o);
    return o;
}

}  // namespace ts::ui
