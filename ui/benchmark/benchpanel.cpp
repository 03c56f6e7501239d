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
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    addLabelRow(outer, tr("optional; shown in the history"));
    code_ = addCode(outer, /*both=*/true);

    // Model: presets (several = a size sweep) and custom dimensions.
    auto* modelBox = new QGroupBox(tr("Model"), this);
    auto* modelLayout = new QVBoxLayout(modelBox);
    sizes_ = new QListWidget(modelBox);
    for (const auto& name : modelPresetNames()) {
        auto* item = new QListWidgetItem(presetLabel(name), sizes_);
        item->setToolTip(presetTooltip(name));
        item->setData(Qt::UserRole, qstr(name));
    }
    auto* custom = new QListWidgetItem(tr("custom (dimensions below)"), sizes_);
    custom->setData(Qt::UserRole, QStringLiteral("custom"));
    for (int i = 0; i < sizes_->count(); ++i) {
        sizes_->item(i)->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        // Defaults: a run of seconds on any machine.
        sizes_->item(i)->setCheckState(sizeId(i) == QLatin1String("tiny") ? Qt::Checked
                                                                          : Qt::Unchecked);
    }
    sizes_->setToolTip(tr("Tick several sizes to sweep over them"));
    // Fixed: a list that could shrink would give way (and move every field below it) when the
    // problems under the panel grow; the dock scrolls instead.
    sizes_->setFixedHeight(sizes_->sizeHintForRow(0) * sizes_->count() + 2 * sizes_->frameWidth() +
                           4);
    modelLayout->addWidget(sizes_);
    connect(sizes_, &QListWidget::itemChanged, this, &BenchPanel::fieldChanged);
    addField({QStringLiteral("sizes"), sizes_,
              [this](QJsonObject& o) { o[QStringLiteral("sizes")] = toArray(checkedSizes()); },
              [this](const QJsonObject& o, QStringList* notes) {
                  if (!o.contains(QLatin1String("sizes"))) return;
                  const QStringList sizes = stringsOf(o.value(QLatin1String("sizes")));
                  QStringList known;
                  for (int i = 0; i < sizes_->count(); ++i) {
                      known << sizeId(i);
                      sizes_->item(i)->setCheckState(sizes.contains(sizeId(i)) ? Qt::Checked
                                                                               : Qt::Unchecked);
                  }
                  for (const QString& s : sizes)
                      if (!known.contains(s) && notes)
                          *notes << tr("model size '%1' is unknown; left out").arg(s);
              }});
    custom_ = PointForm::addCustomModel(this, modelBox);
    modelLayout->addWidget(custom_.box);
    outer->addWidget(modelBox);

    auto* workBox = new QGroupBox(tr("Workload"), this);
    auto* workForm = new QFormLayout(workBox);
    context_ =
        addText(workForm, QStringLiteral("context"), tr("&Context length:"), QStringLiteral("64"),
                tr("Context length; a list (128, 256, 512) sweeps over it"));
    batch_ = addText(workForm, QStringLiteral("batch"), tr("&Batch size:"), QStringLiteral("2"),
                     tr("Batch size; a list sweeps over it"));
    modeBox_ = addChecks(
        workForm, QStringLiteral("modes"), tr("Mode:"),
        {{qstr(toString(Mode::Forward)), qstr(toString(Mode::Forward)), tr("forward pass only")},
         {qstr(toString(Mode::ForwardBackward)), qstr(toString(Mode::ForwardBackward)),
          tr("forward and backward")},
         {qstr(toString(Mode::Train)), qstr(toString(Mode::Train)),
          tr("forward, backward and an AdamW step")}},
        {qstr(toString(Mode::Train))});
    outer->addWidget(workBox);

    auto* numBox = new QGroupBox(tr("Precision and attention"), this);
    auto* numForm = new QFormLayout(numBox);
    precisionBox_ = addChecks(numForm, QStringLiteral("precisions"), tr("Precision:"),
                              choicesOf(allPrecisions()), {QStringLiteral("fp32")});
    QList<Choice> attentions = choicesOf(kAttentions);
    for (Choice& c : attentions) c.tip = attentionHint(*parseAttentionImpl(c.data.toStdString()));
    attentionBox_ = addChecks(numForm, QStringLiteral("attentions"), tr("Attention:"), attentions,
                              {QStringLiteral("naive")});
    outer->addWidget(numBox);
    for (Mode m : allModes()) modes_[m] = checkBox(QStringLiteral("modes"), qstr(toString(m)));
    for (Precision p : allPrecisions())
        precisions_[p] = checkBox(QStringLiteral("precisions"), qstr(toString(p)));
    for (AttentionImpl a : kAttentions)
        attentions_[a] = checkBox(QStringLiteral("attentions"), qstr(toString(a)));

    auto* execBox = new QGroupBox(tr("Execution"), this);
    auto* execForm = new QFormLayout(execBox);
    addDevice(execForm, tr("&Device:"));
    // Eager and compiled (CUDA graphs): ticking both sweeps over them (the Speedup view then
    // compares them). One state key, "execs", holds both rows.
    execModeBox_ = addChecks(execForm, QStringLiteral("execs"), tr("Step:"), choicesOf(kStepModes),
                             {QStringLiteral("eager")});
    compileModeBox_ = addChecks(execForm, QStringLiteral("compile_modes"), tr("torch.compile:"),
                                choicesOf(kTorchCompileModes), {});
    for (ExecMode e : allExecModes())
        execs_[e] = checkBox(
            kStepModes.contains(e) ? QStringLiteral("execs") : QStringLiteral("compile_modes"),
            qstr(toString(e)));
    field(QStringLiteral("compile_modes")).save = nullptr;
    field(QStringLiteral("compile_modes")).load = nullptr;
    field(QStringLiteral("execs")).save = [this](QJsonObject& o) {
        QStringList execs;
        for (ExecMode e : allExecModes())
            if (execs_[e]->isChecked()) execs << qstr(toString(e));
        o[QStringLiteral("execs")] = toArray(execs);
    };
    field(QStringLiteral("execs")).load = [this](const QJsonObject& o, QStringList*) {
        // Presets and states saved before the field: eager.
        const QStringList wanted = o.contains(QLatin1String("execs"))
                                       ? stringsOf(o.value(QLatin1String("execs")))
                                       : QStringList{QStringLiteral("eager")};
        for (ExecMode e : allExecModes()) execs_[e]->setChecked(wanted.contains(qstr(toString(e))));
    };
    execs_[ExecMode::MaxAutotuneNoCudagraphs]->setText(tr("max-autotune (no graphs)"));
    for (ExecMode e : kTorchCompileModes)
        execs_[e]->setToolTip(
            tr("torch.compile(mode=\"%1\") of your code (Python only)").arg(qstr(toString(e))));
    execs_[ExecMode::Compiled]->setText(tr("compiled (CUDA graphs)"));
    execs_[ExecMode::Compiled]->setToolTip(
        tr("Forward, backward and AdamW captured once as CUDA graphs and replayed, over "
           "TrainScope's fused kernels (RMSNorm with the residual add, RoPE, SwiGLU, "
           "cross-entropy, AdamW keeping bf16 weight copies). Needs a CUDA GPU; fp16 training "
           "is refused."));
    QList<Choice> strategies = {{tr("single device"), QStringLiteral("single"), {}}};
    for (const char* s : {"naive", "flat", "overlapped", "bucketed"})
        strategies.push_back(
            {tr("DDP — %1").arg(QLatin1String(s)), QStringLiteral("ddp-") + QLatin1String(s), {}});
    strategy_ = addCombo(execForm, QStringLiteral("strategy"), tr("Parallel &strategy:"),
                         strategies, QStringLiteral("single"));
    warmup_ =
        addText(execForm, QStringLiteral("warmup"), tr("&Warm-up steps:"), QStringLiteral("2"),
                tr("Steps run and recorded but left out of the statistics; a list (0, 1, 5) "
                   "sweeps over it"));
    steps_ = addSpin(execForm, QStringLiteral("steps"), tr("&Measured steps:"), 1, 1'000'000, 8,
                     tr("Steps measured after the warm-up"));
    dims_ = std::make_unique<DimensionFields>(execBox, execForm, /*lists=*/true);
    addDimensions(*dims_);
    outer->addWidget(execBox);

    outer->addStretch();
    addStatusLabels(outer);  // last: when it grows, no field moves
    installRunShortcut();
    // GPU-only options wait for the device probe.
    updateAvailability();
    revalidate();
}

QString BenchPanel::sizeId(int row) const {
    return sizes_->item(row)->data(Qt::UserRole).toString();
}

QStringList BenchPanel::checkedSizes() const {
    QStringList sizes;
    for (int i = 0; i < sizes_->count(); ++i)
        if (sizes_->item(i)->checkState() == Qt::Checked) sizes << sizeId(i);
    return sizes;
}

PointConfig BenchPanel::baseConfig() const {
    PointConfig c;
    custom_.applyTo(c.model);
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
    const QList<QPair<QString, QWidget*>> keys = {{QStringLiteral("vocab_size"), custom_.vocab},
                                                  {QStringLiteral("context_length"), context_},
                                                  {QStringLiteral("d_model"), custom_.dModel},
                                                  {QStringLiteral("head dimension"), custom_.heads},
                                                  {QStringLiteral("num_heads"), custom_.heads},
                                                  {QStringLiteral("d_ff"), custom_.dFf},
                                                  {QStringLiteral("num_layers"), custom_.layers},
                                                  {QStringLiteral("batch_size"), batch_},
                                                  {QStringLiteral("warmup"), warmup_},
                                                  {QStringLiteral("steps"), steps_}};
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
    for (const QString& size : checkedSizes()) sizes.push_back(size.toStdString());
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
    custom_.box->setEnabled(std::find(sizes.begin(), sizes.end(), "custom") != sizes.end());

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

QString BenchPanel::runSummary() const {
    if (points_.empty()) return tr("Nothing to run");
    if (points_.size() == 1) return tr("1 point: %1").arg(describeConfig(points_.front()));
    return describeSweep(points_);
}

std::optional<LabJob> BenchPanel::makeJob() const {
    if (!problems_.isEmpty() || points_.empty() || !capsKnown_) return std::nullopt;
    LabJob job = newJob(kBenchLab, points_.front().device, static_cast<int>(points_.size()));
    job.spec_json = benchSpecJson(spec_, points_.size());
    job.run = [points = points_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                                 int64_t runId) {
        BenchItemForwarder forward(obs);
        runSweep(points, forward, cancel, store, runId);
    };
    return job;
}

void BenchPanel::stateLoaded(const QJsonObject& o, QStringList* notes) {
    // Options this machine lacks were dropped (updateAvailability): said so.
    if (notes) {
        *notes << leftOut(o, QStringLiteral("precisions"), false)
               << leftOut(o, QStringLiteral("attentions"), true);
        if (capsKnown_ &&
            stringsOf(o.value(QLatin1String("execs"))).contains(QStringLiteral("compiled")) &&
            !execs_[ExecMode::Compiled]->isChecked())
            *notes << tr("compiled left out: %1").arg(execs_[ExecMode::Compiled]->toolTip());
    }
    // A preset whose only precision is unavailable still needs one.
    if (ticked(QStringLiteral("precisions")).isEmpty() && capsKnown_)
        precisions_[Precision::FP32]->setChecked(true);
    if (ticked(QStringLiteral("attentions")).isEmpty() && capsKnown_)
        attentions_[AttentionImpl::Naive]->setChecked(true);
    bool anyExec = false;
    for (auto* cb : execs_) anyExec |= cb->isChecked();
    if (!anyExec)
        execs_[ExecMode::Eager]->setChecked(true);  // compiled was asked for where it cannot run
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
