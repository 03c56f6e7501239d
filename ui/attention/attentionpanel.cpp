#include "ui/attention/attentionpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <memory>

#include "attention/attention_json.h"
#include "core/store.h"
#include "runtime/environment.h"
#include "runtime/python_runner.h"
#include "ui/attention/attentionmodel.h"
#include "ui/attention/attentionview.h"
#include "ui/common/checkrow.h"
#include "ui/common/codechoice.h"
#include "ui/common/format.h"

namespace ts::ui {

namespace {
constexpr int kMaxCells = 2000;

QString joinInts(const std::vector<int64_t>& v) {
    QStringList parts;
    for (int64_t x : v) parts << QString::number(x);
    return parts.join(QStringLiteral(", "));
}

// The engine's attention observer, forwarded to the job's: each finished cell (stored by
// the engine by then) becomes an item for the view and a line in the log; progress and its
// ETA come from the engine.
class CellForwarder final : public AttentionObserver {
public:
    explicit CellForwarder(JobObserver& out) : out_(out) {}
    void cellFinished(int index, int count, const AttentionCell& cell) override {
        std::string line = "cell " + std::to_string(index + 1) + "/" + std::to_string(count) +
                           ": " + implName(cell) + " seq " + std::to_string(cell.seq) + " d " +
                           std::to_string(cell.head_dim) + " " + std::string(toString(cell.dtype)) +
                           ": " + std::string(toString(cell.status));
        if (cell.status == Status::Ok)
            line += " (forward " + formatMs(cell.forward_ms).toStdString() + " ms, backward " +
                    formatMs(cell.backward_ms).toStdString() + " ms)";
        else if (!cell.error.empty())
            line += ": " + cell.error;
        out_.log(LogLevel::Info, line);
        out_.item(QVariant::fromValue(cell));
    }
    void progress(double fraction, double eta) override { out_.progress(fraction, eta); }
    void log(LogLevel level, const std::string& message) override { out_.log(level, message); }

private:
    JobObserver& out_;
};
}  // namespace

AttentionPanel::AttentionPanel(QWidget* parent) : LabPanel(parent) {
    qRegisterMetaType<AttentionCell>();
    build();
    revalidate();
}

void AttentionPanel::build() {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    auto* top = new QFormLayout;
    label_ = new QLineEdit(this);
    label_->setPlaceholderText(tr("optional; shown in the log and exports"));
    preset_ = new QComboBox(this);
    preset_->addItem(tr("custom"), QString());
    preset_->addItem(tr("course set-up a: b 8, d 16…128, seq 256…16384, fp32"),
                     QStringLiteral("a"));
    preset_->addItem(tr("course set-up b: causal, seq 128…65536, bf16 and fp32"),
                     QStringLiteral("b"));
    preset_->setToolTip(tr("Fills the fields with one of the course's two set-ups"));
    preset_->setObjectName(QStringLiteral("setup"));
    top->addRow(tr("&Label:"), label_);
    top->addRow(tr("Set-&up:"), preset_);
    outer->addLayout(top);

    implBox_ = new QGroupBox(tr("Implementations"), this);
    auto* implGrid = new QGridLayout(implBox_);
    int i = 0;
    for (AttentionImpl impl : allAttentionImpls()) {
        auto* cb = new QCheckBox(qstr(toString(impl)), implBox_);
        impls_.insert(impl, cb);
        implGrid->addWidget(cb, i / 3, i % 3);
        ++i;
    }
    // See Note [attention in Python].
    compiled_ = new QCheckBox(QStringLiteral("torch-compile"), implBox_);
    compiled_->setObjectName(QStringLiteral("torchCompile"));
    implGrid->addWidget(compiled_, i / 3, i % 3);
    outer->addWidget(implBox_);
    code_ = new CodeChoice(/*both=*/false, this, CodeChoice::Purpose::Attention);
    outer->addWidget(code_);

    auto* probBox = new QGroupBox(tr("Problem"), this);
    auto* form = new QFormLayout(probBox);
    seq_ = new QLineEdit(probBox);
    seq_->setToolTip(tr("Sequence lengths; a list sweeps"));
    headDims_ = new QLineEdit(probBox);
    headDims_->setToolTip(tr("Head dimensions; a list sweeps"));
    batches_ = new QLineEdit(probBox);
    heads_ = new QLineEdit(probBox);
    form->addRow(tr("&Sequence lengths:"), seq_);
    form->addRow(tr("&Head dims:"), headDims_);
    form->addRow(tr("&Batch sizes:"), batches_);
    form->addRow(tr("Head &counts:"), heads_);
    dtypeBox_ = makeCheckRow(probBox, allPrecisions(), dtypes_);
    form->addRow(tr("Dtypes:"), dtypeBox_);
    causalBox_ = new QGroupBox(probBox);
    causalBox_->setFlat(true);
    auto* cRow = new QHBoxLayout(causalBox_);
    cRow->setContentsMargins(0, 0, 0, 0);
    causal_ = new QCheckBox(tr("causal"), causalBox_);
    full_ = new QCheckBox(tr("full"), causalBox_);
    cRow->addWidget(causal_);
    cRow->addWidget(full_);
    cRow->addStretch();
    form->addRow(tr("Mask:"), causalBox_);
    outer->addWidget(probBox);

    auto* runBox = new QGroupBox(tr("Execution"), this);
    auto* rform = new QFormLayout(runBox);
    passBox_ = makeCheckRow(runBox, allAttentionPasses(), passes_);
    makeDeviceCombo(runBox);
    warmup_ = new QSpinBox(runBox);
    warmup_->setRange(0, 100000);
    steps_ = new QSpinBox(runBox);
    steps_->setRange(1, 100000);
    check_ = new QCheckBox(tr("check against a float64 reference before timing"), runBox);
    rform->addRow(tr("Passes:"), passBox_);
    rform->addRow(tr("&Device:"), device_);
    rform->addRow(tr("&Warm-up steps:"), warmup_);
    rform->addRow(tr("Measured s&teps:"), steps_);
    rform->addRow(QString(), check_);
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);  // last: when it grows, no field moves

    registerFields({{QStringLiteral("impls"), implBox_},
                    {QStringLiteral("seq"), seq_},
                    {QStringLiteral("head_dims"), headDims_},
                    {QStringLiteral("batches"), batches_},
                    {QStringLiteral("heads"), heads_},
                    {QStringLiteral("dtypes"), dtypeBox_},
                    {QStringLiteral("causal"), causalBox_},
                    {QStringLiteral("passes"), passBox_},
                    {QStringLiteral("warmup"), warmup_},
                    {QStringLiteral("steps"), steps_},
                    {QStringLiteral("device"), device_},
                    {QStringLiteral("sources"), code_->sourceBox()},
                    {QStringLiteral("code"), code_->codeEdit()},
                    {QStringLiteral("python"), code_->pythonEdit()}});

    // Defaults: seconds on a CPU.
    impls_[AttentionImpl::Naive]->setChecked(true);
    impls_[AttentionImpl::Tiled]->setChecked(true);
    impls_[AttentionImpl::Sdpa]->setChecked(true);
    seq_->setText(QStringLiteral("64, 128, 256"));
    headDims_->setText(QStringLiteral("32"));
    batches_->setText(QStringLiteral("1"));
    heads_->setText(QStringLiteral("4"));
    dtypes_[Precision::FP32]->setChecked(true);
    causal_->setChecked(true);
    passes_[AttentionPass::Forward]->setChecked(true);
    passes_[AttentionPass::Backward]->setChecked(true);
    warmup_->setValue(2);
    steps_->setValue(5);
    check_->setChecked(true);

    auto changed = [this] {
        if (updating_) return;
        updateAvailability();
        revalidate();
    };
    for (QLineEdit* e : {label_, seq_, headDims_, batches_, heads_})
        connect(e, &QLineEdit::textChanged, this, changed);
    for (auto* cb : impls_) connect(cb, &QCheckBox::toggled, this, changed);
    for (auto* cb : dtypes_) connect(cb, &QCheckBox::toggled, this, changed);
    for (auto* cb : passes_) connect(cb, &QCheckBox::toggled, this, changed);
    for (QCheckBox* cb : {causal_, full_, check_, compiled_})
        connect(cb, &QCheckBox::toggled, this, changed);
    connect(code_, &CodeChoice::changed, this, changed);
    for (QSpinBox* sb : {warmup_, steps_}) connect(sb, &QSpinBox::valueChanged, this, changed);
    connect(device_, &QComboBox::currentIndexChanged, this, changed);
    connect(preset_, &QComboBox::activated, this,
            [this] { applyPreset(preset_->currentData().toString()); });
    installRunShortcut();
    setLabelField(label_);
    updateAvailability();
}

void AttentionPanel::applyPreset(const QString& name) {
    auto spec = name.isEmpty() ? std::nullopt : attentionPreset(name.toStdString());
    if (!spec) return;
    QJsonObject o;
    QJsonArray impls, dtypes, passes, causal;
    for (AttentionImpl i : spec->impls) impls << qstr(toString(i));
    for (Precision p : spec->dtypes) dtypes << qstr(toString(p));
    for (AttentionPass p : spec->passes) passes << qstr(toString(p));
    for (bool c : spec->causal) causal << (c ? QStringLiteral("causal") : QStringLiteral("full"));
    o[QStringLiteral("impls")] = impls;
    o[QStringLiteral("seq")] = joinInts(spec->seq_lens);
    o[QStringLiteral("head_dims")] = joinInts(spec->head_dims);
    o[QStringLiteral("batches")] = joinInts(spec->batches);
    o[QStringLiteral("heads")] = joinInts(spec->heads);
    o[QStringLiteral("dtypes")] = dtypes;
    o[QStringLiteral("causal")] = causal;
    o[QStringLiteral("passes")] = passes;
    o[QStringLiteral("warmup")] = spec->warmup;
    o[QStringLiteral("steps")] = spec->steps;
    o[QStringLiteral("check")] = spec->check;
    setState(o);
}

void AttentionPanel::updateAvailability() {
    // The engine's own checks say what this machine lacks: the flash kernels and half
    // precisions are probed as a benchmark point on the chosen device would be.
    const bool was = updating_;
    updating_ = true;
    AttentionBenchSpec probe;
    probe.device = device_->currentData().toString().toStdString();
    probe.dtypes = {Precision::FP32};
    probe.impls = {AttentionImpl::Naive};
    auto reason = [&](AttentionBenchSpec s) -> QString {
        if (!capsKnown_) return tr("Checking what this machine can run…");
        QStringList msgs;
        for (const auto& m : checkAttentionRunnable(s)) msgs << qstr(m);
        return msgs.join(QLatin1Char('\n'));
    };
    for (AttentionImpl impl : allAttentionImpls()) {
        AttentionBenchSpec s = probe;
        s.impls = {impl};
        if (impl == AttentionImpl::Flash)
            s.dtypes = {Precision::BF16};  // as our kernels are mostly used
        const QString why = reason(s);
        QCheckBox* cb = impls_[impl];
        cb->setEnabled(why.isEmpty());
        cb->setToolTip(why.isEmpty() ? attentionHint(impl)
                                     : attentionHint(impl) + QLatin1Char('\n') + why);
        if (!why.isEmpty() && capsKnown_) cb->setChecked(false);
    }
    {
        const QString hint =
            tr("torch.compile of the naive attention, run by the Python runner "
               "(the course's compile question (a)); its first call, compiling "
               "included, is shown apart");
        const QString why = qstr(pythonInterpreterProblem(code_->code().python));
        compiled_->setEnabled(why.isEmpty());
        compiled_->setToolTip(why.isEmpty() ? hint : hint + QLatin1Char('\n') + why);
        if (!why.isEmpty()) compiled_->setChecked(false);
    }
    for (Precision p : {Precision::BF16, Precision::FP16}) {
        AttentionBenchSpec s = probe;
        s.dtypes = {p};
        const QString why = reason(s);
        QCheckBox* cb = dtypes_[p];
        cb->setEnabled(why.isEmpty());
        cb->setToolTip(why);
        if (!why.isEmpty() && capsKnown_) cb->setChecked(false);
    }
    updating_ = was;
}

void AttentionPanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    auto add = [&](QWidget* w, const QString& m) {
        if (w && !byField[w].contains(m))
            byField[w] << m;
        else if (!w && !general.contains(m))
            general << m;
    };
    AttentionBenchSpec s;
    QString err;
    auto list = [&](QLineEdit* e, const QString& what, std::vector<int64_t>* out) {
        if (!parseIntList(e->text(), out, &err)) add(e, tr("%1: %2").arg(what, err));
    };
    list(seq_, tr("Sequence lengths"), &s.seq_lens);
    list(headDims_, tr("Head dims"), &s.head_dims);
    list(batches_, tr("Batch sizes"), &s.batches);
    list(heads_, tr("Head counts"), &s.heads);
    s.impls.clear();
    for (AttentionImpl i : allAttentionImpls())
        if (impls_[i]->isChecked()) s.impls.push_back(i);
    s.dtypes.clear();
    for (Precision p : allPrecisions())
        if (dtypes_[p]->isChecked()) s.dtypes.push_back(p);
    s.causal.clear();
    if (causal_->isChecked()) s.causal.push_back(true);
    if (full_->isChecked()) s.causal.push_back(false);
    s.passes.clear();
    for (AttentionPass p : allAttentionPasses())
        if (passes_[p]->isChecked()) s.passes.push_back(p);
    s.warmup = warmup_->value();
    s.steps = steps_->value();
    s.device = device_->currentData().toString().toStdString();
    s.check = check_->isChecked();
    if (compiled_->isChecked()) s.python_impls.push_back("torch-compile");
    if (code_->yours()) {
        s.code = code_->code().code;
        s.python = code_->code().python;
        for (auto& name : defaultUserAttentionImpls(s.code)) s.python_impls.push_back(name);
        if (const QString m = code_->problem(); !m.isEmpty()) add(code_->fieldFor(m), m);
        if (s.code.empty()) add(code_->codeEdit(), tr("Your attention: no code given"));
    }
    // The engine names the bad value; map its words to the field.
    const QList<QPair<QString, QWidget*>> keys = {{QStringLiteral("sequence length"), seq_},
                                                  {QStringLiteral("head dim"), headDims_},
                                                  {QStringLiteral("batch size"), batches_},
                                                  {QStringLiteral("head count"), heads_},
                                                  {QStringLiteral("implementation"), implBox_},
                                                  {QStringLiteral("dtype"), dtypeBox_},
                                                  {QStringLiteral("causal"), causalBox_},
                                                  {QStringLiteral("pass"), passBox_},
                                                  {QStringLiteral("warm-up"), warmup_},
                                                  {QStringLiteral("steps"), steps_},
                                                  {QStringLiteral("device"), device_},
                                                  {QStringLiteral("--code"), code_->codeEdit()}};
    for (const auto& m : validateAttentionSpec(s)) {
        const QString msg = qstr(m);
        QWidget* target = nullptr;
        for (const auto& [k, w] : keys)
            if (msg.contains(k)) {
                target = w;
                break;
            }
        // A list that did not parse is already flagged; "no ... given" adds nothing there.
        if (target && byField.contains(target)) continue;
        add(target, msg);
    }
    cells_ = static_cast<int>((s.impls.size() + s.python_impls.size()) * s.seq_lens.size() *
                              s.head_dims.size() * s.dtypes.size() * s.causal.size() *
                              s.batches.size() * s.heads.size());
    if (byField.isEmpty() && general.isEmpty() && cells_ > kMaxCells)
        general << tr("%1 cells; at most %2 can run at once").arg(cells_).arg(kMaxCells);
    spec_ = s;
    showProblems(byField, general);
    Q_EMIT changed();
}

QString AttentionPanel::summary() const {
    if (!problems_.isEmpty())
        return tr("%n problem(s) to fix before Run", "", static_cast<int>(problems_.size()));
    QStringList impls;
    for (AttentionImpl i : spec_.impls) impls << qstr(toString(i));
    for (const auto& name : spec_.python_impls) impls << qstr(name);
    // "Shapes", not "problems": beside "problem(s) to fix" the word read as errors.
    const int shapes =
        cells_ / std::max<int>(1, static_cast<int>(spec_.impls.size() + spec_.python_impls.size()));
    return tr("%1 cells: %2 × %n shape(s)", "", shapes)
        .arg(cells_)
        .arg(impls.join(QStringLiteral(", ")));
}

std::optional<LabJob> AttentionPanel::makeJob() const {
    if (!problems_.isEmpty() || !capsKnown_ || cells_ == 0) return std::nullopt;
    LabJob job;
    job.lab = QString::fromLatin1(kAttentionLab);
    job.label = label_->text().trimmed();
    job.point_count = cells_;
    job.device = spec_.device;
    job.spec_json = attentionSpecJson(spec_);
    const std::string device = spec_.device;
    job.environment = [device] { return currentEnvironment(device); };
    job.run = [spec = spec_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                             int64_t runId) {
        CellForwarder forward(obs);
        runAttentionBench(spec, forward, cancel, store, runId);
    };
    return job;
}

QJsonObject AttentionPanel::state() const {
    QJsonObject o;
    QJsonArray impls, dtypes, passes, causal;
    for (AttentionImpl i : allAttentionImpls())
        if (impls_[i]->isChecked()) impls << qstr(toString(i));
    for (Precision p : allPrecisions())
        if (dtypes_[p]->isChecked()) dtypes << qstr(toString(p));
    for (AttentionPass p : allAttentionPasses())
        if (passes_[p]->isChecked()) passes << qstr(toString(p));
    if (causal_->isChecked()) causal << QStringLiteral("causal");
    if (full_->isChecked()) causal << QStringLiteral("full");
    o[QStringLiteral("label")] = label_->text();
    o[QStringLiteral("impls")] = impls;
    o[QStringLiteral("seq")] = seq_->text();
    o[QStringLiteral("head_dims")] = headDims_->text();
    o[QStringLiteral("batches")] = batches_->text();
    o[QStringLiteral("heads")] = heads_->text();
    o[QStringLiteral("dtypes")] = dtypes;
    o[QStringLiteral("causal")] = causal;
    o[QStringLiteral("passes")] = passes;
    o[QStringLiteral("warmup")] = warmup_->value();
    o[QStringLiteral("steps")] = steps_->value();
    o[QStringLiteral("device")] = device_->currentData().toString();
    o[QStringLiteral("check")] = check_->isChecked();
    o[QStringLiteral("torch_compile")] = compiled_->isChecked();
    const QJsonObject code = code_->state();
    for (auto it = code.begin(); it != code.end(); ++it) o[it.key()] = it.value();
    return o;
}

void AttentionPanel::setState(const QJsonObject& o, QStringList* notes) {
    updating_ = true;
    auto text = [&](const char* key, QLineEdit* e) {
        if (o.contains(QLatin1String(key)))
            e->setText(o.value(QLatin1String(key)).toVariant().toString());
    };
    if (o.contains(QLatin1String("label")))
        label_->setText(o.value(QLatin1String("label")).toString());
    text("seq", seq_);
    text("head_dims", headDims_);
    text("batches", batches_);
    text("heads", heads_);
    if (o.contains(QLatin1String("impls"))) {
        const QStringList want = stringsOf(o.value(QLatin1String("impls")));
        for (AttentionImpl i : allAttentionImpls())
            impls_[i]->setChecked(want.contains(qstr(toString(i))));
    }
    if (o.contains(QLatin1String("dtypes"))) {
        const QStringList want = stringsOf(o.value(QLatin1String("dtypes")));
        for (Precision p : allPrecisions())
            dtypes_[p]->setChecked(want.contains(qstr(toString(p))));
    }
    if (o.contains(QLatin1String("passes"))) {
        const QStringList want = stringsOf(o.value(QLatin1String("passes")));
        for (AttentionPass p : allAttentionPasses())
            passes_[p]->setChecked(want.contains(qstr(toString(p))));
    }
    if (o.contains(QLatin1String("causal"))) {
        const QStringList want = stringsOf(o.value(QLatin1String("causal")));
        causal_->setChecked(want.contains(QStringLiteral("causal")));
        full_->setChecked(want.contains(QStringLiteral("full")));
    }
    if (o.contains(QLatin1String("warmup")))
        warmup_->setValue(o.value(QLatin1String("warmup")).toInt());
    if (o.contains(QLatin1String("steps")))
        steps_->setValue(o.value(QLatin1String("steps")).toInt());
    if (o.contains(QLatin1String("check")))
        check_->setChecked(o.value(QLatin1String("check")).toBool());
    if (o.contains(QLatin1String("torch_compile")))
        compiled_->setChecked(o.value(QLatin1String("torch_compile")).toBool());
    code_->setState(o);  // states saved before the field: no code of the user's
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
    QList<AttentionImpl> implsWanted;
    for (AttentionImpl i : allAttentionImpls())
        if (impls_[i]->isChecked()) implsWanted << i;
    QStringList halfWanted;
    for (Precision p : {Precision::BF16, Precision::FP16})
        if (dtypes_[p]->isChecked()) halfWanted << qstr(toString(p));
    updateAvailability();
    if (notes && capsKnown_) {
        for (AttentionImpl i : implsWanted)
            if (!impls_[i]->isChecked())
                *notes << tr("%1 left out: %2")
                              .arg(qstr(toString(i)),
                                   impls_[i]->toolTip().section(QLatin1Char('\n'), 1));
        for (Precision p : {Precision::BF16, Precision::FP16})
            if (halfWanted.contains(qstr(toString(p))) && !dtypes_[p]->isChecked())
                *notes << tr("%1 left out: %2").arg(qstr(toString(p)), dtypes_[p]->toolTip());
    }
    bool anyDtype = false;
    for (auto* cb : dtypes_) anyDtype |= cb->isChecked();
    if (!anyDtype && capsKnown_) dtypes_[Precision::FP32]->setChecked(true);
    updating_ = false;
    revalidate();
}

// ---------------------------------------------------------------- stored specs

namespace {
QStringList causalNames(const QJsonValue& v) {
    QStringList out;
    for (const QJsonValue& x : v.toArray())
        out << (x.toBool() ? QStringLiteral("causal") : QStringLiteral("full"));
    return out;
}
}  // namespace

QString AttentionPanel::describeSpec(const QJsonObject& s) {
    const QString comma = QStringLiteral(", ");
    QStringList parts;
    parts << (jsonListText(s.value(QLatin1String("impls"))) +
              jsonListText(s.value(QLatin1String("python_impls"))))
                 .join(comma)
          << QStringLiteral("seq ") + jsonListText(s.value(QLatin1String("seq_lens"))).join(comma)
          << QStringLiteral("d ") + jsonListText(s.value(QLatin1String("head_dims"))).join(comma)
          << jsonListText(s.value(QLatin1String("dtypes"))).join(comma)
          << causalNames(s.value(QLatin1String("causal"))).join(comma)
          << jsonListText(s.value(QLatin1String("passes"))).join(comma)
          << QStringLiteral("b ") + jsonListText(s.value(QLatin1String("batches"))).join(comma)
          << QStringLiteral("h ") + jsonListText(s.value(QLatin1String("heads"))).join(comma)
          << QObject::tr("warm-up %1").arg(s.value(QLatin1String("warmup")).toInteger())
          << QObject::tr("steps %1").arg(s.value(QLatin1String("steps")).toInteger())
          << s.value(QLatin1String("device")).toString();
    return parts.join(QStringLiteral(" · "));
}

QJsonObject AttentionPanel::stateFromSpec(const QJsonObject& s) {
    const QString comma = QStringLiteral(", ");
    QJsonObject o;
    o[QStringLiteral("impls")] =
        QJsonArray::fromStringList(jsonListText(s.value(QLatin1String("impls"))));
    o[QStringLiteral("seq")] = jsonListText(s.value(QLatin1String("seq_lens"))).join(comma);
    o[QStringLiteral("head_dims")] = jsonListText(s.value(QLatin1String("head_dims"))).join(comma);
    o[QStringLiteral("batches")] = jsonListText(s.value(QLatin1String("batches"))).join(comma);
    o[QStringLiteral("heads")] = jsonListText(s.value(QLatin1String("heads"))).join(comma);
    o[QStringLiteral("dtypes")] =
        QJsonArray::fromStringList(jsonListText(s.value(QLatin1String("dtypes"))));
    o[QStringLiteral("causal")] =
        QJsonArray::fromStringList(causalNames(s.value(QLatin1String("causal"))));
    o[QStringLiteral("passes")] =
        QJsonArray::fromStringList(jsonListText(s.value(QLatin1String("passes"))));
    o[QStringLiteral("warmup")] = s.value(QLatin1String("warmup"));
    o[QStringLiteral("steps")] = s.value(QLatin1String("steps"));
    o[QStringLiteral("device")] = s.value(QLatin1String("device"));
    o[QStringLiteral("check")] = s.value(QLatin1String("check"));
    // See Note [attention in Python]: torch-compile is a tick; the user's, their code.
    const QStringList python = jsonListText(s.value(QLatin1String("python_impls")));
    o[QStringLiteral("torch_compile")] = python.contains(QStringLiteral("torch-compile"));
    const QString code = s.value(QLatin1String("code")).toString();
    o[QStringLiteral("sources")] = QJsonArray::fromStringList(
        code.isEmpty() ? QStringList{} : QStringList{QStringLiteral("python")});
    if (!code.isEmpty()) o[QStringLiteral("code")] = code;
    o[QStringLiteral("python")] = s.value(QLatin1String("python")).toString();
    return o;
}

}  // namespace ts::ui
