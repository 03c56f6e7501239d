#include "ui/benchmark/rundocument.h"

#include "ui/common/format.h"
#include "ui/common/pointformat.h"

namespace ts::ui {

RunDocument::RunDocument(QObject* parent) : QObject(parent) {}

void RunDocument::begin(Source source, const QString& label, int pointCount) {
    steps_.clear();
    results_.clear();
    source_ = source;
    storeRunId_ = 0;
    label_ = label;
    pointCount_ = pointCount;
    currentPoint_ = -1;
    env_ = {};
    Q_EMIT infoChanged();
}

void RunDocument::clear() { begin(Source::None, {}, 0); }

void RunDocument::setStoreRunId(qint64 id) {
    storeRunId_ = id;
    Q_EMIT infoChanged();
}

void RunDocument::setEnvironment(const Environment& env) {
    env_ = env;
    Q_EMIT infoChanged();
}

void RunDocument::startPoint(int index, const PointConfig& config) {
    currentPoint_ = index;
    steps_.setMeasuresMemory(index, measuresDeviceMemory(config));
    results_.setRunning(index, config);
    Q_EMIT pointStarted(index);
    Q_EMIT infoChanged();
}

void RunDocument::addSteps(int point, const QList<StepSample>& steps) {
    steps_.appendSteps(point, steps);
}

void RunDocument::finishPoint(int index, const BenchResult& result) {
    results_.setResult(index, result);
    // The engine stamps each point; the first one is the run's environment.
    if (env_.device_name.empty() && env_.torch_version.empty()) setEnvironment(result.environment);
}

void RunDocument::load(const StoredBenchRun& run) {
    begin(Source::Stored, qstr(run.info.label), static_cast<int>(run.points.size()));
    storeRunId_ = run.info.id;
    for (size_t i = 0; i < run.points.size(); ++i) {
        const auto& p = run.points[i];
        steps_.setMeasuresMemory(static_cast<int>(i), measuresDeviceMemory(p.config));
        steps_.appendSteps(static_cast<int>(i), QList<StepSample>(p.steps.begin(), p.steps.end()));
    }
    results_.setResults(run.points);
    if (!run.points.empty()) env_ = run.points.front().environment;
    currentPoint_ = run.points.empty() ? -1 : 0;
    Q_EMIT infoChanged();
}

QString RunDocument::title() const {
    QString t;
    switch (source_) {
        case Source::None:
            return tr("No run");
        case Source::Live:
            t = storeRunId_ > 0 ? tr("Run %1").arg(storeRunId_) : tr("Run");
            break;
        case Source::Stored:
            t = tr("Run %1").arg(storeRunId_);
            break;
        case Source::Replay:
            t = tr("Replay of run %1").arg(storeRunId_);
            break;
    }
    if (!label_.isEmpty()) t += QStringLiteral(" — ") + label_;
    return t;
}

ExportContext RunDocument::exportContext() const {
    ExportContext ctx;
    ctx.runLabel = label_;
    ctx.storeRunId = storeRunId_;
    ctx.environment = env_;
    const std::vector<PointConfig> configs = results_.configs();
    ctx.configuration = describeSweep(configs);
    ctx.configurationJson = configurationJson(configs);
    return ctx;
}

}  // namespace ts::ui
