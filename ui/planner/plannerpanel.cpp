#include "ui/planner/plannerpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "planner/planner_report.h"
#include "runtime/environment.h"
#include "ui/common/format.h"
#include "ui/planner/plannermodel.h"

namespace ts::ui {

namespace {

QString plannerG(double v) { return QString::number(v, 'g', 12); }

const QString kCustom = QStringLiteral("custom");

}  // namespace

PlannerPanel::PlannerPanel(QWidget* parent) : LabPanel(parent) {
    registerPlannerMetaTypes();
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    addLabelRow(outer, tr("optional; shown in the log and exports"));
    // Defaults: an H100's dense bf16 and NVLink egress, the course's xl on 8 × 2 devices.
    const PlannerInputs d;

    auto* device = new QGroupBox(tr("The device"), this);
    auto* df = new QFormLayout(device);
    flops_ = addText(df, QStringLiteral("C"), tr("&C (FLOP/s):"), QStringLiteral("989e12"),
                     tr("C: one device's FLOP/s, e.g. 989e12 (an H100's dense bf16)"));
    bandwidth_ = addText(df, QStringLiteral("W"), tr("&W (GB/s):"), QStringLiteral("450"),
                         tr("W: the GB/s one device sends (egress), e.g. 450"));
    outer->addWidget(device);

    auto* work = new QGroupBox(tr("The model and batch"), this);
    auto* wf = new QFormLayout(work);
    QList<Choice> models{{tr("custom (D, D_FF, L below)"), kCustom, {}}};
    for (const std::string& n : modelPresetNames()) models.push_back({qstr(n), qstr(n), {}});
    model_ = addCombo(wf, QStringLiteral("model"), tr("&Model:"), models, kCustom,
                      tr("A preset fills D, D_FF and L and adds its whole step's prediction"));
    batch_ = addText(wf, QStringLiteral("B"), tr("&B (tokens):"), QStringLiteral("131072"),
                     tr("B: tokens of one step, over all devices (batch × context)"));
    const int maxDim = static_cast<int>(kMaxPlannerDim);
    dModel_ = addSpin(wf, QStringLiteral("d_model"), tr("&D (d_model):"), 0, maxDim, 2560);
    dFf_ = addSpin(wf, QStringLiteral("d_ff"), tr("D_&FF:"), 0, maxDim, 10240);
    layers_ = addSpin(wf, QStringLiteral("layers"), tr("&L (layers):"), 0, 100000, 32);
    context_ = addSpin(wf, QStringLiteral("context"), tr("Conte&xt:"), 1, 1 << 20, 2048,
                       tr("The model's context length (its attention FLOPs)"));
    outer->addWidget(work);

    auto* par = new QGroupBox(tr("Parallelism"), this);
    auto* pf = new QFormLayout(par);
    const int maxDegree = static_cast<int>(kMaxPlannerDegree);
    dp_ = addSpin(pf, QStringLiteral("dp"), tr("&X (data):"), 0, maxDegree, 8,
                  tr("X: devices along the data axis (DP, FSDP)"));
    tp_ = addSpin(pf, QStringLiteral("tp"), tr("&Y (tensor):"), 0, maxDegree, 2,
                  tr("Y: devices along the tensor axis (TP)"));
    commBytes_ =
        addText(pf, QStringLiteral("comm_bytes"), tr("&b (bytes/element):"), plannerG(d.comm_bytes),
                tr("b: bytes of a communicated element (the course: fp16, 2)"));
    paramBytes_ =
        addText(pf, QStringLiteral("param_bytes"), tr("Weight bytes:"), plannerG(d.param_bytes));
    gradBytes_ =
        addText(pf, QStringLiteral("grad_bytes"), tr("Gradient bytes:"), plannerG(d.grad_bytes));
    optBytes_ = addText(pf, QStringLiteral("optimizer_bytes"), tr("Optimizer bytes:"),
                        plannerG(d.optimizer_bytes),
                        tr("Optimizer state per parameter (AdamW's two fp32 moments: 8)"));
    overlap_ = addCheck(pf, QStringLiteral("overlap"), tr("2-D: the two axes' collectives overlap"),
                        d.overlap_axes,
                        tr("On: the time of the two axes' collectives is the larger (the course's "
                           "fsdp_tp_calcs (c)); off: they share the links, the sum ((d))"));
    outer->addWidget(par);

    auto* run = new QGroupBox(tr("Run"), this);
    auto* rf = new QFormLayout(run);
    addDevice(rf, tr("D&evice:"))->setToolTip(tr("Where Measure times its GEMM and all-reduce"));
    registerFields({{QStringLiteral("device"), device_}});  // with its tooltip
    measure_ =
        addCheck(rf, QStringLiteral("measure"), tr("measure C and W on this machine first"), false);
    compute_ = new QPushButton(tr("Co&mpute"), run);
    compute_->setToolTip(tr("The formulas from the fields alone; no GPU needed"));
    measureButton_ = new QPushButton(tr("M&easure"), run);
    measureButton_->setToolTip(
        tr("Measure this machine's C (a GEMM) and W (an all-reduce between its devices), then "
           "plan with them"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(compute_);
    buttons->addWidget(measureButton_);
    rf->addRow(buttons);
    outer->addWidget(run);
    outer->addStretch();
    addStatusLabels(outer);
    connect(compute_, &QPushButton::clicked, this, [this] { request(false); });
    connect(measureButton_, &QPushButton::clicked, this, [this] { request(true); });
    installRunShortcut();
    updateAvailability();
    revalidate();
}

bool PlannerPanel::measures() const { return measure_->isChecked(); }

void PlannerPanel::request(bool measure) {
    measure_->setChecked(measure);
    if (isValid()) Q_EMIT runRequested();
}

void PlannerPanel::updateAvailability() {
    const bool was = updating_;
    updating_ = true;
    const bool preset = model_->currentData().toString() != kCustom;
    if (preset)
        if (const auto m = modelPreset(model_->currentData().toString().toStdString())) {
            dModel_->setValue(static_cast<int>(m->d_model));
            dFf_->setValue(static_cast<int>(m->d_ff));
            layers_->setValue(static_cast<int>(m->num_layers));
        }
    for (QSpinBox* s : {dModel_, dFf_, layers_}) s->setEnabled(!preset);
    context_->setEnabled(preset);
    device_->setEnabled(measure_->isChecked());
    flops_->setEnabled(!measure_->isChecked());
    updating_ = was;
}

void PlannerPanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    auto add = [&](QWidget* w, const QString& m) {
        if (w && !byField[w].contains(m))
            byField[w] << m;
        else if (!w && !general.contains(m))
            general << m;
    };
    auto number = [&](QLineEdit* e, const QString& what, double* out) {
        bool ok = false;
        const double v = e->text().trimmed().toDouble(&ok);
        if (!ok)
            add(e, tr("%1: '%2' is not a number").arg(what, e->text().trimmed()));
        else
            *out = v;
    };
    const bool measure = measure_->isChecked();
    PlannerInputs in;
    if (!measure) number(flops_, tr("C"), &in.flops);
    double gbps = 0;
    // Measuring fills W; the field is the fallback where no all-reduce can be measured.
    if (!measure || !bandwidth_->text().trimmed().isEmpty()) number(bandwidth_, tr("W"), &gbps);
    in.bandwidth = gbps * 1e9;
    number(batch_, tr("B"), &in.batch_tokens);
    in.d_model = dModel_->value();
    in.d_ff = dFf_->value();
    in.layers = layers_->value();
    in.dp = dp_->value();
    in.tp = tp_->value();
    number(commBytes_, tr("bytes per element"), &in.comm_bytes);
    number(paramBytes_, tr("weight bytes"), &in.param_bytes);
    number(gradBytes_, tr("gradient bytes"), &in.grad_bytes);
    number(optBytes_, tr("optimizer bytes"), &in.optimizer_bytes);
    in.overlap_axes = overlap_->isChecked();
    const QString preset = model_->currentData().toString();
    if (preset != kCustom)
        if (auto m = modelPreset(preset.toStdString())) {
            m->context_length = context_->value();
            in.model = *m;
        }
    PlannerInputs check = in;
    if (measure) {
        check.flops = 1;
        if (check.bandwidth <= 0) check.bandwidth = 1;
    }
    // The engine's sentences, each to the field it names (the first key found).
    const QList<QPair<QString, QWidget*>> keys = {{QStringLiteral("C (FLOP/s)"), flops_},
                                                  {QStringLiteral("W (bytes/s)"), bandwidth_},
                                                  {QStringLiteral("d_ff"), dFf_},
                                                  {QStringLiteral("d_model"), dModel_},
                                                  {QStringLiteral("batch"), batch_},
                                                  {QStringLiteral("layers"), layers_},
                                                  {QStringLiteral("data-parallel"), dp_},
                                                  {QStringLiteral("tensor-parallel"), tp_},
                                                  {QStringLiteral("communicated"), commBytes_},
                                                  {QStringLiteral("per parameter"), paramBytes_},
                                                  {QStringLiteral("per gradient"), gradBytes_},
                                                  {QStringLiteral("optimizer"), optBytes_},
                                                  {QStringLiteral("model"), model_}};
    for (const std::string& e : validatePlannerInputs(check)) {
        const QString msg = qstr(e);
        QWidget* target = nullptr;
        for (const auto& [k, w] : keys)
            if (msg.contains(k)) {
                target = w;
                break;
            }
        if (target && byField.contains(target)) continue;  // already flagged as unparsable
        add(target, msg);
    }
    if (measure && capsKnown_)
        for (const std::string& e : checkRunnable(
                 {device_->currentData().toString().startsWith(QLatin1String("cuda")) ? "cuda"
                                                                                      : "cpu",
                  {},
                  {}}))
            add(device_, qstr(e));
    inputs_ = in;
    showProblems(byField, general);
    compute_->setEnabled(true);
    measureButton_->setEnabled(capsKnown_);
    Q_EMIT changed();
}

QString PlannerPanel::runSummary() const {
    return tr("%1plan D %2, D_FF %3, %4 layers, B %5 on X %6 × Y %7")
        .arg(measures() ? tr("measure C and W, then ") : QString())
        .arg(inputs_.d_model)
        .arg(inputs_.d_ff)
        .arg(inputs_.layers)
        .arg(inputs_.batch_tokens, 0, 'g', 12)
        .arg(inputs_.dp)
        .arg(inputs_.tp);
}

std::optional<LabJob> PlannerPanel::makeJob() const {
    if (!problems_.isEmpty()) return std::nullopt;
    if (measures() && !capsKnown_) return std::nullopt;
    std::optional<MeasureSpec> measure;
    if (measures()) {
        MeasureSpec s;
        s.device =
            device_->currentData().toString().startsWith(QLatin1String("cuda")) ? "cuda" : "cpu";
        measure = s;
    }
    LabJob job = newJob(kPlannerLab, measure ? measure->device : "cpu", 1);
    job.spec_json = plannerSpecJson(inputs_, measure);
    job.run = [in = inputs_, measure](JobObserver& obs, const CancelToken& cancel,
                                      ResultStore* store, int64_t runId) {
        // The job's observer is the engine's: its progress and log lines go straight through.
        const PlannerReport r = runPlanner(in, measure, obs, cancel, store, runId);
        obs.item(QVariant::fromValue(r));
    };
    return job;
}

QString PlannerPanel::describeSpec(const QJsonObject& s) {
    const QString dot = QStringLiteral(" · ");
    const QJsonObject model = s.value(QLatin1String("model")).toObject();
    QString what = model.isEmpty()
                       ? QObject::tr("D %1, D_FF %2, %3 layers")
                             .arg(s.value(QLatin1String("d_model")).toInteger())
                             .arg(s.value(QLatin1String("d_ff")).toInteger())
                             .arg(s.value(QLatin1String("layers")).toInteger())
                       : QObject::tr("model %1").arg(model.value(QLatin1String("name")).toString());
    const bool measured = s.value(QLatin1String("measure")).isObject();
    return QObject::tr("plan: %1").arg(what) + dot +
           QObject::tr("B %1").arg(s.value(QLatin1String("B")).toDouble(), 0, 'g', 12) + dot +
           QObject::tr("X %1 × Y %2")
               .arg(s.value(QLatin1String("dp")).toInteger())
               .arg(s.value(QLatin1String("tp")).toInteger()) +
           dot +
           (measured ? QObject::tr("C and W measured on %1")
                           .arg(s.value(QLatin1String("measure"))
                                    .toObject()
                                    .value(QLatin1String("device"))
                                    .toString())
                     : QObject::tr("C %1, W %2")
                           .arg(qstr(formatFlopRate(s.value(QLatin1String("C")).toDouble())),
                                qstr(formatByteRate(s.value(QLatin1String("W")).toDouble()))));
}

QJsonObject PlannerPanel::stateFromSpec(const QJsonObject& s) {
    QJsonObject o;
    const QJsonValue measure = s.value(QLatin1String("measure"));
    o[QStringLiteral("measure")] = measure.isObject();
    if (measure.isObject())
        o[QStringLiteral("device")] = measure.toObject().value(QLatin1String("device"));
    if (s.value(QLatin1String("C")).toDouble() > 0)
        o[QStringLiteral("C")] = plannerG(s.value(QLatin1String("C")).toDouble());
    if (s.value(QLatin1String("W")).toDouble() > 0)
        o[QStringLiteral("W")] = plannerG(s.value(QLatin1String("W")).toDouble() / 1e9);
    o[QStringLiteral("B")] = plannerG(s.value(QLatin1String("B")).toDouble());
    const QJsonObject model = s.value(QLatin1String("model")).toObject();
    o[QStringLiteral("model")] =
        model.isEmpty() ? kCustom : model.value(QLatin1String("name")).toString();
    if (!model.isEmpty())
        o[QStringLiteral("context")] = model.value(QLatin1String("context_length"));
    for (const char* k : {"d_model", "d_ff", "layers", "dp", "tp"})
        o[QLatin1String(k)] = s.value(QLatin1String(k));
    for (const char* k : {"comm_bytes", "param_bytes", "grad_bytes", "optimizer_bytes"})
        o[QLatin1String(k)] = plannerG(s.value(QLatin1String(k)).toDouble());
    o[QStringLiteral("overlap")] = s.value(QLatin1String("overlap_axes")).toBool(true);
    return o;
}

}  // namespace ts::ui
