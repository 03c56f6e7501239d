// The run the views show: a live run, a stored run reopened from the history, or a replay.
// It owns the item models; charts and tables only view them.
#pragma once

#include <QList>
#include <QObject>

#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/speedupmodel.h"
#include "ui/benchmark/stepmodel.h"
#include "ui/benchmark/storedbenchrun.h"
#include "ui/benchmark/sweepmodel.h"
#include "ui/common/exporter.h"

namespace ts::ui {

class RunDocument : public QObject {
    Q_OBJECT
public:
    enum class Source { None, Live, Stored, Replay };

    explicit RunDocument(QObject* parent = nullptr);

    StepModel* steps() { return &steps_; }
    ResultModel* results() { return &results_; }
    SpeedupModel* speedup() { return &speedup_; }
    SweepModel* sweep() { return &sweep_; }

    // Empties the models for a new run.
    void begin(Source source, const QString& label, int pointCount);
    void setStoreRunId(qint64 id);
    void setEnvironment(const Environment& env);
    void startPoint(int index, const PointConfig& config);
    void addSteps(int point, const QList<StepSample>& steps);
    void finishPoint(int index, const BenchResult& result);
    // A stored run, all at once.
    void load(const StoredBenchRun& run);
    void clear();

    Source source() const { return source_; }
    qint64 storeRunId() const { return storeRunId_; }
    QString label() const { return label_; }
    int pointCount() const { return pointCount_; }
    int currentPoint() const { return currentPoint_; }
    const Environment& environment() const { return env_; }
    QString title() const;
    ExportContext exportContext() const;

Q_SIGNALS:
    void infoChanged();  // title, environment, source or the current point
    void pointStarted(int index);

private:
    StepModel steps_;
    ResultModel results_;
    SpeedupModel speedup_{&results_};
    SweepModel sweep_{&results_};
    Source source_ = Source::None;
    qint64 storeRunId_ = 0;
    QString label_;
    int pointCount_ = 0;
    int currentPoint_ = -1;
    Environment env_;
};

}  // namespace ts::ui
