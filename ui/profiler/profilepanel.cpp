#include "ui/profiler/profilepanel.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QSpinBox>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "profiler/profiler.h"
#include "profiler/profiler_json.h"
#include "ui/common/format.h"
#include "ui/common/metatypes.h"
#include "ui/common/pointformat.h"
#include "ui/profiler/profileanalysis.h"

namespace ts::ui {

namespace {
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

}  // namespace

ProfilePanel::ProfilePanel(QWidget* parent) : LabPanel(parent) {
    qRegisterMetaType<StepSample>();
    qRegisterMetaType<ProfileAnalysis>();
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    addLabelRow(outer, tr("optional; shown in the history"));
    code_ = addCode(outer, /*both=*/false);
    auto* modelBox = new QGroupBox(tr("The point to profile"), this);
    // The model's attention backends (the forced SDPA ones belong to the attention lab).
    point_ = std::make_unique<PointForm>(this, new QFormLayout(modelBox),
                                         PointForm::Options{.custom = true, .probe = true});
    outer->addWidget(modelBox);

    auto* runBox = new QGroupBox(tr("Profiling"), this);
    auto* rform = new QFormLayout(runBox);
    addDevice(rform, tr("&Device:"));
    warmup_ = addSpin(rform, QStringLiteral("warmup"), tr("&Warm-up steps:"), 0, kMaxSteps, 2,
                      tr("steps run first, not profiled: the first steps are slow"));
    steps_ = addSpin(rform, QStringLiteral("profile_steps"), tr("Profiled s&teps:"), 1,
                     kMaxProfileSteps, 2, tr("steps run under the profiler"));
    compiled_ =
        addCheck(rform, QStringLiteral("compiled"),
                 tr("C&ompiled: CUDA graphs (TrainScope's model), torch.compile (yours)"), false,
                 tr("TrainScope's model: the fused kernels' step captured as three CUDA "
                    "graphs in the first warm-up step (recorded, to name each replayed "
                    "kernel's op and model range) and replayed; CUDA only. Your code: "
                    "your model under torch.compile."));
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);
    installRunShortcut();
    updateAvailability();
    revalidate();
}

ProfilePanel::~ProfilePanel() = default;

void ProfilePanel::updateAvailability() {
    // Each precision and backend is probed on the chosen device with a tiny point, so that
    // the reason is about the option, not the sizes (as the benchmark's panel does).
    const bool was = updating_;
    updating_ = true;
    point_->updateAvailability();
    updating_ = was;
}

void ProfilePanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    ProfileSpec s;
    s.bench = point_->point(byField);
    s.bench.warmup = warmup_->value();
    s.bench.steps = 1;
    s.bench.exec = compiled_->isChecked() ? ExecMode::Compiled : ExecMode::Eager;
    s.profile_steps = steps_->value();
    const std::vector<Source> sources = code_->sources();
    s.bench.source = sources.empty() ? Source::TrainScope : sources.front();
    s.bench.python = code_->code();
    // The user's model has its own attention: the field does not apply to it.
    point_->attention()->setEnabled(s.bench.source == Source::TrainScope);
    auto add = [&](const std::string& m) {
        QString msg = qstr(m);
        // The engine names the bad value in each message.
        QWidget* w = code_->fieldFor(msg);
        if (!w) w = point_->fieldFor(msg);
        if (!w && msg.startsWith(QLatin1String("profile steps"))) w = steps_;
        if (!w && msg.contains(QLatin1String("compiled mode"))) w = compiled_;
        if (!w && msg.contains(QLatin1String("warmup"))) w = warmup_;
        if (!w && msg.contains(QLatin1String("device"))) w = device_;
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

QString ProfilePanel::runSummary() const {
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
    LabJob job = newJob(kProfileLab, spec_.bench.device, 1);
    job.spec_json = profileSpecJson(spec_);
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
    if (bench.value(QLatin1String("exec")).toString() == QLatin1String("compiled"))
        parts << QObject::tr("compiled");
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
    QJsonObject o = PointForm::stateFromPoint(s.value(QLatin1String("bench")).toObject(), false);
    o[QStringLiteral("profile_steps")] = s.value(QLatin1String("profile_steps"));
    o[QStringLiteral("compiled")] =
        s.value(QLatin1String("bench")).toObject().value(QLatin1String("exec")).toString() ==
        QLatin1String("compiled");
    return o;
}

}  // namespace ts::ui
