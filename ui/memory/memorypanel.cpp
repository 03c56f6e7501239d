#include "ui/memory/memorypanel.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/store.h"
#include "memory/memory_json.h"
#include "memory/memory_report.h"
#include "runtime/environment.h"
#include "ui/common/dimensionfields.h"
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

}  // namespace

MemoryPanel::MemoryPanel(QWidget* parent) : LabPanel(parent) {
    qRegisterMetaType<MemoryResult>();
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    addLabelRow(outer, tr("optional; shown in the log and exports"));
    code_ = addCode(outer, /*both=*/false);
    auto* pointBox = new QGroupBox(tr("Point"), this);
    point_ = std::make_unique<PointForm>(
        this, new QFormLayout(pointBox),
        PointForm::Options{.dimensions = true,
                           .attentions = QList<AttentionImpl>(allAttentionImpls().begin(),
                                                              allAttentionImpls().end())});
    outer->addWidget(pointBox);

    auto* runBox = new QGroupBox(tr("Recording"), this);
    auto* rform = new QFormLayout(runBox);
    addDevice(rform, tr("&Device:"));
    warmup_ = addSpin(rform, QStringLiteral("warmup"), tr("&Warm-up steps:"), 0, 1000, 2);
    steps_ = addSpin(rform, QStringLiteral("record_steps"), tr("&Recorded steps:"), 1,
                     kMaxRecordSteps, 2);
    frontier_ = addCombo(
        rform, QStringLiteral("frontier"), tr("&Frontier:"),
        {{tr("none"), QStringLiteral("none"), {}},
         {tr("largest context that fits"), QStringLiteral("context"), {}},
         {tr("largest batch that fits"), QStringLiteral("batch"), {}}},
        QStringLiteral("none"),
        tr("After the recorded steps, bisect for the largest context or batch whose step fits "
           "on this GPU (an out-of-memory is the answer, not an error)"));
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);
    installRunShortcut();
    revalidate();
}

MemoryPanel::~MemoryPanel() = default;

void MemoryPanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    MemorySpec s;
    s.bench = point_->point(byField);
    s.bench.warmup = warmup_->value();
    s.record_steps = steps_->value();
    s.frontier = parseFrontierAxis(frontier_->currentData().toString().toStdString())
                     .value_or(FrontierAxis::None);
    const std::vector<Source> sources = code_->sources();
    s.bench.source = sources.empty() ? Source::TrainScope : sources.front();
    s.bench.python = code_->code();
    // The user's model has its own attention: the field does not apply to it.
    point_->attention()->setEnabled(s.bench.source == Source::TrainScope);
    spec_ = s;

    QStringList general;
    const QList<QPair<QString, QWidget*>> keys = {
        {QStringLiteral("context"), fieldWidget(QStringLiteral("context"))},
        {QStringLiteral("batch"), fieldWidget(QStringLiteral("batch"))},
        {QStringLiteral("precision"), fieldWidget(QStringLiteral("precision"))},
        {QStringLiteral("attention"), point_->attention()},
        {QStringLiteral("warm-up"), warmup_},
        {QStringLiteral("recorded steps"), steps_},
        {QStringLiteral("frontier"), frontier_},
        {QStringLiteral("device"), device_}};
    std::vector<std::string> problems = validateMemory(s);
    if (problems.empty() && capsKnown_) problems = checkPointRunnable(s.bench);
    if (const QString m = code_->problem(); !m.isEmpty()) problems.push_back(m.toStdString());
    for (const auto& m : problems) {
        const QString msg = qstr(m);
        QWidget* target = code_->fieldFor(msg);
        if (!target) target = point_->fieldFor(msg);
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

QString MemoryPanel::runSummary() const {
    QString s = qstr(memoryHeadline(MemoryResult{spec_}));
    if (spec_.bench.device == "cpu")
        s +=
            tr(" — on the CPU nothing is measured (it has no caching allocator): a run shows "
               "the analytic model only and is stored as not ok; pick a CUDA device to record");
    return s;
}

std::optional<LabJob> MemoryPanel::makeJob() const {
    if (!problems_.isEmpty() || !capsKnown_) return std::nullopt;
    LabJob job = newJob(kMemoryLab, spec_.bench.device, 1);
    job.spec_json = memorySpecJson({spec_});
    job.run = [spec = spec_](JobObserver& obs, const CancelToken& cancel, ResultStore* store,
                             int64_t runId) {
        MemoryForwarder forward(obs);
        runMemory(spec, forward, cancel, store, runId, 0, 1);
    };
    return job;
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
    QJsonObject o = PointForm::stateFromPoint(s.value(QLatin1String("bench")).toObject(), true);
    o.remove(QLatin1String("custom"));  // the panel offers the presets only
    o[QStringLiteral("record_steps")] = s.value(QLatin1String("record_steps"));
    o[QStringLiteral("frontier")] = s.value(QLatin1String("frontier"));
    return o;
}

}  // namespace ts::ui
