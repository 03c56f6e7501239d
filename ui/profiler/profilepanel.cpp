#include "ui/profiler/profilepanel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "profiler/profiler.h"
#include "profiler/profiler_json.h"
#include "ui/common/codechoice.h"
#include "ui/common/format.h"
#include "ui/common/metatypes.h"
#include "ui/common/pointformat.h"
#include "ui/profiler/profileanalysis.h"

namespace ts::ui {

namespace {
// The model's attention backends (the forced SDPA ones belong to the attention lab).
const QList<AttentionImpl> kAttentions = {AttentionImpl::Naive, AttentionImpl::Sdpa,
                                          AttentionImpl::Tiled, AttentionImpl::Flash};

// The engine's profile observer as the job's items: every step (progress), then the profile
// with its tables, computed here in the worker so that the UI thread only shows them.
class ProfileForwarder final : public ProfileObserver {
public:
    ProfileForwarder(JobObserver& out, int total) : out_(out), total_(total) {}
    void stepFinished(const StepSample& s) override {
        out_.item(QVariant::fromValue(s));
        out_.log(LogLevel::Info,
                 QObject::tr("step %1/%2%3: %4 ms")
                     .arg(s.index + 1)
                     .arg(total_)
                     .arg(s.warmup ? QObject::tr(" (warm-up)") : QObject::tr(" (profiled)"))
                     .arg(formatMs(s.total_ms))
                     .toStdString());
    }
    void profileCollected() override {
        out_.log(LogLevel::Info, "reading the profiler's events...");
    }
    void progress(double fraction, double eta) override { out_.progress(fraction, eta); }
    void log(LogLevel level, const std::string& message) override { out_.log(level, message); }

private:
    JobObserver& out_;
    int total_;
};

QSpinBox* spinBox(QWidget* parent, int lo, int hi, int value, const QString& tip) {
    auto* s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setValue(value);
    s->setToolTip(tip);
    s->setAccelerated(true);
    return s;
}

template <typename T>
void fillCombo(QComboBox* c, const QList<T>& values) {
    for (T v : values) c->addItem(qstr(toString(v)), qstr(toString(v)));
}
}  // namespace

ProfilePanel::ProfilePanel(QWidget* parent) : LabPanel(parent) {
    qRegisterMetaType<StepSample>();
    qRegisterMetaType<ProfileAnalysis>();
    build();
    revalidate();
}

void ProfilePanel::build() {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    auto* top = new QFormLayout;
    label_ = new QLineEdit(this);
    label_->setPlaceholderText(tr("optional; shown in the history"));
    top->addRow(tr("&Label:"), label_);
    outer->addLayout(top);
    code_ = new CodeChoice(/*both=*/false, this);
    outer->addWidget(code_);

    auto* modelBox = new QGroupBox(tr("The point to profile"), this);
    auto* form = new QFormLayout(modelBox);
    size_ = new QComboBox(modelBox);
    for (const auto& name : modelPresetNames()) {
        size_->addItem(presetLabel(name), qstr(name));
        size_->setItemData(size_->count() - 1, presetTooltip(name), Qt::ToolTipRole);
    }
    size_->addItem(tr("custom (dimensions below)"), QStringLiteral("custom"));
    form->addRow(tr("&Model size:"), size_);
    customBox_ = new QGroupBox(tr("Custom dimensions"), modelBox);
    customBox_->setObjectName(
        QStringLiteral("customDimensions"));  // as the benchmark's panel names it
    auto* customForm = new QFormLayout(customBox_);
    vocab_ = spinBox(customBox_, 1, 1'000'000, 10000, tr("vocabulary size"));
    dModel_ = spinBox(customBox_, 1, 65536, 768, tr("model width"));
    dFf_ = spinBox(customBox_, 1, 262144, 3072, tr("feed-forward width"));
    layers_ = spinBox(customBox_, 1, 1000, 12, tr("Transformer blocks"));
    heads_ = spinBox(customBox_, 1, 1024, 12, tr("attention heads; d_model must divide by them"));
    customForm->addRow(tr("Vocabulary:"), vocab_);
    customForm->addRow(tr("d_model:"), dModel_);
    customForm->addRow(tr("d_ff:"), dFf_);
    customForm->addRow(tr("Layers:"), layers_);
    customForm->addRow(tr("Heads:"), heads_);
    form->addRow(customBox_);
    context_ = spinBox(modelBox, 1, 1'000'000, 128, tr("tokens per sequence"));
    batch_ = spinBox(modelBox, 1, 1'000'000, 4, tr("sequences per step"));
    mode_ = new QComboBox(modelBox);
    fillCombo(mode_, QList<Mode>(allModes().begin(), allModes().end()));
    precision_ = new QComboBox(modelBox);
    fillCombo(precision_, QList<Precision>(allPrecisions().begin(), allPrecisions().end()));
    attention_ = new QComboBox(modelBox);
    fillCombo(attention_, kAttentions);
    form->addRow(tr("&Context length:"), context_);
    form->addRow(tr("&Batch size:"), batch_);
    form->addRow(tr("M&ode:"), mode_);
    form->addRow(tr("&Precision:"), precision_);
    form->addRow(tr("&Attention:"), attention_);
    outer->addWidget(modelBox);

    auto* runBox = new QGroupBox(tr("Profiling"), this);
    auto* rform = new QFormLayout(runBox);
    makeDeviceCombo(runBox);
    warmup_ = spinBox(runBox, 0, kMaxSteps, 2,
                      tr("steps run first, not profiled: the first steps are slow"));
    steps_ = spinBox(runBox, 1, kMaxProfileSteps, 2, tr("steps run under the profiler"));
    rform->addRow(tr("&Device:"), device_);
    rform->addRow(tr("&Warm-up steps:"), warmup_);
    rform->addRow(tr("Profiled s&teps:"), steps_);
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);

    registerFields({{QStringLiteral("size"), size_},
                    {QStringLiteral("vocab"), vocab_},
                    {QStringLiteral("d_model"), dModel_},
                    {QStringLiteral("d_ff"), dFf_},
                    {QStringLiteral("layers"), layers_},
                    {QStringLiteral("heads"), heads_},
                    {QStringLiteral("context"), context_},
                    {QStringLiteral("batch"), batch_},
                    {QStringLiteral("mode"), mode_},
                    {QStringLiteral("precision"), precision_},
                    {QStringLiteral("attention"), attention_},
                    {QStringLiteral("device"), device_},
                    {QStringLiteral("warmup"), warmup_},
                    {QStringLiteral("profile_steps"), steps_},
                    {QStringLiteral("sources"), code_->sourceBox()},
                    {QStringLiteral("code"), code_->codeEdit()},
                    {QStringLiteral("python"), code_->pythonEdit()}});
    size_->setCurrentIndex(std::max(0, size_->findData(QStringLiteral("tiny"))));
    mode_->setCurrentIndex(mode_->findData(qstr(toString(Mode::Train))));

    auto changed = [this] {
        if (updating_) return;
        updateAvailability();
        revalidate();
    };
    connect(label_, &QLineEdit::textChanged, this, changed);
    connect(code_, &CodeChoice::changed, this, changed);
    for (QComboBox* c : {size_, mode_, precision_, attention_, device_})
        connect(c, &QComboBox::currentIndexChanged, this, changed);
    for (QSpinBox* s : {vocab_, dModel_, dFf_, layers_, heads_, context_, batch_, warmup_, steps_})
        connect(s, &QSpinBox::valueChanged, this, changed);
    installRunShortcut();
    setLabelField(label_);
    updateAvailability();
}

void ProfilePanel::updateAvailability() {
    // Each precision and backend is probed on the chosen device with a tiny point, so that
    // the reason is about the option, not the sizes (as the benchmark's panel does).
    const bool was = updating_;
    updating_ = true;
    PointConfig probe;
    if (auto tiny = modelPreset("tiny")) probe.model = *tiny;
    probe.model.context_length = 64;
    probe.batch_size = 1;
    probe.warmup = 0;
    probe.steps = 1;
    probe.device = device_->currentData().toString().toStdString();
    auto reasonFor = [&](const PointConfig& c) -> QString {
        if (!capsKnown_) return tr("Checking what this machine can run…");
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
            i, why.isEmpty() ? tr("autocast to %1").arg(precision_->itemText(i)) : why,
            Qt::ToolTipRole);
    }
    auto* am = qobject_cast<QStandardItemModel*>(attention_->model());
    for (int i = 0; i < attention_->count(); ++i) {
        PointConfig c = probe;
        c.attention = *parseAttentionImpl(attention_->itemData(i).toString().toStdString());
        if (c.attention == AttentionImpl::Flash) c.precision = Precision::BF16;
        const QString why = c.attention == AttentionImpl::Naive ? QString() : reasonFor(c);
        if (am) am->item(i)->setEnabled(why.isEmpty());
        attention_->setItemData(i,
                                why.isEmpty()
                                    ? attentionHint(c.attention)
                                    : attentionHint(c.attention) + QLatin1Char('\n') + why,
                                Qt::ToolTipRole);
    }
    updating_ = was;
}

QWidget* ProfilePanel::fieldForMessage(const QString& m) const {
    // The engine names the bad value in each message.
    if (m.startsWith(QLatin1String("device '"))) return device_;
    if (QWidget* w = code_->fieldFor(m)) return w;
    if (m.contains(QLatin1String("attention '")) || m.contains(QLatin1String("flash")))
        return attention_;
    if (m.contains(QLatin1String("bf16")) || m.contains(QLatin1String("fp16"))) return precision_;
    if (m.startsWith(QLatin1String("profile steps"))) return steps_;
    const QList<QPair<QString, QWidget*>> keys = {
        {QStringLiteral("vocab_size"), vocab_},  {QStringLiteral("context_length"), context_},
        {QStringLiteral("d_model"), dModel_},    {QStringLiteral("head dimension"), heads_},
        {QStringLiteral("num_heads"), heads_},   {QStringLiteral("d_ff"), dFf_},
        {QStringLiteral("num_layers"), layers_}, {QStringLiteral("batch_size"), batch_},
        {QStringLiteral("warmup"), warmup_},     {QStringLiteral("device"), device_}};
    for (const auto& [key, w] : keys)
        if (m.contains(key)) return w;
    return nullptr;
}

void ProfilePanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    ProfileSpec s;
    const QString size = size_->currentData().toString();
    const bool custom = size == QLatin1String("custom");
    customBox_->setEnabled(custom);
    if (custom) {
        s.bench.model.name = "custom";
        s.bench.model.vocab_size = vocab_->value();
        s.bench.model.d_model = dModel_->value();
        s.bench.model.d_ff = dFf_->value();
        s.bench.model.num_layers = layers_->value();
        s.bench.model.num_heads = heads_->value();
    } else if (auto m = modelPreset(size.toStdString())) {
        s.bench.model = *m;
    }
    s.bench.model.context_length = context_->value();
    s.bench.batch_size = batch_->value();
    s.bench.warmup = warmup_->value();
    s.bench.steps = 1;
    s.bench.mode = parseMode(mode_->currentData().toString().toStdString()).value_or(Mode::Train);
    s.bench.precision = parsePrecision(precision_->currentData().toString().toStdString())
                            .value_or(Precision::FP32);
    s.bench.attention = parseAttentionImpl(attention_->currentData().toString().toStdString())
                            .value_or(AttentionImpl::Naive);
    s.bench.device = device_->currentData().toString().toStdString();
    s.profile_steps = steps_->value();
    const std::vector<Source> sources = code_->sources();
    s.bench.source = sources.empty() ? Source::TrainScope : sources.front();
    s.bench.python = code_->code();
    // The user's model has its own attention: the field does not apply to it.
    attention_->setEnabled(s.bench.source == Source::TrainScope);
    auto add = [&](const std::string& m) {
        QString msg = qstr(m);
        QWidget* w = fieldForMessage(msg);
        if (!msg.isEmpty()) msg[0] = msg[0].toUpper();
        if (!w) {
            if (!general.contains(msg)) general << msg;
        } else if (!byField[w].contains(msg)) {
            byField[w] << msg;
        }
    };
    for (const auto& m : validateProfile(s)) add(m);
    if (capsKnown_)
        for (const auto& m : checkPointRunnable(s.bench)) add(m);
    if (const QString m = code_->problem(); !m.isEmpty()) add(m.toStdString());
    spec_ = s;
    showProblems(byField, general);
    Q_EMIT changed();
}

QString ProfilePanel::summary() const {
    if (!problems_.isEmpty())
        return tr("%n problem(s) to fix before Run", "", static_cast<int>(problems_.size()));
    // The point without its warm-up and steps: the profiler's own count says them.
    return tr("Profile %1: %n profiled step(s) after %2 warm-up", "", spec_.profile_steps)
        .arg(describeConfig(spec_.bench, {Dimension::Warmup, Dimension::Steps}))
        .arg(spec_.bench.warmup);
}

std::optional<LabJob> ProfilePanel::makeJob() const {
    if (!problems_.isEmpty() || !capsKnown_) return std::nullopt;
    // The job profiles in a worker thread: Kineto starts here, on the UI thread, first.
    // See Note [Kineto's first thread].
    prepareProfilerOnThisThread();
    LabJob job;
    job.lab = QString::fromLatin1(kProfileLab);
    job.label = label_->text().trimmed();
    job.point_count = 1;
    job.device = spec_.bench.device;
    job.spec_json = profileSpecJson(spec_);
    const std::string device = job.device;
    job.environment = [device] { return currentEnvironment(device); };
    job.run = [spec = spec_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                             int64_t runId) {
        ProfileForwarder forward(obs, spec.bench.warmup + spec.profile_steps);
        ProfileResult r = runProfile(spec, forward, cancel, store, runId);
        obs.log(LogLevel::Info, "analysing " + std::to_string(r.trace.kernels.size()) +
                                    " kernels and " + std::to_string(r.trace.ops.size()) +
                                    " ops...");
        obs.item(QVariant::fromValue(analyzeProfile(std::move(r))));
    };
    return job;
}

QJsonObject ProfilePanel::state() const {
    QJsonObject o;
    o[QStringLiteral("label")] = label_->text();
    o[QStringLiteral("size")] = size_->currentData().toString();
    o[QStringLiteral("custom")] = QJsonObject{{QStringLiteral("vocab"), vocab_->value()},
                                              {QStringLiteral("d_model"), dModel_->value()},
                                              {QStringLiteral("d_ff"), dFf_->value()},
                                              {QStringLiteral("layers"), layers_->value()},
                                              {QStringLiteral("heads"), heads_->value()}};
    o[QStringLiteral("context")] = context_->value();
    o[QStringLiteral("batch")] = batch_->value();
    o[QStringLiteral("mode")] = mode_->currentData().toString();
    o[QStringLiteral("precision")] = precision_->currentData().toString();
    o[QStringLiteral("attention")] = attention_->currentData().toString();
    o[QStringLiteral("device")] = device_->currentData().toString();
    o[QStringLiteral("warmup")] = warmup_->value();
    o[QStringLiteral("profile_steps")] = steps_->value();
    const QJsonObject code = code_->state();
    for (auto it = code.begin(); it != code.end(); ++it) o[it.key()] = it.value();
    return o;
}

void ProfilePanel::setState(const QJsonObject& o, QStringList* notes) {
    updating_ = true;
    auto intOf = [&](const char* key, QSpinBox* s, const QJsonObject& from) {
        const QJsonValue v = from.value(QLatin1String(key));
        // A value from a string too ("128"): presets write either.
        if (v.isDouble())
            s->setValue(v.toInt(s->value()));
        else if (v.isString())
            s->setValue(v.toString().section(QLatin1Char(','), 0, 0).trimmed().toInt());
    };
    auto choose = [&](const char* key, QComboBox* c, const QString& what) {
        if (!o.contains(QLatin1String(key))) return;
        const QJsonValue v = o.value(QLatin1String(key));
        const QString want = v.isArray() ? stringsOf(v).value(0) : v.toString();
        const int i = c->findData(want);
        auto* model = qobject_cast<QStandardItemModel*>(c->model());
        if (i >= 0 && (!model || model->item(i)->isEnabled() || !capsKnown_))
            c->setCurrentIndex(i);
        else if (notes)
            *notes << tr("%1 '%2' is not available here; using %3")
                          .arg(what, want, c->currentData().toString());
    };
    if (o.contains(QLatin1String("label")))
        label_->setText(o.value(QLatin1String("label")).toString());
    if (o.contains(QLatin1String("size"))) {
        const QJsonValue v = o.value(QLatin1String("size"));
        const QString want = v.isArray() ? stringsOf(v).value(0) : v.toString();
        const int i = size_->findData(want);
        if (i >= 0)
            size_->setCurrentIndex(i);
        else if (notes)
            *notes << tr("model size '%1' is unknown; using %2")
                          .arg(want, size_->currentData().toString());
    }
    const QJsonObject custom = o.value(QLatin1String("custom")).toObject();
    intOf("vocab", vocab_, custom);
    intOf("d_model", dModel_, custom);
    intOf("d_ff", dFf_, custom);
    intOf("layers", layers_, custom);
    intOf("heads", heads_, custom);
    intOf("context", context_, o);
    intOf("batch", batch_, o);
    intOf("warmup", warmup_, o);
    intOf("profile_steps", steps_, o);
    code_->setState(o);  // states saved before the field: TrainScope's model
    choose("mode", mode_, tr("mode"));
    if (o.contains(QLatin1String("device"))) {
        const QString dev = o.value(QLatin1String("device")).toString();
        const int i = device_->findData(dev);
        auto* model = qobject_cast<QStandardItemModel*>(device_->model());
        if (i >= 0 && (!model || model->item(i)->isEnabled()))
            device_->setCurrentIndex(i);
        else if (capsKnown_ && notes)
            *notes << tr("device '%1' is not available here; using %2")
                          .arg(dev, device_->currentData().toString());
        else if (!capsKnown_ && i < 0) {
            device_->addItem(dev, dev);  // kept until the probe decides
            device_->setCurrentIndex(device_->count() - 1);
        }
    }
    updateAvailability();  // for the device chosen
    choose("precision", precision_, tr("precision"));
    choose("attention", attention_, tr("attention"));
    updating_ = false;
    revalidate();
}

// ---------------------------------------------------------------- stored specs

QString ProfilePanel::describeSpec(const QJsonObject& s) {
    const QJsonObject bench = s.value(QLatin1String("bench")).toObject();
    const QJsonObject model = bench.value(QLatin1String("model")).toObject();
    QStringList parts;
    const bool yours = bench.value(QLatin1String("source")).toString() == QLatin1String("python");
    parts << model.value(QLatin1String("name")).toString()
          << QStringLiteral("ctx %1").arg(model.value(QLatin1String("context_length")).toInteger())
          << QStringLiteral("bs %1").arg(bench.value(QLatin1String("batch_size")).toInteger())
          << bench.value(QLatin1String("precision")).toString();
    if (!yours)  // the user's model has its own attention
        parts << bench.value(QLatin1String("attention")).toString();
    parts << bench.value(QLatin1String("mode")).toString()
          << QObject::tr("warm-up %1").arg(bench.value(QLatin1String("warmup")).toInteger())
          << QObject::tr("%1 profiled").arg(s.value(QLatin1String("profile_steps")).toInteger())
          << bench.value(QLatin1String("device")).toString();
    if (yours)
        parts.prepend(
            QObject::tr("your code %1").arg(bench.value(QLatin1String("code")).toString()));
    return parts.join(QStringLiteral(" · "));
}

QJsonObject ProfilePanel::stateFromPoint(const QJsonObject& point) {
    return stateFromSpec(QJsonObject{{QStringLiteral("bench"), point}});
}

QJsonObject ProfilePanel::stateFromSpec(const QJsonObject& s) {
    const QJsonObject bench = s.value(QLatin1String("bench")).toObject();
    const QJsonObject model = bench.value(QLatin1String("model")).toObject();
    QJsonObject o;
    o[QStringLiteral("size")] = model.value(QLatin1String("name"));
    o[QStringLiteral("custom")] =
        QJsonObject{{QStringLiteral("vocab"), model.value(QLatin1String("vocab_size"))},
                    {QStringLiteral("d_model"), model.value(QLatin1String("d_model"))},
                    {QStringLiteral("d_ff"), model.value(QLatin1String("d_ff"))},
                    {QStringLiteral("layers"), model.value(QLatin1String("num_layers"))},
                    {QStringLiteral("heads"), model.value(QLatin1String("num_heads"))}};
    o[QStringLiteral("context")] = model.value(QLatin1String("context_length"));
    o[QStringLiteral("batch")] = bench.value(QLatin1String("batch_size"));
    o[QStringLiteral("mode")] = bench.value(QLatin1String("mode"));
    o[QStringLiteral("precision")] = bench.value(QLatin1String("precision"));
    o[QStringLiteral("attention")] = bench.value(QLatin1String("attention"));
    o[QStringLiteral("device")] = bench.value(QLatin1String("device"));
    o[QStringLiteral("warmup")] = bench.value(QLatin1String("warmup"));
    o[QStringLiteral("profile_steps")] = s.value(QLatin1String("profile_steps"));
    // Profiles stored before the field are of TrainScope's model.
    o[QStringLiteral("sources")] =
        QJsonArray{bench.value(QLatin1String("source")).toString(QStringLiteral("trainscope"))};
    o[QStringLiteral("code")] = bench.value(QLatin1String("code")).toString();
    o[QStringLiteral("python")] = bench.value(QLatin1String("python")).toString();
    return o;
}

}  // namespace ts::ui
