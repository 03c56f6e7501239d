// The item models behind the views, on hand-made results: structure (QAbstractItemModelTester)
// and values (speedups, OOM cells, series, comparisons).
#include <QAbstractItemModelTester>
#include <QtTest>

#include "common/fakedata.h"
#include "ui/benchmark/benchpanel.h"
#include "ui/benchmark/comparemodel.h"
#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/speedupmodel.h"
#include "ui/benchmark/stepchart.h"
#include "ui/benchmark/stepmodel.h"
#include "ui/benchmark/sweepmodel.h"
#include "ui/common/decimate.h"
#include "ui/common/dimensions.h"
#include "ui/common/format.h"
#include "ui/shell/runlistmodel.h"

using namespace ts;
using namespace ts::ui;
using Tester = QAbstractItemModelTester;

class TestModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stepModelAppendsBatchesPerPoint();
    void resultModelFillsPointByPoint();
    void speedupAgainstBaselineWithOom();
    void speedupFollowsDimensionAndBaseline();
    void speedupComparesEagerAndCompiled();
    void sweepSeriesPerPrecisionWithErrors();
    void runListModel();
    void compareMatchesPointsAndShowsRatios();
    void compareCallsADifferenceWithinTheNoiseSo();
    void dimensionsOfASweep();
    void decimationKeepsSpikes();
    void intListsParseOrNameTheBadToken();
};

void TestModels::stepModelAppendsBatchesPerPoint() {
    StepModel m;
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
    m.appendSteps(0, {fake::step(0, true, 30, 60, 10), fake::step(1, false, 3, 6, 1)});
    m.appendSteps(0, {fake::step(2, false, 3.5, 6, 1)});
    m.appendSteps(1, {fake::step(0, true, 20, 40, 5), fake::step(1, false, 2, 4, 1),
                      fake::step(2, false, 2, 4, 1)});
    QCOMPARE(inserted.count(), 3);  // one insertion per batch, not per step
    QCOMPARE(m.rowCount(), 6);
    QCOMPARE(m.rowsOfPoint(0), std::make_pair(0, 3));
    QCOMPARE(m.rowsOfPoint(1), std::make_pair(3, 3));
    QCOMPARE(m.rowsOfPoint(7), std::make_pair(6, 0));
    QCOMPARE(m.lastPoint(), 1);
    QCOMPARE(m.data(m.index(0, StepModel::Phase)).toString(), QStringLiteral("warm-up"));
    QCOMPARE(m.data(m.index(1, StepModel::Phase)).toString(), QStringLiteral("measured"));
    QCOMPARE(m.data(m.index(2, StepModel::Forward), StepModel::ValueRole).toDouble(), 3.5);
    QCOMPARE(m.data(m.index(0, StepModel::Total), StepModel::ValueRole).toDouble(), 100.0);
    QCOMPARE(m.data(m.index(3, StepModel::Point)).toInt(), 2);  // shown 1-based
    QCOMPARE(m.data(m.index(0, StepModel::Allocated), StepModel::ValueRole).toLongLong(), 0);
    m.clear();
    QCOMPARE(m.rowCount(), 0);
    QCOMPARE(m.lastPoint(), -1);
}

void TestModels::resultModelFillsPointByPoint() {
    ResultModel m;
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    const auto c0 = fake::config("small", 256, Precision::FP32);
    const auto c1 = fake::config("small", 256, Precision::BF16);
    m.setRunning(0, c0);
    QCOMPARE(m.rowCount(), 1);
    QCOMPARE(m.data(m.index(0, ResultModel::Status)).toString(), QStringLiteral("running"));
    QVERIFY(!m.data(m.index(0, ResultModel::Total), ResultModel::ValueRole).isValid());
    m.setResult(0, fake::result(c0, 10.0));
    m.setRunning(1, c1);
    m.setResult(1, fake::result(c1, 0, 0, Status::OOM));
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.data(m.index(0, ResultModel::Status)).toString(), QStringLiteral("ok"));
    QCOMPARE(m.data(m.index(0, ResultModel::Total), ResultModel::ValueRole).toDouble(), 10.0);
    QCOMPARE(m.data(m.index(0, ResultModel::Precision)).toString(), QStringLiteral("fp32"));
    QCOMPARE(m.data(m.index(0, ResultModel::Size)).toString(), QStringLiteral("small"));
    QCOMPARE(m.data(m.index(0, ResultModel::Steps)).toInt(), 4);
    QCOMPARE(m.data(m.index(1, ResultModel::Status)).toString(), QStringLiteral("OOM"));
    QVERIFY(m.data(m.index(1, ResultModel::Status), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("out of memory")));
    QVERIFY(m.data(m.index(1, ResultModel::Total)).toString().isEmpty());
    // Rows keep no steps (the step model has them).
    QVERIFY(m.entries()[0].result.steps.empty());
    QCOMPARE(m.finishedResults().size(), size_t(2));
    m.setResults({fake::result(c0, 5.0)});
    QCOMPARE(m.rowCount(), 1);
    QCOMPARE(m.data(m.index(0, ResultModel::Total), ResultModel::ValueRole).toDouble(), 5.0);
    // The parameters of the model that ran: the user's own count (the runner's), not the
    // preset's, once the point has run; the preset's before.
    auto yours = fake::config("small", 256, Precision::FP32);
    yours.source = Source::Python;
    m.setRunning(1, yours);
    QCOMPARE(m.data(m.index(1, ResultModel::Params), ResultModel::ValueRole).toLongLong(),
             static_cast<qlonglong>(parameterCount(yours.model)));
    auto ran = fake::result(yours, 5.0);
    ran.parameter_count = 1'323'216;
    m.setResult(1, ran);
    QCOMPARE(m.data(m.index(1, ResultModel::Params), ResultModel::ValueRole).toLongLong(),
             1'323'216LL);
}

void TestModels::speedupAgainstBaselineWithOom() {
    ResultModel results;
    SpeedupModel m(&results);
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    // Two sizes × fp32/bf16; medium bf16 ran out of memory.
    const auto s32 = fake::config("small", 256, Precision::FP32),
               s16 = fake::config("small", 256, Precision::BF16);
    const auto m32 = fake::config("medium", 256, Precision::FP32),
               m16 = fake::config("medium", 256, Precision::BF16);
    results.setResults({fake::result(s32, 12.0), fake::result(s16, 4.0), fake::result(m32, 30.0),
                        fake::result(m16, 0, 0, Status::OOM)});
    QVERIFY(m.dimension() == Dimension::Precision);  // the first varying of the preferred ones
    QCOMPARE(m.values(), QStringList({"fp32", "bf16"}));
    QCOMPARE(m.baseline(), QStringLiteral("fp32"));
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.columnCount(), 4);  // configuration, fp32 ms, bf16 ms, bf16 vs fp32
    QCOMPARE(m.data(m.index(0, 0)).toString(), QStringLiteral("small"));
    QCOMPARE(m.data(m.index(1, 0)).toString(), QStringLiteral("medium"));
    const int t32 = m.timeColumn("fp32"), t16 = m.timeColumn("bf16"), sp = m.speedupColumn("bf16");
    QCOMPARE(m.speedupColumn("fp32"), -1);
    QCOMPARE(m.data(m.index(0, t32), SpeedupModel::ValueRole).toDouble(), 12.0);
    QCOMPARE(m.data(m.index(0, sp), SpeedupModel::ValueRole).toDouble(), 3.0);
    QCOMPARE(m.data(m.index(0, sp)).toString(), QStringLiteral("3.00×"));
    // OOM cells say so, in the time and the speedup column, and carry the error.
    QCOMPARE(m.data(m.index(1, t16)).toString(), QStringLiteral("OOM"));
    QCOMPARE(m.data(m.index(1, t16), SpeedupModel::StatusRole).toString(), QStringLiteral("OOM"));
    QVERIFY(m.data(m.index(1, t16), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("out of memory")));
    QVERIFY(m.data(m.index(1, t16), Qt::BackgroundRole).isValid());
    QCOMPARE(m.data(m.index(1, sp)).toString(), QStringLiteral("OOM"));
    QVERIFY(!m.data(m.index(1, sp), SpeedupModel::ValueRole).isValid());
    QVERIFY(m.headerData(sp, Qt::Horizontal).toString().contains(QStringLiteral("bf16 vs fp32")));
}

void TestModels::speedupFollowsDimensionAndBaseline() {
    ResultModel results;
    SpeedupModel m(&results);
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    QSignalSpy shape(&m, &SpeedupModel::shapeChanged);
    results.setResults(
        {fake::result(fake::config("small", 256, Precision::BF16, AttentionImpl::Naive), 8.0),
         fake::result(fake::config("small", 256, Precision::BF16, AttentionImpl::Sdpa), 4.0),
         fake::result(fake::config("small", 256, Precision::BF16, AttentionImpl::Flash), 2.0)});
    QVERIFY(m.dimension() == Dimension::Attention);
    QVERIFY(shape.count() >= 1);
    QCOMPARE(m.rowCount(), 1);
    QCOMPARE(m.data(m.index(0, 0)).toString(), QStringLiteral("all"));
    QCOMPARE(m.data(m.index(0, m.speedupColumn("flash")), SpeedupModel::ValueRole).toDouble(), 4.0);
    m.setBaseline("sdpa");
    QCOMPARE(m.baseline(), QStringLiteral("sdpa"));
    QCOMPARE(m.data(m.index(0, m.speedupColumn("naive")), SpeedupModel::ValueRole).toDouble(), 0.5);
    QCOMPARE(m.data(m.index(0, m.speedupColumn("flash")), SpeedupModel::ValueRole).toDouble(), 2.0);
    m.setMetric(Metric::Forward);  // forward is 30 % of the total in the fake data
    QCOMPARE(m.data(m.index(0, m.timeColumn("naive")), SpeedupModel::ValueRole).toDouble(),
             8.0 * 0.3);
    // A wanted dimension that does not vary falls back; an unknown baseline to the first value.
    m.setDimension(Dimension::Precision);
    QVERIFY(m.dimension() == Dimension::Attention);
    m.setBaseline("nonsense");
    QCOMPARE(m.baseline(), QStringLiteral("naive"));
    results.clear();
    QCOMPARE(m.rowCount(), 0);
}

void TestModels::speedupComparesEagerAndCompiled() {
    ResultModel results;
    SpeedupModel m(&results);
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    // An "eager,compiled" sweep over two precisions: execution is the speedup's dimension,
    // precision the rows.
    std::vector<BenchResult> rs;
    for (Precision p : {Precision::FP32, Precision::BF16})
        for (ExecMode e : {ExecMode::Eager, ExecMode::Compiled}) {
            auto c = fake::config("small", 256, p);
            c.exec = e;
            rs.push_back(fake::result(c, e == ExecMode::Eager ? 12.0 : 8.0));
        }
    results.setResults(rs);
    QVERIFY(SpeedupModel::comparesAsSpeedup(Dimension::Exec));
    QVERIFY(m.dimension() == Dimension::Exec);
    QCOMPARE(m.values(), QStringList({"eager", "compiled"}));
    QCOMPARE(m.baseline(), QStringLiteral("eager"));
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.data(m.index(0, m.speedupColumn("compiled")), SpeedupModel::ValueRole).toDouble(),
             1.5);
    QCOMPARE(results.data(results.index(1, ResultModel::Exec)).toString(),
             QStringLiteral("compiled"));
    const auto dims = varyingDimensions(results.configs());
    QVERIFY(std::find(dims.begin(), dims.end(), Dimension::Exec) != dims.end());
    QVERIFY(dimensionFromKey(QStringLiteral("exec")) == Dimension::Exec);
}

void TestModels::sweepSeriesPerPrecisionWithErrors() {
    ResultModel results;
    SweepModel m(&results);
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    results.setResults(
        {fake::result(fake::config("small", 256, Precision::FP32), 10, 1),
         fake::result(fake::config("medium", 256, Precision::FP32), 30, 2),
         fake::result(fake::config("small", 256, Precision::BF16), 4, 0.5),
         fake::result(fake::config("medium", 256, Precision::BF16), 0, 0, Status::OOM)});
    QVERIFY(m.xDimension() == Dimension::Size);
    QCOMPARE(m.seriesNames(), QStringList({"fp32", "bf16"}));
    QCOMPARE(m.rowCount(), 3);       // the OOM point is left out ...
    QCOMPARE(m.missingPoints(), 1);  // ... and counted
    const auto& rows = m.rows();
    QCOMPARE(rows[0].series, QStringLiteral("fp32"));
    QCOMPARE(rows[0].x, double(parameterCount(fake::config("small", 256, Precision::FP32).model)));
    QVERIFY(rows[0].x < rows[1].x);  // sorted by x within a series
    QCOMPARE(rows[0].mean, 10.0);
    QVERIFY(rows[0].std > 0.9 && rows[0].std < 1.2);  // sample std of 9, 11, 9, 11
    // Asking for context length, which does not vary, keeps model size.
    m.setXDimension(Dimension::Context);
    QVERIFY(m.xDimension() == Dimension::Size);
    results.setResults({fake::result(fake::config("small", 128, Precision::FP32), 5),
                        fake::result(fake::config("small", 512, Precision::FP32), 20)});
    QVERIFY(m.xDimension() == Dimension::Context);
    QCOMPARE(m.rows()[1].x, 512.0);
    QCOMPARE(m.seriesNames(), QStringList({"total"}));
}

void TestModels::runListModel() {
    RunListModel m;
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    RunInfo a;
    a.id = 3;
    a.label = "fp32 vs bf16";
    a.created = "2026-01-02T10:00:00Z";
    a.device_name = "NVIDIA H100";
    a.point_count = 4;
    a.ok_count = 3;
    a.ended = "2026-01-02T10:05:00Z";  // a run that ended (see Note [unfinished runs])
    RunInfo b = a;
    b.id = 7;
    b.label = "warm-up";
    m.setRuns({b, a});
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.data(m.index(1, RunListModel::Label)).toString(), QStringLiteral("fp32 vs bf16"));
    QCOMPARE(m.data(m.index(1, RunListModel::Status)).toString(), QStringLiteral("3 of 4 ok"));
    QCOMPARE(m.data(m.index(0, 0), RunListModel::RunIdRole).toLongLong(), 7);
    QCOMPARE(m.rowOf(3), 1);
    QVERIFY(m.runById(42) == nullptr);
    m.setRuns({});
    QCOMPARE(m.rowCount(), 0);
}

void TestModels::compareMatchesPointsAndShowsRatios() {
    CompareModel m;
    Tester tester(&m, Tester::FailureReportingMode::QtTest);
    QCOMPARE(m.rowCount(), 0);
    CompareModel::Side a, b;
    a.info.id = 1;
    b.info.id = 2;
    const auto s32 = fake::config("small", 256, Precision::FP32),
               s16 = fake::config("small", 256, Precision::BF16);
    const auto m32 = fake::config("medium", 256, Precision::FP32);
    a.points = {fake::result(s32, 10), fake::result(s16, 5)};
    b.points = {fake::result(s16, 4), fake::result(s32, 12), fake::result(m32, 0, 0, Status::OOM)};
    b.points[0].environment.driver_version = "560.2";
    m.setRuns(a, b);
    QCOMPARE(m.rowCount(), 3);  // matched by configuration, whatever the order
    QCOMPARE(m.data(m.index(0, 0)).toString(), QStringLiteral("small · fp32"));
    QCOMPARE(m.data(m.index(0, CompareModel::TimeA), CompareModel::ValueRole).toDouble(), 10.0);
    QCOMPARE(m.data(m.index(0, CompareModel::TimeB), CompareModel::ValueRole).toDouble(), 12.0);
    QCOMPARE(m.data(m.index(0, CompareModel::Difference), CompareModel::ValueRole).toDouble(), 2.0);
    QCOMPARE(m.data(m.index(0, CompareModel::Ratio), CompareModel::ValueRole).toDouble(), 1.2);
    QCOMPARE(m.data(m.index(1, CompareModel::Ratio), CompareModel::ValueRole).toDouble(), 0.8);
    QCOMPARE(m.data(m.index(2, CompareModel::TimeA)).toString(), QStringLiteral("—"));  // only in B
    QCOMPARE(m.data(m.index(2, CompareModel::TimeB)).toString(), QStringLiteral("OOM"));
    QVERIFY(!m.data(m.index(2, CompareModel::Ratio), CompareModel::ValueRole).isValid());
    // Issue 29 item 10: the spread beside each time, a verdict, and why a cell is empty.
    QVERIFY2(m.data(m.index(0, CompareModel::TimeA)).toString().contains(QStringLiteral("±")),
             qPrintable(m.data(m.index(0, CompareModel::TimeA)).toString()));
    QCOMPARE(m.data(m.index(0, CompareModel::Verdict)).toString(), QStringLiteral("B slower"));
    QCOMPARE(m.data(m.index(1, CompareModel::Verdict)).toString(), QStringLiteral("B faster"));
    QCOMPARE(m.data(m.index(2, CompareModel::Verdict)).toString(), QStringLiteral("only in run 2"));
    QVERIFY(m.data(m.index(2, CompareModel::TimeA), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("Run 1 has no point of this configuration")));
    const auto diffs = m.environmentDifferences();
    QCOMPARE(diffs.size(), 1);
    QCOMPARE(diffs[0], QStringList({"Driver", "550.1", "560.2"}));
    m.setMetric(Metric::Backward);
    QCOMPARE(m.data(m.index(0, CompareModel::TimeA), CompareModel::ValueRole).toDouble(), 6.0);
    QVERIFY(m.headerData(CompareModel::TimeA, Qt::Horizontal)
                .toString()
                .contains(QStringLiteral("backward")));
}

// Issue 29 item 10: "Ratio B/A 8.297x" was highlighted between two runs whose steps spread by
// 33%. A difference within two standard errors is called noise and not highlighted.
void TestModels::compareCallsADifferenceWithinTheNoiseSo() {
    CompareModel m;
    CompareModel::Side a, b;
    a.info.id = 1;
    b.info.id = 2;
    const auto c = fake::config("small", 256, Precision::FP32);
    a.points = {fake::result(c, 10, 4)};  // steps 6 and 14: a spread of 40%
    b.points = {fake::result(c, 12, 4)};
    m.setRuns(a, b);
    QVERIFY(!m.significant(0));
    QVERIFY2(m.data(m.index(0, CompareModel::Verdict))
                 .toString()
                 .startsWith(QStringLiteral("within noise")),
             qPrintable(m.data(m.index(0, CompareModel::Verdict)).toString()));
    QVERIFY(!m.data(m.index(0, CompareModel::Ratio), Qt::BackgroundRole).isValid());
    b.points = {fake::result(c, 40, 4)};
    m.setRuns(a, b);
    QVERIFY(m.significant(0));
    QCOMPARE(m.data(m.index(0, CompareModel::Verdict)).toString(), QStringLiteral("B slower"));
    QVERIFY(m.data(m.index(0, CompareModel::Ratio), Qt::BackgroundRole).isValid());
}

void TestModels::dimensionsOfASweep() {
    const auto a = fake::config("small", 256, Precision::FP32),
               b = fake::config("small", 512, Precision::BF16);
    const auto v = varyingDimensions({a, b});
    QCOMPARE(v, (std::vector<Dimension>{Dimension::Context, Dimension::Precision}));
    QCOMPARE(dimensionValues({a, b, a}, Dimension::Context), QStringList({"256", "512"}));
    QCOMPARE(pointKey(a, {Dimension::Context, Dimension::Precision}),
             pointKey(b, {Dimension::Context, Dimension::Precision}));
    QVERIFY(pointKey(a) != pointKey(b));
    QCOMPARE(labelOver(b, v), QStringLiteral("ctx 512 · bf16"));
    QCOMPARE(dimensionFromKey("warmup"), std::optional<Dimension>(Dimension::Warmup));
    QVERIFY(!dimensionFromKey("nonsense"));
}

void TestModels::decimationKeepsSpikes() {
    QList<QPointF> pts;
    for (int i = 0; i < 100000; ++i) pts << QPointF(i, i == 777 ? 1000.0 : 1.0);
    const auto d = decimateMinMax(pts, 1000);
    QVERIFY(d.size() <= 1000);
    double maxY = 0;
    for (const auto& p : d) maxY = std::max(maxY, p.y());
    QCOMPARE(maxY, 1000.0);
    QCOMPARE(decimateMinMax(pts.mid(0, 10), 1000).size(), 10);
}

void TestModels::intListsParseOrNameTheBadToken() {
    std::vector<int64_t> v;
    QString err;
    QVERIFY(parseIntList(QStringLiteral("128, 256 512;256"), &v, &err));
    QCOMPARE(v, (std::vector<int64_t>{128, 256, 512}));
    QVERIFY(!parseIntList(QStringLiteral("128, x2"), &v, &err));
    QVERIFY(err.contains(QStringLiteral("'x2'")));
    QVERIFY(!parseIntList(QStringLiteral("  "), &v, &err));
}

QTEST_MAIN(TestModels)
#include "tst_models.moc"
