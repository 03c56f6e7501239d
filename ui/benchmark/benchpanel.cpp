#include "ui/benchmark/benchpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QRegularExpression>
#include <QShortcut>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStyle>
#include <QVBoxLayout>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark.h"
#include "core/json.h"
#include "ui/benchmark/benchitems.h"
#include "ui/common/checkrow.h"
#include "ui/common/codechoice.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/common/pointformat.h"

namespace ts::ui {

namespace {
constexpr int kMaxPoints = 1000;

// The execution modes of the first row; the second row holds torch.compile's other modes,
// which only the user's Python code runs.
const QList<ExecMode> kStepModes = {ExecMode::Eager, ExecMode::Compiled};
const QList<ExecMode> kTorchCompileModes = {ExecMode::ReduceOverhead,
                                            ExecMode::MaxAutotuneNoCudagraphs};

// The model's attention backends this panel offers; the forced SDPA backends belong to the
// attention lab, which compares them.
const QList<AttentionImpl> kAttentions = {AttentionImpl::Naive, AttentionImpl::Sdpa,
                                          AttentionImpl::Tiled, AttentionImpl::Flash};

// The engine names values as the CLI's JSON does ("context_length must be positive"); the
// panel says them as its own labels do ("Context length must be positive").
QString inPanelWords(QString m) {
    static const QList<QPair<QRegularExpression, QString>> words = {
        {QRegularExpression(QStringLiteral("\\bvocab_size\\b")), QObject::tr("vocabulary size")},
        {QRegularExpression(QStringLiteral("\\bcontext_length\\b")), QObject::tr("context length")},
        {QRegularExpression(QStringLiteral("\\bnum_heads\\b")), QObject::tr("heads")},
        {QRegularExpression(QStringLiteral("\\bnum_layers\\b")), QObject::tr("layers")},
        {QRegularExpression(QStringLiteral("\\bbatch_size\\b")), QObject::tr("batch size")},
        {QRegularExpression(QStringLiteral("\\blearning_rate\\b")), QObject::tr("learning rate")},
        {QRegularExpression(QStringLiteral("^warmup\\b")), QObject::tr("warm-up steps")},
        {QRegularExpression(QStringLiteral("^steps\\b")), QObject::tr("measured steps")}};
    for (const auto& [re, word] : words) m.replace(re, word);
    if (!m.isEmpty()) m[0] = m[0].toUpper();
    return m;
}

QJsonArray toArray(const QStringList& l) { return QJsonArray::fromStringList(l); }
}  // namespace

BenchPanel::BenchPanel(QWidget* parent) : LabPanel(parent) {
    build();
    revalidate();
}

void BenchPanel::build() {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);

    auto* runBox = new QFormLayout;
    label_ = new QLineEdit(this);
    label_->setPlaceholderText(tr("optional; shown in the history"));
    runBox->addRow(tr("&Label:"), label_);
    outer->addLayout(runBox);
    // What Run will do, and what blocks it, at the top where it is always seen.

    code_ = new CodeChoice(/*both=*/true, this);
    outer->addWidget(code_);

    // Model: presets (several = a size sweep) and custom dimensions.
    auto* modelBox = new QGroupBox(tr("Model"), this);
    auto* modelLayout = new QVBoxLayout(modelBox);
    sizes_ = new QListWidget(modelBox);
    sizes_->setObjectName(QStringLiteral("sizes"));
    for (const auto& name : modelPresetNames()) {
        auto m = modelPreset(name);
        auto* item = new QListWidgetItem(presetLabel(name), sizes_);
        item->setToolTip(presetTooltip(name));
        item->setData(Qt::UserRole, qstr(name));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
    }
    auto* custom = new QListWidgetItem(tr("custom (dimensions below)"), sizes_);
    custom->setData(Qt::UserRole, QStringLiteral("custom"));
    custom->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    custom->setCheckState(Qt::Unchecked);
    sizes_->setToolTip(tr("Tick several sizes to sweep over them"));
    // Fixed: a list that could shrink would give way (and move every field below it) when the
    // problems under the panel grow; the dock scrolls instead.
    sizes_->setFixedHeight(sizes_->sizeHintForRow(0) * sizes_->count() + 2 * sizes_->frameWidth() +
                           4);
    modelLayout->addWidget(sizes_);
    customBox_ = new QGroupBox(tr("Custom dimensions"), modelBox);
    customBox_->setObjectName(QStringLiteral("customDimensions"));
    auto* customForm = new QFormLayout(customBox_);
    auto spin = [&](int lo, int hi, int value, const QString& tip) {
        auto* s = new QSpinBox(customBox_);
        s->setRange(lo, hi);
        s->setValue(value);
        s->setToolTip(tip);
        s->setAccelerated(true);
        return s;
    };
    vocab_ = spin(1, 1'000'000, 10000, tr("vocabulary size (all sizes use it)"));
    dModel_ = spin(1, 65536, 768, tr("model width"));
    dFf_ = spin(1, 262144, 3072, tr("feed-forward width"));
    layers_ = spin(1, 512, 12, tr("Transformer blocks"));
    heads_ = spin(1, 512, 12, tr("attention heads; d_model must divide by it"));
    customForm->addRow(tr("Vocabulary:"), vocab_);
    customForm->addRow(tr("d_model:"), dModel_);
    customForm->addRow(tr("d_ff:"), dFf_);
    customForm->addRow(tr("Layers:"), layers_);
    customForm->addRow(tr("Heads:"), heads_);
    modelLayout->addWidget(customBox_);
    outer->addWidget(modelBox);

    auto* workBox = new QGroupBox(tr("Workload"), this);
    auto* workForm = new QFormLayout(workBox);
    context_ = new QLineEdit(workBox);
    context_->setToolTip(tr("Context length; a list (128, 256, 512) sweeps over it"));
    batch_ = new QLineEdit(workBox);
    batch_->setToolTip(tr("Batch size; a list sweeps over it"));
    workForm->addRow(tr("&Context length:"), context_);
    workForm->addRow(tr("&Batch size:"), batch_);
    modeBox_ = makeCheckRow(workBox, allModes(), modes_);
    modes_[Mode::Forward]->setToolTip(tr("forward pass only"));
    modes_[Mode::ForwardBackward]->setToolTip(tr("forward and backward"));
    modes_[Mode::Train]->setToolTip(tr("forward, backward and an AdamW step"));
    workForm->addRow(tr("Mode:"), modeBox_);
    outer->addWidget(workBox);

    auto* numBox = new QGroupBox(tr("Precision and attention"), this);
    auto* numForm = new QFormLayout(numBox);
    precisionBox_ = makeCheckRow(numBox, allPrecisions(), precisions_);
    attentionBox_ = makeCheckRow(numBox, kAttentions, attentions_);
    for (AttentionImpl a : kAttentions) attentions_[a]->setToolTip(attentionHint(a));
    numForm->addRow(tr("Precision:"), precisionBox_);
    numForm->addRow(tr("Attention:"), attentionBox_);
    outer->addWidget(numBox);

    auto* execBox = new QGroupBox(tr("Execution"), this);
    auto* execForm = new QFormLayout(execBox);
    makeDeviceCombo(execBox);
    strategy_ = new QComboBox(execBox);
    strategy_->addItem(tr("single device"), QStringLiteral("single"));
    for (const char* s : {"naive", "flat", "overlapped", "bucketed"})
        strategy_->addItem(tr("DDP — %1").arg(QLatin1String(s)),
                           QStringLiteral("ddp-") + QLatin1String(s));
    warmup_ = new QLineEdit(execBox);
    warmup_->setToolTip(tr(
        "Steps run and recorded but left out of the statistics; a list (0, 1, 5) sweeps over it"));
    steps_ = new QSpinBox(execBox);
    steps_->setRange(1, 1'000'000);
    steps_->setToolTip(tr("Steps measured after the warm-up"));
    // Eager and compiled (CUDA graphs): ticking both sweeps over them (the Speedup view then
    // compares them).
    execModeBox_ = makeCheckRow(execBox, kStepModes, execs_);
    compileModeBox_ = makeCheckRow(execBox, kTorchCompileModes, execs_);
    execs_[ExecMode::MaxAutotuneNoCudagraphs]->setText(tr("max-autotune (no graphs)"));
    for (ExecMode e : kTorchCompileModes)
        execs_[e]->setToolTip(
            tr("torch.compile(mode=\"%1\") of your code (Python only)").arg(qstr(toString(e))));
    execs_[ExecMode::Compiled]->setText(tr("compiled (CUDA graphs)"));
    execs_[ExecMode::Compiled]->setToolTip(
        tr("Forward, backward and AdamW captured once as CUDA graphs and replayed, over "
           "TrainScope's fused "
           "kernels (RMSNorm with the residual add, RoPE, SwiGLU, cross-entropy, AdamW keeping "
           "bf16 weight "
           "copies). Needs a CUDA GPU; fp16 training is refused."));
    execForm->addRow(tr("&Device:"), device_);
    execForm->addRow(tr("Step:"), execModeBox_);
    execForm->addRow(tr("torch.compile:"), compileModeBox_);
    execForm->addRow(tr("Parallel &strategy:"), strategy_);
    execForm->addRow(tr("&Warm-up steps:"), warmup_);
    execForm->addRow(tr("&Measured steps:"), steps_);
    dims_ = std::make_unique<DimensionFields>(execBox, execForm, /*lists=*/true);
    outer->addWidget(execBox);

    outer->addStretch();
    addStatusLabels(outer);  // last: when it grows, no field moves

    registerFields({{QStringLiteral("sizes"), sizes_},
                    {QStringLiteral("vocab"), vocab_},
                    {QStringLiteral("d_model"), dModel_},
                    {QStringLiteral("d_ff"), dFf_},
                    {QStringLiteral("layers"), layers_},
                    {QStringLiteral("heads"), heads_},
                    {QStringLiteral("context"), context_},
                    {QStringLiteral("batch"), batch_},
                    {QStringLiteral("modes"), modeBox_},
                    {QStringLiteral("precisions"), precisionBox_},
                    {QStringLiteral("attentions"), attentionBox_},
                    {QStringLiteral("execs"), execModeBox_},
                    {QStringLiteral("compile_modes"), compileModeBox_},
                    {QStringLiteral("sources"), code_->sourceBox()},
                    {QStringLiteral("code"), code_->codeEdit()},
                    {QStringLiteral("python"), code_->pythonEdit()},
                    {QStringLiteral("device"), device_},
                    {QStringLiteral("strategy"), strategy_},
                    {QStringLiteral("warmup"), warmup_},
                    {QStringLiteral("steps"), steps_},
                    {QStringLiteral("label"), label_}});
    for (const auto& [dim, edit] : dims_->edits())
        registerFields(QHash<QString, QWidget*>{{dimensionKey(dim), edit}});

    // Defaults: a run of seconds on any machine.
    for (int i = 0; i < sizes_->count(); ++i)
        if (sizes_->item(i)->data(Qt::UserRole).toString() == QLatin1String("tiny"))
            sizes_->item(i)->setCheckState(Qt::Checked);
    context_->setText(QStringLiteral("64"));
    batch_->setText(QStringLiteral("2"));
    warmup_->setText(QStringLiteral("2"));
    steps_->setValue(8);
    modes_[Mode::Train]->setChecked(true);
    precisions_[Precision::FP32]->setChecked(true);
    attentions_[AttentionImpl::Naive]->setChecked(true);
    execs_[ExecMode::Eager]->setChecked(true);

    auto changedSlot = [this] {
        if (updating_) return;
        updateAvailability();
        revalidate();
    };
    connect(sizes_, &QListWidget::itemChanged, this, changedSlot);
    for (QSpinBox* s : {vocab_, dModel_, dFf_, layers_, heads_, steps_})
        connect(s, &QSpinBox::valueChanged, this, changedSlot);
    for (QLineEdit* e : {label_, context_, batch_, warmup_})
        connect(e, &QLineEdit::textChanged, this, changedSlot);
    for (const auto& [dim, edit] : dims_->edits())
        connect(edit, &QLineEdit::textChanged, this, changedSlot);
    connect(code_, &CodeChoice::changed, this, changedSlot);
    for (auto* cb : modes_) connect(cb, &QCheckBox::toggled, this, changedSlot);
    for (auto* cb : precisions_) connect(cb, &QCheckBox::toggled, this, changedSlot);
    for (auto* cb : attentions_) connect(cb, &QCheckBox::toggled, this, changedSlot);
    for (auto* cb : execs_) connect(cb, &QCheckBox::toggled, this, changedSlot);
    connect(device_, &QComboBox::currentIndexChanged, this, changedSlot);
    connect(strategy_, &QComboBox::currentIndexChanged, this, changedSlot);
    installRunShortcut();
    setLabelField(label_);

    // GPU-only options wait for the device probe.
    updateAvailability();
}

PointConfig BenchPanel::baseConfig() const {
    PointConfig c;
    c.model.vocab_size = vocab_->value();
    c.model.d_model = dModel_->value();
    c.model.d_ff = dFf_->value();
    c.model.num_layers = layers_->value();
    c.model.num_heads = heads_->value();
    c.model.name = "custom";
    std::vector<int64_t> v;
    if (parseIntList(context_->text(), &v, nullptr)) c.model.context_length = v.front();
    if (parseIntList(batch_->text(), &v, nullptr)) c.batch_size = v.front();
    if (parseIntList(warmup_->text(), &v, nullptr)) c.warmup = static_cast<int>(v.front());
    c.steps = steps_->value();
    c.device = device_->currentData().toString().toStdString();
    for (Mode m : allModes())
        if (modes_[m]->isChecked()) {
            c.mode = m;
            break;
        }
    for (Precision p : allPrecisions())
        if (precisions_[p]->isChecked()) {
            c.precision = p;
            break;
        }
    for (AttentionImpl a : kAttentions)
        if (attentions_[a]->isChecked()) {
            c.attention = a;
            break;
        }
    for (ExecMode e : allExecModes())
        if (execs_[e]->isChecked()) {
            c.exec = e;
            break;
        }
    const std::vector<Source> sources = code_->sources();
    if (!sources.empty()) c.source = sources.front();
    c.python = code_->code();
    return c;
}

void BenchPanel::updateAvailability() {
    // Each option is probed on the current device; the engine's reason becomes the tooltip.
    const bool wasUpdating = updating_;
    updating_ = true;
    PointConfig probe = baseConfig();
    // A small, valid model for probing: the reasons must be about the option, not the sizes.
    if (auto tiny = modelPreset("tiny")) {
        tiny->context_length = 64;
        probe.model = *tiny;
    }
    probe.batch_size = 1;
    probe.warmup = 0;
    probe.steps = 1;
    auto reasonFor = [&](const PointConfig& c) -> QString {
        if (!capsKnown_) return tr("Checking what this machine can run…");
        QStringList msgs;
        for (const auto& m : checkPointRunnable(c)) msgs << qstr(m);
        return msgs.join(QLatin1Char('\n'));
    };
    for (Precision p : allPrecisions()) {
        PointConfig c = probe;
        c.precision = p;
        c.attention = AttentionImpl::Naive;
        const QString why = p == Precision::FP32 ? QString() : reasonFor(c);
        QCheckBox* cb = precisions_[p];
        cb->setEnabled(why.isEmpty());
        cb->setToolTip(why.isEmpty() ? tr("autocast to %1").arg(qstr(toString(p))) : why);
        if (!why.isEmpty() && capsKnown_) cb->setChecked(false);
    }
    for (AttentionImpl a : kAttentions) {
        PointConfig c = probe;
        c.precision = Precision::FP32;
        c.attention = a;
        // The flash kernels run in half precision only; probe them as they would be used.
        if (a == AttentionImpl::Flash) c.precision = Precision::BF16;
        const QString why = a == AttentionImpl::Naive ? QString() : reasonFor(c);
        QCheckBox* cb = attentions_[a];
        cb->setEnabled(why.isEmpty());
        cb->setToolTip(why.isEmpty() ? attentionHint(a)
                                     : attentionHint(a) + QStringLiteral("\n") + why);
        if (!why.isEmpty() && capsKnown_) cb->setChecked(false);
    }
    const std::vector<Source> sources = code_->sources();
    const bool yours = code_->yours();
    const bool ours =
        std::find(sources.begin(), sources.end(), Source::TrainScope) != sources.end();
    // torch.compile's other modes are for the user's code alone.
    for (ExecMode e : kTorchCompileModes) {
        execs_[e]->setEnabled(yours);
        if (!yours) execs_[e]->setChecked(false);
    }
    {
        // Compiled mode needs a CUDA device (TrainScope's CUDA graphs; torch.compile runs on the
        // CPU too); fp16 training is flagged by validation instead.
        PointConfig c = probe;
        c.precision = Precision::FP32;
        c.attention = AttentionImpl::Naive;
        c.exec = ExecMode::Compiled;
        const QString graphs =
            capsKnown_ ? qstr(compiledProblem(c)) : tr("Checking what this machine can run…");
        const QString why = yours ? QString() : graphs;
        QCheckBox* cb = execs_[ExecMode::Compiled];
        cb->setEnabled(why.isEmpty());
        QString tip = ours ? tr("TrainScope's model: forward, backward and optimizer each captured "
                                "once as a CUDA "
                                "graph and replayed every step")
                           : QString();
        if (ours && yours && !graphs.isEmpty())
            tip += QStringLiteral(" (") + graphs + QStringLiteral(")");
        if (yours)
            tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                   tr("Your code: torch.compile in its default mode");
        cb->setToolTip(why.isEmpty() ? tip : why);
        if (!why.isEmpty() && capsKnown_ && cb->isChecked()) {
            cb->setChecked(false);
            execs_[ExecMode::Eager]->setChecked(true);  // a step still needs a way to run
        }
    }
    // DDP needs several GPUs; the window runs single-device experiments for now.
    int gpus = 0;
    for (const auto& d : caps_.devices)
        if (d.id != "cpu") ++gpus;
    auto* model = qobject_cast<QStandardItemModel*>(strategy_->model());
    for (int i = 1; i < strategy_->count(); ++i) {
        const QString why =
            !capsKnown_ ? tr("Checking what this machine can run…")
            : gpus < 2
                ? tr("DDP needs two or more CUDA devices; this machine has %1").arg(gpus)
                : tr("DDP runs in its own experiment: choose Distributed in the lab chooser");
        if (model) model->item(i)->setEnabled(false);
        strategy_->setItemData(i, why, Qt::ToolTipRole);
    }
    if (strategy_->currentIndex() != 0) strategy_->setCurrentIndex(0);
    updating_ = wasUpdating;
}

QList<QWidget*> BenchPanel::widgetsForMessage(const QString& m) const {
    // The engine names the bad value in each message; map the names to their fields. A
    // message about two values ("d_model 100 is not divisible by num_heads 3") flags both.
    if (m.startsWith(QLatin1String("device"))) return {device_};
    if (m.contains(QLatin1String("torch.compile mode")))
        return {compileModeBox_, code_->sourceBox()};
    if (QWidget* w = code_->fieldFor(m)) return {w};
    if (m.startsWith(QLatin1String("compiled mode")))
        return m.contains(QLatin1String("fp16")) ? QList<QWidget*>{execModeBox_, precisionBox_}
                                                 : QList<QWidget*>{execModeBox_};
    if (m.contains(QLatin1String("attention '"))) return {attentionBox_};
    if (QWidget* w = dims_->fieldFor(m)) return {w};
    if (m.contains(QLatin1String("bf16")) || m.contains(QLatin1String("fp16")))
        return {precisionBox_};
    const QList<QPair<QString, QWidget*>> keys = {
        {QStringLiteral("vocab_size"), vocab_},  {QStringLiteral("context_length"), context_},
        {QStringLiteral("d_model"), dModel_},    {QStringLiteral("head dimension"), heads_},
        {QStringLiteral("num_heads"), heads_},   {QStringLiteral("d_ff"), dFf_},
        {QStringLiteral("num_layers"), layers_}, {QStringLiteral("batch_size"), batch_},
        {QStringLiteral("warmup"), warmup_},     {QStringLiteral("steps"), steps_}};
    QList<QWidget*> out;
    for (const auto& [key, w] : keys)
        if (m.contains(key) && !out.contains(w)) out << w;
    // A memory bound names the point as "batch 2 × heads 4 × context 100000000": the context
    // and the batch are what the user typed (not the device whose memory it names).
    static const QRegularExpression context(QStringLiteral("\\bcontext \\d")),
        batch(QStringLiteral("\\bbatch \\d"));
    if (m.contains(context) && !out.contains(context_)) out << context_;
    if (m.contains(batch) && !out.contains(batch_)) out << batch_;
    return out;
}

void BenchPanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    points_.clear();
    batches_.clear();
    auto add = [&](QWidget* w, const QString& msg) {
        if (w) {
            if (!byField[w].contains(msg)) byField[w] << msg;
        } else if (!general.contains(msg)) {
            general << msg;
        }
    };
    auto addAll = [&](const QList<QWidget*>& ws, const QString& msg) {
        if (ws.isEmpty()) add(nullptr, msg);
        for (QWidget* w : ws) add(w, msg);
    };

    SweepSpec spec;
    spec.base = baseConfig();
    QString err;
    std::vector<int64_t> ctx, warm;
    // A list that does not parse is flagged; the other fields are still checked, with the
    // base value standing in for it.
    if (!parseIntList(context_->text(), &ctx, &err)) {
        add(context_, tr("Context length: %1").arg(err));
        ctx = {spec.base.model.context_length};
    }
    if (!parseIntList(batch_->text(), &batches_, &err)) {
        add(batch_, tr("Batch size: %1").arg(err));
        batches_ = {spec.base.batch_size};
    }
    if (!parseIntList(warmup_->text(), &warm, &err)) {
        add(warmup_, tr("Warm-up steps: %1").arg(err));
        warm = {spec.base.warmup};
    }
    for (int64_t w : warm) {
        if (w > kMaxSteps) add(warmup_, tr("Warm-up steps: %1 is too many").arg(w));
        if (w < 0) add(warmup_, tr("Warm-up steps: %1 is below zero").arg(w));
    }
    // Each dimension's values as the point's table keeps them (see Note [point dimensions]).
    auto names = [](const auto& values) {
        std::vector<std::string> out;
        for (const auto& v : values) out.emplace_back(toString(v));
        return out;
    };
    auto numbers = [](const auto& values) {
        std::vector<std::string> out;
        for (auto v : values) out.push_back(std::to_string(v));
        return out;
    };
    spec[Dimension::Context] = numbers(ctx);
    spec[Dimension::Batch] = numbers(batches_);
    std::vector<int64_t> warmups;
    for (int64_t w : warm) warmups.push_back(std::clamp<int64_t>(w, 0, kMaxSteps));
    spec[Dimension::Warmup] = numbers(warmups);
    auto& sizes = spec[Dimension::Size];
    for (int i = 0; i < sizes_->count(); ++i)
        if (sizes_->item(i)->checkState() == Qt::Checked)
            sizes.push_back(sizes_->item(i)->data(Qt::UserRole).toString().toStdString());
    if (sizes.empty()) add(sizes_, tr("Pick at least one model size"));
    std::vector<Mode> modes;
    for (Mode m : allModes())
        if (modes_[m]->isChecked()) modes.push_back(m);
    if (modes.empty()) add(modeBox_, tr("Pick at least one mode"));
    spec[Dimension::Mode] = names(modes);
    std::vector<Precision> precisions;
    for (Precision p : allPrecisions())
        if (precisions_[p]->isChecked()) precisions.push_back(p);
    if (precisions.empty()) add(precisionBox_, tr("Pick at least one precision"));
    spec[Dimension::Precision] = names(precisions);
    std::vector<AttentionImpl> attentions;
    for (AttentionImpl a : kAttentions)
        if (attentions_[a]->isChecked()) attentions.push_back(a);
    if (attentions.empty()) add(attentionBox_, tr("Pick at least one attention backend"));
    spec[Dimension::Attention] = names(attentions);
    std::vector<ExecMode> execs;
    for (ExecMode e : allExecModes())
        if (execs_[e]->isChecked()) execs.push_back(e);
    if (execs.empty()) add(execModeBox_, tr("Pick eager, compiled or both"));
    spec[Dimension::Exec] = names(execs);
    spec[Dimension::Source] = names(code_->sources());
    {
        QHash<QWidget*, QStringList> dimProblems;
        for (auto& [dim, values] : dims_->values(dimProblems)) spec[dim] = std::move(values);
        for (auto it = dimProblems.begin(); it != dimProblems.end(); ++it)
            for (const QString& m : it.value()) add(it.key(), m);
    }
    if (spec[Dimension::Source].empty())
        add(code_->sourceBox(), tr("Pick TrainScope's model, your code or both"));
    customBox_->setEnabled(std::find(sizes.begin(), sizes.end(), "custom") != sizes.end());

    const QHash<QWidget*, QStringList> parseProblems = byField;
    if (!sizes.empty()) {
        // The sweep's size, before expanding it: a typo like "1-1000" must not allocate.
        const size_t count = sweepPointCount(spec);
        if (count > static_cast<size_t>(kMaxPoints)) {
            general << tr("The sweep has %1 points; at most %2 can run at once")
                           .arg(count)
                           .arg(kMaxPoints);
        } else {
            try {
                points_ = expandSweep(spec);
            } catch (const std::exception& e) {
                general << qstr(std::string(e.what()));
            }
        }
        // The engine's checks, except on fields already flagged as unreadable (their
        // stand-in value says nothing about what was typed).
        auto addChecked = [&](const std::string& m) {
            const QString msg = qstr(m);
            QList<QWidget*> ws = widgetsForMessage(msg);
            for (QWidget* w : ws)
                if (parseProblems.contains(w)) return;
            addAll(ws, inPanelWords(msg));
        };
        // What this machine can run is asked of valid points only: a point past every device's
        // memory is not also past this machine's, in near-identical words.
        for (const auto& p : points_) {
            const std::vector<std::string> invalid = validatePoint(p);
            for (const auto& m : invalid) addChecked(m);
            if (capsKnown_ && invalid.empty())
                for (const auto& m : checkPointRunnable(p)) addChecked(m);
        }
        // The user's code: an interpreter or a file that is not there, said before Run.
        if (const QString m = code_->problem(); !m.isEmpty()) addChecked(m.toStdString());
    }
    spec_ = spec;

    if (!byField.isEmpty() || !general.isEmpty()) points_.clear();  // before summary() reads them
    showProblems(byField, general);
    Q_EMIT changed();
}

QString BenchPanel::summary() const {
    if (!problems_.isEmpty())
        return tr("%n problem(s) to fix before Run", "", static_cast<int>(problems_.size()));
    if (points_.empty()) return tr("Nothing to run");
    if (points_.size() == 1) return tr("1 point: %1").arg(describeConfig(points_.front()));
    return describeSweep(points_);
}

std::optional<LabJob> BenchPanel::makeJob() const {
    if (!problems_.isEmpty() || points_.empty() || !capsKnown_) return std::nullopt;
    LabJob job;
    job.lab = QString::fromLatin1(kBenchLab);
    job.label = label_->text().trimmed();
    job.point_count = static_cast<int>(points_.size());
    job.device = points_.front().device;
    job.spec_json = benchSpecJson(spec_, points_.size());
    const std::string device = job.device;
    job.environment = [device] { return currentEnvironment(device); };
    job.run = [points = points_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                                 int64_t runId) {
        BenchItemForwarder forward(obs);
        runSweep(points, forward, cancel, store, runId);
    };
    return job;
}

QJsonObject BenchPanel::state() const {
    QJsonObject o;
    o[QLatin1String("label")] = label_->text();
    QStringList sizes;
    for (int i = 0; i < sizes_->count(); ++i)
        if (sizes_->item(i)->checkState() == Qt::Checked)
            sizes << sizes_->item(i)->data(Qt::UserRole).toString();
    o[QLatin1String("sizes")] = toArray(sizes);
    o[QLatin1String("custom")] = QJsonObject{{QStringLiteral("vocab"), vocab_->value()},
                                             {QStringLiteral("d_model"), dModel_->value()},
                                             {QStringLiteral("d_ff"), dFf_->value()},
                                             {QStringLiteral("layers"), layers_->value()},
                                             {QStringLiteral("heads"), heads_->value()}};
    o[QLatin1String("context")] = context_->text();
    o[QLatin1String("batch")] = batch_->text();
    o[QLatin1String("warmup")] = warmup_->text();
    dims_->save(o);
    o[QLatin1String("steps")] = steps_->value();
    QStringList modes, precs, atts, execs;
    for (Mode m : allModes())
        if (modes_[m]->isChecked()) modes << qstr(toString(m));
    for (Precision p : allPrecisions())
        if (precisions_[p]->isChecked()) precs << qstr(toString(p));
    for (AttentionImpl a : kAttentions)
        if (attentions_[a]->isChecked()) atts << qstr(toString(a));
    o[QLatin1String("modes")] = toArray(modes);
    o[QLatin1String("precisions")] = toArray(precs);
    o[QLatin1String("attentions")] = toArray(atts);
    for (ExecMode e : allExecModes())
        if (execs_[e]->isChecked()) execs << qstr(toString(e));
    o[QLatin1String("execs")] = toArray(execs);
    const QJsonObject code = code_->state();
    for (auto it = code.begin(); it != code.end(); ++it) o[it.key()] = it.value();
    o[QLatin1String("device")] = device_->currentData().toString();
    o[QLatin1String("strategy")] = strategy_->currentData().toString();
    return o;
}

void BenchPanel::setState(const QJsonObject& o, QStringList* notes) {
    updating_ = true;
    auto text = [&](const char* key, QLineEdit* e) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isString())
            e->setText(v.toString());
        else if (v.isDouble())
            e->setText(QString::number(v.toInteger()));
        else if (v.isArray()) {
            QStringList parts;
            for (const auto& x : v.toArray())
                parts << (x.isString() ? x.toString() : QString::number(x.toInteger()));
            e->setText(parts.join(QStringLiteral(", ")));
        }
    };
    if (o.contains(QLatin1String("label")))
        label_->setText(o.value(QLatin1String("label")).toString());
    if (o.contains(QLatin1String("sizes"))) {
        const QStringList sizes = stringsOf(o.value(QLatin1String("sizes")));
        for (int i = 0; i < sizes_->count(); ++i) {
            const QString id = sizes_->item(i)->data(Qt::UserRole).toString();
            sizes_->item(i)->setCheckState(sizes.contains(id) ? Qt::Checked : Qt::Unchecked);
        }
        for (const QString& s : sizes) {
            bool known = false;
            for (int i = 0; i < sizes_->count(); ++i)
                known |= sizes_->item(i)->data(Qt::UserRole).toString() == s;
            if (!known && notes) *notes << tr("model size '%1' is unknown; left out").arg(s);
        }
    }
    const QJsonObject custom = o.value(QLatin1String("custom")).toObject();
    auto setSpin = [&](const char* key, QSpinBox* s) {
        if (custom.contains(QLatin1String(key)))
            s->setValue(custom.value(QLatin1String(key)).toInt(s->value()));
    };
    setSpin("vocab", vocab_);
    setSpin("d_model", dModel_);
    setSpin("d_ff", dFf_);
    setSpin("layers", layers_);
    setSpin("heads", heads_);
    text("context", context_);
    text("batch", batch_);
    text("warmup", warmup_);
    dims_->load(o);
    if (o.contains(QLatin1String("steps")))
        steps_->setValue(o.value(QLatin1String("steps")).toInt(steps_->value()));
    auto checks = [&](const char* key, auto& boxes, const auto& all) {
        if (!o.contains(QLatin1String(key))) return;
        const QStringList wanted = stringsOf(o.value(QLatin1String(key)));
        for (auto v : all) boxes[v]->setChecked(wanted.contains(qstr(toString(v))));
    };
    checks("modes", modes_, allModes());
    checks("precisions", precisions_, allPrecisions());
    checks("attentions", attentions_, kAttentions);
    code_->setState(o);  // presets and states saved before the field: TrainScope's model
    if (o.contains(QLatin1String("execs")))
        checks("execs", execs_, allExecModes());
    else  // presets and states saved before the field: eager
        for (ExecMode e : allExecModes()) execs_[e]->setChecked(e == ExecMode::Eager);
    if (o.contains(QLatin1String("device"))) {
        const QString dev = o.value(QLatin1String("device")).toString();
        const int i = device_->findData(dev);
        auto* model = qobject_cast<QStandardItemModel*>(device_->model());
        if (i >= 0 && (!model || model->item(i)->isEnabled())) {
            device_->setCurrentIndex(i);
        } else if (capsKnown_ && dev != device_->currentData().toString()) {
            if (notes)
                *notes << tr("device '%1' is not available here; using %2")
                              .arg(dev, device_->currentData().toString());
        } else if (!capsKnown_ && i < 0) {
            // Not probed yet: keep the wish, the probe decides.
            device_->addItem(dev, dev);
            device_->setCurrentIndex(device_->count() - 1);
        }
    }
    // Options this machine lacks are dropped, and said so.
    QStringList before;
    for (Precision p : allPrecisions())
        if (precisions_[p]->isChecked()) before << qstr(toString(p));
    for (AttentionImpl a : kAttentions)
        if (attentions_[a]->isChecked()) before << qstr(toString(a));
    const bool wantedCompiled = execs_[ExecMode::Compiled]->isChecked();
    updateAvailability();
    if (notes && capsKnown_) {
        for (Precision p : allPrecisions())
            if (before.contains(qstr(toString(p))) && !precisions_[p]->isChecked())
                *notes << tr("%1 left out: %2").arg(qstr(toString(p)), precisions_[p]->toolTip());
        for (AttentionImpl a : kAttentions)
            if (before.contains(qstr(toString(a))) && !attentions_[a]->isChecked())
                *notes << tr("%1 left out: %2")
                              .arg(qstr(toString(a)),
                                   attentions_[a]->toolTip().section(QLatin1Char('\n'), 1));
        if (wantedCompiled && !execs_[ExecMode::Compiled]->isChecked())
            *notes << tr("compiled left out: %1").arg(execs_[ExecMode::Compiled]->toolTip());
    }
    // A preset whose only precision is unavailable still needs one.
    bool anyPrecision = false;
    for (auto* cb : precisions_) anyPrecision |= cb->isChecked();
    if (!anyPrecision && capsKnown_) precisions_[Precision::FP32]->setChecked(true);
    bool anyAttention = false;
    for (auto* cb : attentions_) anyAttention |= cb->isChecked();
    if (!anyAttention && capsKnown_) attentions_[AttentionImpl::Naive]->setChecked(true);
    bool anyExec = false;
    for (auto* cb : execs_) anyExec |= cb->isChecked();
    if (!anyExec)
        execs_[ExecMode::Eager]->setChecked(true);  // compiled was asked for where it cannot run
    updating_ = false;
    revalidate();
}

// ---------------------------------------------------------------- stored specs

QString BenchPanel::describeSpec(const QJsonObject& s) {
    const QJsonObject base = s.value(QLatin1String("base")).toObject();
    const QJsonObject model = base.value(QLatin1String("model")).toObject();
    const QString dot = QStringLiteral(", ");
    QStringList parts;
    parts << jsonListText(s.value(QLatin1String("sizes")), model.value(QLatin1String("name")))
                 .join(dot)
          << QStringLiteral("ctx ") + jsonListText(s.value(QLatin1String("context_lengths")),
                                                   model.value(QLatin1String("context_length")))
                                          .join(dot)
          << QStringLiteral("bs ") + jsonListText(s.value(QLatin1String("batch_sizes")),
                                                  base.value(QLatin1String("batch_size")))
                                         .join(dot)
          << jsonListText(s.value(QLatin1String("precisions")),
                          base.value(QLatin1String("precision")))
                 .join(dot)
          << jsonListText(s.value(QLatin1String("attentions")),
                          base.value(QLatin1String("attention")))
                 .join(dot)
          << jsonListText(s.value(QLatin1String("modes")), base.value(QLatin1String("mode")))
                     .join(dot) +
                 (jsonListText(s.value(QLatin1String("execs")), base.value(QLatin1String("exec")))
                          .contains(QStringLiteral("compiled"))
                      ? QStringLiteral(" (") +
                            jsonListText(s.value(QLatin1String("execs")),
                                         base.value(QLatin1String("exec")))
                                .join(dot) +
                            QStringLiteral(")")
                      : QString())
          << QObject::tr("warm-up %1")
                 .arg(jsonListText(s.value(QLatin1String("warmups")),
                                   base.value(QLatin1String("warmup")))
                          .join(dot))
          << QObject::tr("steps %1").arg(base.value(QLatin1String("steps")).toInteger())
          << jsonListText(s.value(QLatin1String("devices")), base.value(QLatin1String("device")))
                 .join(dot);
    parts << DimensionFields::describe(s, base);  // checkpointing, where not the default
    // The user's code, where the run had it (runs stored before the field are TrainScope's).
    const QStringList sources =
        jsonListText(s.value(QLatin1String("sources")), base.value(QLatin1String("source")));
    if (sources.contains(QStringLiteral("python")))
        parts.prepend((sources.contains(QStringLiteral("trainscope"))
                           ? QObject::tr("TrainScope vs your code %1")
                           : QObject::tr("your code %1"))
                          .arg(base.value(QLatin1String("code")).toString()));
    return parts.join(QStringLiteral(" · "));
}

QJsonObject BenchPanel::stateFromSpec(const QJsonObject& s) {
    const QJsonObject base = s.value(QLatin1String("base")).toObject();
    const QJsonObject model = base.value(QLatin1String("model")).toObject();
    const QString comma = QStringLiteral(", ");
    QJsonObject o;
    // See Note [two model tables]: a run stored before the two tables (its spec has "points" but
    // no "model_table") names 2025's xl "xl".
    QStringList sizes =
        jsonListText(s.value(QLatin1String("sizes")), model.value(QLatin1String("name")));
    const ModelTable table =
        parseModelTable(s.value(QLatin1String("model_table")).toString().toStdString())
            .value_or(s.contains(QLatin1String("points")) ? ModelTable::Edition2025
                                                          : kDefaultModelTable);
    for (QString& size : sizes) size = qstr(presetName(size.toStdString(), table));
    o[QStringLiteral("sizes")] = QJsonArray::fromStringList(sizes);
    o[QStringLiteral("custom")] =
        QJsonObject{{QStringLiteral("vocab"), model.value(QLatin1String("vocab_size"))},
                    {QStringLiteral("d_model"), model.value(QLatin1String("d_model"))},
                    {QStringLiteral("d_ff"), model.value(QLatin1String("d_ff"))},
                    {QStringLiteral("layers"), model.value(QLatin1String("num_layers"))},
                    {QStringLiteral("heads"), model.value(QLatin1String("num_heads"))}};
    o[QStringLiteral("context")] = jsonListText(s.value(QLatin1String("context_lengths")),
                                                model.value(QLatin1String("context_length")))
                                       .join(comma);
    o[QStringLiteral("batch")] =
        jsonListText(s.value(QLatin1String("batch_sizes")), base.value(QLatin1String("batch_size")))
            .join(comma);
    o[QStringLiteral("warmup")] =
        jsonListText(s.value(QLatin1String("warmups")), base.value(QLatin1String("warmup")))
            .join(comma);
    o[QStringLiteral("steps")] = base.value(QLatin1String("steps"));
    DimensionFields::stateFromSpec(s, base, o);
    o[QStringLiteral("modes")] = QJsonArray::fromStringList(
        jsonListText(s.value(QLatin1String("modes")), base.value(QLatin1String("mode"))));
    o[QStringLiteral("precisions")] = QJsonArray::fromStringList(
        jsonListText(s.value(QLatin1String("precisions")), base.value(QLatin1String("precision"))));
    o[QStringLiteral("attentions")] = QJsonArray::fromStringList(
        jsonListText(s.value(QLatin1String("attentions")), base.value(QLatin1String("attention"))));
    // Runs stored before the field have neither: eager.
    o[QStringLiteral("execs")] = QJsonArray::fromStringList(
        jsonListText(s.value(QLatin1String("execs")), base.contains(QLatin1String("exec"))
                                                          ? base.value(QLatin1String("exec"))
                                                          : QJsonValue(QStringLiteral("eager"))));
    o[QStringLiteral("device")] =
        jsonListText(s.value(QLatin1String("devices")), base.value(QLatin1String("device")))
            .value(0);
    o[QStringLiteral("sources")] = QJsonArray::fromStringList(jsonListText(
        s.value(QLatin1String("sources")), base.contains(QLatin1String("source"))
                                               ? base.value(QLatin1String("source"))
                                               : QJsonValue(QStringLiteral("trainscope"))));
    o[QStringLiteral("code")] = base.value(QLatin1String("code")).toString();
    o[QStringLiteral("python")] = base.value(QLatin1String("python")).toString();
    return o;
}

}  // namespace ts::ui
