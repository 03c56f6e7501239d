#include "ui/memory/memorypanel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "core/store.h"
#include "memory/memory_json.h"
#include "memory/memory_report.h"
#include "runtime/environment.h"
#include "ui/common/codechoice.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/memory/memoryview.h"

namespace ts::ui {

namespace {

// The engine's memory observer, forwarded to the job's: steps and frontier probes as log
// lines, the point's result (stored by the engine by then) as an item for the view.
class MemoryForwarder final : public MemoryObserver {
public:
    explicit MemoryForwarder(JobObserver& out) : out_(out) {}
    void stepFinished(const StepSample& s) override {
        out_.log(LogLevel::Info, "step " + std::to_string(s.index + 1) +
                                     (s.warmup ? " (warm-up)" : " (recorded)") + ": " +
                                     formatMs(s.total_ms).toStdString() + " ms");
    }
    void traceCollected() override { out_.log(LogLevel::Info, "reading the allocator's trace"); }
    void frontierProbed(const FrontierProbe& p) override {
        out_.log(LogLevel::Info,
                 "frontier: " + std::to_string(p.value) + (p.fits ? " fits" : " does not fit"));
    }
    void pointFinished(int, const MemoryResult& r) override { out_.item(QVariant::fromValue(r)); }
    void progress(double fraction, double eta) override { out_.progress(fraction, eta); }
    void log(LogLevel level, const std::string& message) override { out_.log(level, message); }

private:
    JobObserver& out_;
};

template <typename E>
void fillCombo(QComboBox* box, const std::vector<E>& values) {
    for (E v : values) box->addItem(qstr(toString(v)), qstr(toString(v)));
}

void selectData(QComboBox* box, const QString& value) {
    const int i = box->findData(value);
    if (i >= 0) box->setCurrentIndex(i);
}

}  // namespace

MemoryPanel::MemoryPanel(QWidget* parent) : LabPanel(parent) {
    qRegisterMetaType<MemoryResult>();
    build();
    revalidate();
}

void MemoryPanel::build() {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    auto* top = new QFormLayout;
    label_ = new QLineEdit(this);
    label_->setPlaceholderText(tr("optional; shown in the log and exports"));
    top->addRow(tr("&Label:"), label_);
    outer->addLayout(top);
    code_ = new CodeChoice(/*both=*/false, this);
    outer->addWidget(code_);

    auto* pointBox = new QGroupBox(tr("Point"), this);
    auto* form = new QFormLayout(pointBox);
    size_ = new QComboBox(pointBox);
    for (const auto& name : modelPresetNames()) {
        size_->addItem(presetLabel(name), qstr(name));
        size_->setItemData(size_->count() - 1, presetTooltip(name), Qt::ToolTipRole);
    }
    context_ = new QSpinBox(pointBox);
    context_->setRange(1, 1 << 20);
    batch_ = new QSpinBox(pointBox);
    batch_->setRange(1, 1 << 16);
    precision_ = new QComboBox(pointBox);
    fillCombo(precision_, allPrecisions());
    attention_ = new QComboBox(pointBox);
    fillCombo(attention_, allAttentionImpls());
    mode_ = new QComboBox(pointBox);
    fillCombo(mode_, allModes());
    form->addRow(tr("&Size:"), size_);
    form->addRow(tr("&Context length:"), context_);
    form->addRow(tr("&Batch size:"), batch_);
    form->addRow(tr("&Precision:"), precision_);
    form->addRow(tr("&Attention:"), attention_);
    form->addRow(tr("&Mode:"), mode_);
    dims_ = std::make_unique<DimensionFields>(this, form, /*lists=*/false);
    outer->addWidget(pointBox);

    auto* runBox = new QGroupBox(tr("Recording"), this);
    auto* rform = new QFormLayout(runBox);
    makeDeviceCombo(runBox);
    warmup_ = new QSpinBox(runBox);
    warmup_->setRange(0, 1000);
    steps_ = new QSpinBox(runBox);
    steps_->setRange(1, kMaxRecordSteps);
    frontier_ = new QComboBox(runBox);
    frontier_->addItem(tr("none"), QStringLiteral("none"));
    frontier_->addItem(tr("largest context that fits"), QStringLiteral("context"));
    frontier_->addItem(tr("largest batch that fits"), QStringLiteral("batch"));
    frontier_->setToolTip(
        tr("After the recorded steps, bisect for the largest context or batch whose step fits "
           "on this GPU (an out-of-memory is the answer, not an error)"));
    rform->addRow(tr("&Device:"), device_);
    rform->addRow(tr("&Warm-up steps:"), warmup_);
    rform->addRow(tr("&Recorded steps:"), steps_);
    rform->addRow(tr("&Frontier:"), frontier_);
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);

    registerFields({{QStringLiteral("size"), size_},
                    {QStringLiteral("context"), context_},
                    {QStringLiteral("batch"), batch_},
                    {QStringLiteral("precision"), precision_},
                    {QStringLiteral("attention"), attention_},
                    {QStringLiteral("mode"), mode_},
                    {QStringLiteral("device"), device_},
                    {QStringLiteral("warmup"), warmup_},
                    {QStringLiteral("record_steps"), steps_},
                    {QStringLiteral("frontier"), frontier_},
                    {QStringLiteral("sources"), code_->sourceBox()},
                    {QStringLiteral("code"), code_->codeEdit()},
                    {QStringLiteral("python"), code_->pythonEdit()}});
    for (const auto& [dim, edit] : dims_->edits())
        registerFields(QHash<QString, QWidget*>{{dimensionKey(dim), edit}});

    selectData(size_, QStringLiteral("tiny"));
    context_->setValue(128);
    batch_->setValue(4);
    selectData(mode_, QStringLiteral("train"));
    warmup_->setValue(2);
    steps_->setValue(2);

    auto changed = [this] {
        if (updating_) return;
        updateAvailability();
        revalidate();
    };
    connect(label_, &QLineEdit::textChanged, this, changed);
    connect(code_, &CodeChoice::changed, this, changed);
    for (QComboBox* c : {size_, precision_, attention_, mode_, frontier_, device_})
        connect(c, &QComboBox::currentIndexChanged, this, changed);
    for (QSpinBox* s : {context_, batch_, warmup_, steps_})
        connect(s, &QSpinBox::valueChanged, this, changed);
    for (const auto& [dim, edit] : dims_->edits())
        connect(edit, &QLineEdit::textChanged, this, changed);
    installRunShortcut();
    setLabelField(label_);
    updateAvailability();
}

void MemoryPanel::updateAvailability() {
    // Precisions and attentions this machine cannot run are named by revalidate()'s problems
    // (checkPointRunnable), which keeps every choice visible.
}

void MemoryPanel::revalidate() {
    MemorySpec s;
    const auto preset = modelPreset(size_->currentData().toString().toStdString());
    if (preset) s.bench.model = *preset;
    s.bench.model.context_length = context_->value();
    s.bench.batch_size = batch_->value();
    s.bench.precision = parsePrecision(precision_->currentData().toString().toStdString())
                            .value_or(Precision::FP32);
    s.bench.attention = parseAttentionImpl(attention_->currentData().toString().toStdString())
                            .value_or(AttentionImpl::Naive);
    s.bench.mode = parseMode(mode_->currentData().toString().toStdString()).value_or(Mode::Train);
    s.bench.device = device_ ? device_->currentData().toString().toStdString() : "cpu";
    if (s.bench.device.empty()) s.bench.device = "cpu";
    s.bench.warmup = warmup_->value();
    s.record_steps = steps_->value();
    s.frontier = parseFrontierAxis(frontier_->currentData().toString().toStdString())
                     .value_or(FrontierAxis::None);
    const std::vector<Source> sources = code_->sources();
    s.bench.source = sources.empty() ? Source::TrainScope : sources.front();
    s.bench.python = code_->code();
    // The user's model has its own attention: the field does not apply to it.
    attention_->setEnabled(s.bench.source == Source::TrainScope);
    QHash<QWidget*, QStringList> byField;
    for (const auto& [dim, values] : dims_->values(byField))
        if (!values.empty()) dimensionDef(dim).set(s.bench, values.front());
    spec_ = s;

    QStringList general;
    const QList<QPair<QString, QWidget*>> keys = {
        {QStringLiteral("context"), context_},     {QStringLiteral("batch"), batch_},
        {QStringLiteral("precision"), precision_}, {QStringLiteral("attention"), attention_},
        {QStringLiteral("warm-up"), warmup_},      {QStringLiteral("recorded steps"), steps_},
        {QStringLiteral("frontier"), frontier_},   {QStringLiteral("device"), device_}};
    std::vector<std::string> problems = validateMemory(s);
    if (problems.empty() && capsKnown_) problems = checkPointRunnable(s.bench);
    if (const QString m = code_->problem(); !m.isEmpty()) problems.push_back(m.toStdString());
    for (const auto& m : problems) {
        const QString msg = qstr(m);
        QWidget* target = code_->fieldFor(msg);
        if (!target) target = dims_->fieldFor(msg);
        for (const auto& [k, w] : keys)
            if (!target && msg.contains(k, Qt::CaseInsensitive)) {
                target = w;
                break;
            }
        if (target)
            byField[target] << msg;
        else
            general << msg;
    }
    showProblems(byField, general);
    Q_EMIT changed();
}

QString MemoryPanel::summary() const {
    if (!problems_.isEmpty())
        return tr("%n problem(s) to fix before Run", "", static_cast<int>(problems_.size()));
    QString s = qstr(memoryHeadline(MemoryResult{spec_}));
    if (spec_.bench.device == "cpu")
        s +=
            tr(" — on the CPU nothing is measured (it has no caching allocator): a run shows "
               "the analytic model only and is stored as not ok; pick a CUDA device to record");
    return s;
}

std::optional<LabJob> MemoryPanel::makeJob() const {
    if (!problems_.isEmpty() || !capsKnown_) return std::nullopt;
    LabJob job;
    job.lab = QString::fromLatin1(kMemoryLab);
    job.label = label_->text().trimmed();
    job.point_count = 1;
    job.device = spec_.bench.device;
    job.spec_json = memorySpecJson({spec_});
    const std::string device = spec_.bench.device;
    job.environment = [device] { return currentEnvironment(device); };
    job.run = [spec = spec_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                             int64_t runId) {
        MemoryForwarder forward(obs);
        runMemory(spec, forward, cancel, store, runId, 0, 1);
    };
    return job;
}

QJsonObject MemoryPanel::state() const {
    QJsonObject o;
    o[QStringLiteral("label")] = label_->text();
    o[QStringLiteral("size")] = size_->currentData().toString();
    o[QStringLiteral("context")] = context_->value();
    o[QStringLiteral("batch")] = batch_->value();
    o[QStringLiteral("precision")] = precision_->currentData().toString();
    o[QStringLiteral("attention")] = attention_->currentData().toString();
    o[QStringLiteral("mode")] = mode_->currentData().toString();
    o[QStringLiteral("device")] = device_->currentData().toString();
    o[QStringLiteral("warmup")] = warmup_->value();
    o[QStringLiteral("record_steps")] = steps_->value();
    o[QStringLiteral("frontier")] = frontier_->currentData().toString();
    dims_->save(o);
    const QJsonObject code = code_->state();
    for (auto it = code.begin(); it != code.end(); ++it) o[it.key()] = it.value();
    return o;
}

void MemoryPanel::setState(const QJsonObject& o, QStringList* notes) {
    updating_ = true;
    auto combo = [&](const char* key, QComboBox* box) {
        if (!o.contains(QLatin1String(key))) return;
        const QString v = o.value(QLatin1String(key)).toString();
        const int i = box->findData(v);
        if (i >= 0)
            box->setCurrentIndex(i);
        else if (notes)
            *notes << tr("%1 '%2' is not known here; keeping %3")
                          .arg(QLatin1String(key), v, box->currentText());
    };
    auto spin = [&](const char* key, QSpinBox* box) {
        if (o.contains(QLatin1String(key))) box->setValue(o.value(QLatin1String(key)).toInt());
    };
    if (o.contains(QLatin1String("label")))
        label_->setText(o.value(QLatin1String("label")).toString());
    combo("size", size_);
    combo("precision", precision_);
    combo("attention", attention_);
    combo("mode", mode_);
    combo("frontier", frontier_);
    spin("context", context_);
    spin("batch", batch_);
    spin("warmup", warmup_);
    spin("record_steps", steps_);
    dims_->load(o);
    code_->setState(o);  // states saved before the field: TrainScope's model
    if (o.contains(QLatin1String("device"))) {
        const QString dev = o.value(QLatin1String("device")).toString();
        auto* model = qobject_cast<QStandardItemModel*>(device_->model());
        const int i = device_->findData(dev);
        if (i >= 0 && (!model || model->item(i)->isEnabled()))
            device_->setCurrentIndex(i);
        else if (notes && capsKnown_)
            *notes << tr("device '%1' is not available here; using %2")
                          .arg(dev, device_->currentData().toString());
    }
    updating_ = false;
    updateAvailability();
    revalidate();
}

namespace {
// The spec of the run's first point: the panel asks for one point; the CLI may have stored several.
QJsonObject firstSpec(const QJsonObject& s) {
    const QJsonArray points = s.value(QLatin1String("points")).toArray();
    return points.isEmpty() ? s : points.first().toObject();
}
}  // namespace

QString MemoryPanel::describeSpec(const QJsonObject& spec) {
    const QJsonObject s = firstSpec(spec);
    const QJsonObject b = s.value(QLatin1String("bench")).toObject();
    const QJsonObject m = b.value(QLatin1String("model")).toObject();
    QStringList parts;
    const bool yours = b.value(QLatin1String("source")).toString() == QLatin1String("python");
    parts << m.value(QLatin1String("name")).toString()
          << QStringLiteral("ctx %1").arg(m.value(QLatin1String("context_length")).toInteger())
          << QStringLiteral("b %1").arg(b.value(QLatin1String("batch_size")).toInteger())
          << b.value(QLatin1String("precision")).toString();
    if (!yours)
        parts << b.value(QLatin1String("attention")).toString();  // the user's model has its own
    parts << b.value(QLatin1String("mode")).toString()
          << QObject::tr("%1 recorded").arg(s.value(QLatin1String("record_steps")).toInteger());
    const QString frontier = s.value(QLatin1String("frontier")).toString();
    if (!frontier.isEmpty() && frontier != QLatin1String("none"))
        parts << QObject::tr("frontier %1").arg(frontier);
    parts << DimensionFields::describe({}, b);  // checkpointing, where not the default
    parts << b.value(QLatin1String("device")).toString();
    const int points = spec.value(QLatin1String("points")).toArray().size();
    if (points > 1) parts << QObject::tr("%1 points").arg(points);
    if (yours)
        parts.prepend(QObject::tr("your code %1").arg(b.value(QLatin1String("code")).toString()));
    return parts.join(QStringLiteral(" · "));
}

QJsonObject MemoryPanel::stateFromSpec(const QJsonObject& spec) {
    const QJsonObject s = firstSpec(spec);
    const QJsonObject b = s.value(QLatin1String("bench")).toObject();
    const QJsonObject m = b.value(QLatin1String("model")).toObject();
    QJsonObject o;
    o[QStringLiteral("size")] = m.value(QLatin1String("name"));
    o[QStringLiteral("context")] = m.value(QLatin1String("context_length"));
    o[QStringLiteral("batch")] = b.value(QLatin1String("batch_size"));
    o[QStringLiteral("precision")] = b.value(QLatin1String("precision"));
    o[QStringLiteral("attention")] = b.value(QLatin1String("attention"));
    o[QStringLiteral("mode")] = b.value(QLatin1String("mode"));
    o[QStringLiteral("device")] = b.value(QLatin1String("device"));
    o[QStringLiteral("warmup")] = b.value(QLatin1String("warmup"));
    o[QStringLiteral("record_steps")] = s.value(QLatin1String("record_steps"));
    o[QStringLiteral("frontier")] = s.value(QLatin1String("frontier"));
    // Runs stored before the field are of TrainScope's model.
    o[QStringLiteral("sources")] =
        QJsonArray{b.value(QLatin1String("source")).toString(QStringLiteral("trainscope"))};
    o[QStringLiteral("code")] = b.value(QLatin1String("code")).toString();
    o[QStringLiteral("python")] = b.value(QLatin1String("python")).toString();
    DimensionFields::stateFromSpec({}, b, o);
    return o;
}

}  // namespace ts::ui
