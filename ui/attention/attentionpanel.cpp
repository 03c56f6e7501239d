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
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    QFormLayout* top = addLabelRow(outer, tr("optional; shown in the log and exports"));
    preset_ = new QComboBox(this);
    preset_->addItem(tr("custom"), QString());
    preset_->addItem(tr("course set-up a: b 8, d 16…128, seq 256…16384, fp32"),
                     QStringLiteral("a"));
    preset_->addItem(tr("course set-up b: causal, seq 128…65536, bf16 and fp32"),
                     QStringLiteral("b"));
    preset_->setToolTip(tr("Fills the fields with one of the course's two set-ups"));
    preset_->setObjectName(QStringLiteral("setup"));
    top->addRow(tr("Set-&up:"), preset_);
    connect(preset_, &QComboBox::activated, this,
            [this] { applyPreset(preset_->currentData().toString()); });

    // Defaults: seconds on a CPU.
    implBox_ =
        addChecks(nullptr, QStringLiteral("impls"), {}, choicesOf(allAttentionImpls()),
                  {QStringLiteral("naive"), QStringLiteral("tiled"), QStringLiteral("sdpa")}, 3);
    implBox_->setTitle(tr("Implementations"));
    implBox_->setFlat(false);
    // See Note [attention in Python].
    compiled_ =
        addCheck(nullptr, QStringLiteral("torch_compile"), QStringLiteral("torch-compile"), false);
    compiled_->setObjectName(QStringLiteral("torchCompile"));
    const int n = static_cast<int>(allAttentionImpls().size());
    static_cast<QGridLayout*>(implBox_->layout())->addWidget(compiled_, n / 3, n % 3);
    outer->addWidget(implBox_);
    code_ = addCode(outer, /*both=*/false, CodeChoice::Purpose::Attention);

    auto* probBox = new QGroupBox(tr("Problem"), this);
    auto* form = new QFormLayout(probBox);
    seq_ = addText(form, QStringLiteral("seq"), tr("&Sequence lengths:"),
                   QStringLiteral("64, 128, 256"), tr("Sequence lengths; a list sweeps"));
    headDims_ = addText(form, QStringLiteral("head_dims"), tr("&Head dims:"), QStringLiteral("32"),
                        tr("Head dimensions; a list sweeps"));
    batches_ = addText(form, QStringLiteral("batches"), tr("&Batch sizes:"), QStringLiteral("1"));
    heads_ = addText(form, QStringLiteral("heads"), tr("Head &counts:"), QStringLiteral("4"));
    dtypeBox_ = addChecks(form, QStringLiteral("dtypes"), tr("Dtypes:"), choicesOf(allPrecisions()),
                          {QStringLiteral("fp32")});
    causalBox_ = addChecks(
        form, QStringLiteral("causal"), tr("Mask:"),
        {{tr("causal"), QStringLiteral("causal"), {}}, {tr("full"), QStringLiteral("full"), {}}},
        {QStringLiteral("causal")});
    outer->addWidget(probBox);

    auto* runBox = new QGroupBox(tr("Execution"), this);
    auto* rform = new QFormLayout(runBox);
    passBox_ = addChecks(
        rform, QStringLiteral("passes"), tr("Passes:"), choicesOf(allAttentionPasses()),
        {qstr(toString(AttentionPass::Forward)), qstr(toString(AttentionPass::Backward))});
    addDevice(rform, tr("&Device:"));
    warmup_ = addSpin(rform, QStringLiteral("warmup"), tr("&Warm-up steps:"), 0, 100000, 2);
    steps_ = addSpin(rform, QStringLiteral("steps"), tr("Measured s&teps:"), 1, 100000, 5);
    check_ = addCheck(rform, QStringLiteral("check"),
                      tr("check against a float64 reference before timing"), true);
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);  // last: when it grows, no field moves
    for (AttentionImpl i : allAttentionImpls())
        impls_[i] = checkBox(QStringLiteral("impls"), qstr(toString(i)));
    for (Precision p : allPrecisions())
        dtypes_[p] = checkBox(QStringLiteral("dtypes"), qstr(toString(p)));
    for (AttentionPass p : allAttentionPasses())
        passes_[p] = checkBox(QStringLiteral("passes"), qstr(toString(p)));
    causal_ = checkBox(QStringLiteral("causal"), QStringLiteral("causal"));
    full_ = checkBox(QStringLiteral("causal"), QStringLiteral("full"));
    installRunShortcut();
    updateAvailability();
    revalidate();
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

QString AttentionPanel::runSummary() const {
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
    LabJob job = newJob(kAttentionLab, spec_.device, cells_);
    job.spec_json = attentionSpecJson(spec_);
    job.run = [spec = spec_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                             int64_t runId) {
        CellForwarder forward(obs);
        runAttentionBench(spec, forward, cancel, store, runId);
    };
    return job;
}

void AttentionPanel::stateLoaded(const QJsonObject& o, QStringList* notes) {
    // What this machine lacks was dropped (updateAvailability): said so.
    if (notes)
        *notes << leftOut(o, QStringLiteral("impls"), true)
               << leftOut(o, QStringLiteral("dtypes"), false);
    if (ticked(QStringLiteral("dtypes")).isEmpty() && capsKnown_)
        dtypes_[Precision::FP32]->setChecked(true);
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
