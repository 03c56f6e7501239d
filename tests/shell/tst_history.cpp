// History as a user reads and uses it, offscreen, against a store written by hand and one tiny
// CPU run: the sort arrow points the way the rows run, Status says what it counts, times are
// local, the Configuration column and the filter, "Load Configuration" and "Run Again" (the
// panel asks for exactly the stored spec), a deleted run's view refuses exports, File ▸ Open
// Results Store, and Compare's refusals that scripted sessions rely on.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableView>
#include <QtTest>
#include <cstdlib>
#include <ctime>

#include "attention/attention_lab.h"
#include "benchmark/benchmark.h"
#include "common/windowtesting.h"
#include "core/store.h"
#include "ui/common/labpanel.h"
#include "ui/shell/historytable.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/runconfig.h"
#include "ui/shell/runlistmodel.h"

using namespace ts;
using namespace ts::ui;

namespace {

QJsonObject tinyBench(const QString& label) {
    return QJsonObject{{"label", label},
                       {"sizes", QJsonArray{"tiny"}},
                       {"context", "32"},
                       {"batch", "2"},
                       {"modes", QJsonArray{"train"}},
                       {"precisions", QJsonArray{"fp32"}},
                       {"attentions", QJsonArray{"naive"}},
                       {"warmup", "1"},
                       {"steps", 3},
                       {"device", "cpu"}};
}

QJsonObject tinyAttention(const QString& label) {
    return QJsonObject{{"label", label},
                       {"impls", QJsonArray{"naive", "tiled"}},
                       {"seq", "32, 64"},
                       {"head_dims", "16"},
                       {"batches", "1"},
                       {"heads", "2"},
                       {"dtypes", QJsonArray{"fp32"}},
                       {"causal", QJsonArray{"causal", "full"}},
                       {"passes", QJsonArray{"forward"}},
                       {"warmup", 1},
                       {"steps", 2},
                       {"device", "cpu"},
                       {"check", true}};
}

// A sweep as the CLI would store it: xl and small, bf16.
std::string xlSweepSpec() {
    SweepSpec s;
    s.base.device = "cuda:0";
    s.base.steps = 20;
    s[ts::Dimension::Size] = {"small", "xl"};
    s[ts::Dimension::Context] = {"256", "512"};
    s[ts::Dimension::Batch] = {"4"};
    s[ts::Dimension::Precision] = {"bf16"};
    s[ts::Dimension::Attention] = {"naive"};
    s[ts::Dimension::Mode] = {"train"};
    s[ts::Dimension::Warmup] = {"2"};
    return benchSpecJson(s, 4);
}

// The rows where `img` has a drawn pixel, and how many each has.
QList<int> rowWidths(const QImage& img) {
    QList<int> widths;
    for (int y = 0; y < img.height(); ++y) {
        int n = 0;
        for (int x = 0; x < img.width(); ++x) n += qAlpha(img.pixel(x, y)) > 128;
        if (n > 0) widths << n;
    }
    return widths;
}

// The sort arrow the header's style draws for `section`, as pixels.
QImage drawnArrow(SortArrowHeader* header, int section) {
    QStyleOptionHeader opt;
    opt.initFrom(header);
    opt.rect = QRect(0, 0, 24, 24);
    opt.sortIndicator = header->arrowOf(section);
    QImage img(24, 24, QImage::Format_ARGB32);
    img.fill(Qt::transparent);
    QPainter p(&img);
    header->style()->drawPrimitive(QStyle::PE_IndicatorHeaderArrow, &opt, &p, header);
    return img;
}

}  // namespace

class TestHistory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void statusSaysWhatItCounts();
    void timesAreLocalAndReadable();
    void sortArrowMatchesTheRows();
    void configurationColumnTakesTheSpareWidth();
    void filterNarrowsByConfigurationWords();
    void loadConfigurationAsksForTheStoredSpec();
    void runAgainStartsTheSameRun();
    void deletedRunIsMarkedAndRefusesExport();
    void openResultsStore();
    void compareRefusalsEnd();
    void filterTellsOkFromNotOk();
    void historyFollowsTheStore();

private:
    qint64 storeRun(const QString& lab, const QString& label, const std::string& spec);
    qint64 rowIdAt(int proxyRow) const;
    QTemporaryDir dir_;
    std::unique_ptr<MainWindow> w_;
    qint64 benchRun_ = 0, attentionRun_ = 0, xlRun_ = 0, ranAgain_ = 0;
    std::string benchSpec_, attentionSpec_;
};

void TestHistory::initTestCase() {
    QVERIFY(dir_.isValid());
    // Times are shown in local time: make it one far from UTC, with a date change.
    qputenv("TZ", "Asia/Kolkata");
    tzset();
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedKingdom));
    w_ = freshWindow("tst_history", dir_.filePath("results.db"));
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
    QTRY_VERIFY_WITH_TIMEOUT(w_->session()->capabilitiesReady(), 60000);

    // The specs exactly as the panels make them for a run.
    LabPanel* bench = w_->panel(QStringLiteral("bench"));
    bench->setState(tinyBench(QStringLiteral("alpha")));
    auto job = bench->makeJob();
    QVERIFY2(job, qPrintable(bench->problems().join('\n')));
    benchSpec_ = job->spec_json;
    LabPanel* att = w_->panel(QStringLiteral("attention"));
    att->setState(tinyAttention(QStringLiteral("beta")));
    auto attJob = att->makeJob();
    QVERIFY2(attJob, qPrintable(att->problems().join('\n')));
    attentionSpec_ = attJob->spec_json;

    benchRun_ = storeRun(QStringLiteral("bench"), QStringLiteral("alpha"), benchSpec_);
    attentionRun_ = storeRun(QStringLiteral("attention"), QStringLiteral("beta"), attentionSpec_);
    xlRun_ = storeRun(QStringLiteral("bench"), QStringLiteral("gamma"), xlSweepSpec());
    w_->history()->refresh();
    // The window's own refresh at start-up may land after this one was asked for (with an
    // empty store): wait for the rows rather than for the first refresh.
    QTRY_COMPARE_WITH_TIMEOUT(w_->history()->runList()->rowCount(), 3, 10000);
}

void TestHistory::cleanupTestCase() { w_.reset(); }

qint64 TestHistory::storeRun(const QString& lab, const QString& label, const std::string& spec) {
    ResultStore store(w_->session()->storePath().toStdString());
    const qint64 id = store.createRun(lab.toStdString(), label.toStdString(), spec, "CPU");
    store.finishRun(id);  // as a run that ended (see statusSaysWhatItCounts for one that did not)
    return id;
}

qint64 TestHistory::rowIdAt(int proxyRow) const {
    const auto* proxy = w_->history()->widget()->proxy();
    return proxy->index(proxyRow, 0).data(RunListModel::RunIdRole).toLongLong();
}

void TestHistory::statusSaysWhatItCounts() {
    QCOMPARE(RunListModel::statusText(0, 0), QStringLiteral("no results"));
    QCOMPARE(RunListModel::statusText(1, 1), QStringLiteral("ok"));
    QCOMPARE(RunListModel::statusText(1, 0), QStringLiteral("not ok"));
    QCOMPARE(RunListModel::statusText(4, 4), QStringLiteral("all 4 ok"));
    QCOMPARE(RunListModel::statusText(4, 3), QStringLiteral("3 of 4 ok"));
    QCOMPARE(RunListModel::statusText(4, 0), QStringLiteral("none of 4 ok"));
    const RunListModel* runs = w_->history()->runList();
    QCOMPARE(runs->headerData(RunListModel::Status, Qt::Horizontal).toString(),
             QStringLiteral("Status"));
    const int row = runs->rowOf(benchRun_);
    QCOMPARE(runs->data(runs->index(row, RunListModel::Status)).toString(),
             QStringLiteral("no results"));
    // See Note [unfinished runs]: a run whose process never marked it ended says so, with the
    // points it meant to measure where it knew them.
    RunListModel unfinished;
    RunInfo killed;
    killed.id = 1;
    killed.lab = "bench";
    killed.point_count = 2;
    killed.ok_count = 2;
    killed.planned = 5;
    RunInfo unknown = killed;
    unknown.id = 2;
    unknown.planned = 0;
    RunInfo ended = killed;
    ended.id = 3;
    ended.ended = "2026-11-26T10:00:00Z";
    unfinished.setRuns({killed, unknown, ended});
    QCOMPARE(unfinished.data(unfinished.index(0, RunListModel::Status)).toString(),
             QStringLiteral("not finished: 2 of 5 points"));
    QCOMPARE(unfinished.data(unfinished.index(1, RunListModel::Status)).toString(),
             QStringLiteral("not finished: 2 point(s)"));
    QCOMPARE(unfinished.data(unfinished.index(2, RunListModel::Status)).toString(),
             QStringLiteral("all 2 ok"));
}

void TestHistory::timesAreLocalAndReadable() {
    const QDateTime june = QDateTime(QDate(2026, 6, 1), QTime(12, 0));
    // 23:50 UTC is 05:20 the next day in India (UTC+5:30).
    QCOMPARE(RunListModel::localTime(QStringLiteral("2026-01-01T23:50:00Z"), june),
             QStringLiteral("2 Jan 05:20"));
    QCOMPARE(RunListModel::localTime(QStringLiteral("2025-01-01T23:50:00Z"), june),
             QStringLiteral("2 Jan 2025 05:20"));
    const QDateTime now(QDate(2026, 1, 2), QTime(9, 0));
    QCOMPARE(RunListModel::localTime(QStringLiteral("2026-01-01T23:50:00Z"), now),
             QStringLiteral("Today 05:20"));
    QCOMPARE(RunListModel::localTime(QStringLiteral("2026-01-01T10:00:00Z"), now),
             QStringLiteral("Yesterday 15:30"));
    // The stored runs: local time shown, the ISO time in the tooltip.
    const RunListModel* runs = w_->history()->runList();
    const RunInfo* r = runs->runById(benchRun_);
    QVERIFY(r);
    const QModelIndex created = runs->index(runs->rowOf(benchRun_), RunListModel::Created);
    const QDateTime local =
        QDateTime::fromString(QString::fromStdString(r->created), Qt::ISODate).toLocalTime();
    QCOMPARE(created.data().toString(),
             QStringLiteral("Today ") + local.toString(QStringLiteral("HH:mm")));
    QVERIFY(!created.data().toString().contains(
        QRegularExpression(QStringLiteral("\\d{4}-\\d\\d-\\d\\dT"))));
    QVERIFY(created.data(Qt::ToolTipRole).toString().contains(QString::fromStdString(r->created)));
}

void TestHistory::sortArrowMatchesTheRows() {
    SortArrowHeader* header = w_->history()->widget()->header();
    QCOMPARE(header->sortIndicatorSection(), int(RunListModel::Id));
    // Newest first: the ids fall down the rows, and so does the arrow.
    QVERIFY(rowIdAt(0) > rowIdAt(1) && rowIdAt(1) > rowIdAt(2));
    QCOMPARE(header->arrowOf(RunListModel::Id), QStyleOptionHeader::SortDown);
    QList<int> widths = rowWidths(drawnArrow(header, RunListModel::Id));
    QVERIFY2(widths.size() >= 2 && widths.first() > widths.last(),
             "the arrow over descending rows must point down");
    QCOMPARE(header->arrowOf(RunListModel::Label), QStyleOptionHeader::None);
    // A click on the header: oldest first, the arrow points up.
    w_->history()->widget()->view()->sortByColumn(RunListModel::Id, Qt::AscendingOrder);
    QVERIFY(rowIdAt(0) < rowIdAt(1) && rowIdAt(1) < rowIdAt(2));
    QCOMPARE(header->arrowOf(RunListModel::Id), QStyleOptionHeader::SortUp);
    widths = rowWidths(drawnArrow(header, RunListModel::Id));
    QVERIFY2(widths.size() >= 2 && widths.first() < widths.last(),
             "the arrow over ascending rows must point up");
    // Created sorts by time (the stored UTC time), not by its display text ("Today …").
    const RunListModel* runs = w_->history()->runList();
    const QModelIndex created = runs->index(runs->rowOf(xlRun_), RunListModel::Created);
    QCOMPARE(created.data(RunListModel::SortRole).toString(),
             QString::fromStdString(runs->runById(xlRun_)->created));
    QCOMPARE(w_->history()->widget()->proxy()->sortRole(), RunListModel::SortRole);
    w_->history()->widget()->view()->sortByColumn(RunListModel::Id, Qt::DescendingOrder);
}

void TestHistory::configurationColumnTakesTheSpareWidth() {
    const RunListModel* runs = w_->history()->runList();
    auto config = [&](qint64 id) {
        return runs->index(runs->rowOf(id), RunListModel::Configuration).data().toString();
    };
    QCOMPARE(
        config(benchRun_),
        QStringLiteral("tiny · ctx 32 · bs 2 · fp32 · naive · train · warm-up 1 · steps 3 · cpu"));
    QCOMPARE(config(xlRun_), QStringLiteral("small, xl · ctx 256, 512 · bs 4 · bf16 · naive · "
                                            "train · warm-up 2 · steps 20 · cuda:0"));
    QVERIFY2(
        config(attentionRun_)
            .startsWith(QStringLiteral("naive, tiled · seq 32, 64 · d 16 · fp32 · causal, full")),
        qPrintable(config(attentionRun_)));
    QHeaderView* header = w_->history()->widget()->header();
    QVERIFY(!header->stretchLastSection());
    QCOMPARE(header->sectionResizeMode(RunListModel::Configuration), QHeaderView::Stretch);
    QCOMPARE(header->sectionResizeMode(RunListModel::Status), QHeaderView::ResizeToContents);
    QTRY_VERIFY(header->sectionSize(RunListModel::Configuration) >
                header->sectionSize(RunListModel::Status));
}

void TestHistory::filterNarrowsByConfigurationWords() {
    QLineEdit* filter = w_->history()->widget()->filter();
    auto shown = [&] {
        QList<qint64> ids;
        for (int r = 0; r < w_->history()->widget()->proxy()->rowCount(); ++r) ids << rowIdAt(r);
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    filter->setText(QStringLiteral("fp32"));
    QCOMPARE(shown(), (QList<qint64>{benchRun_, attentionRun_}));
    filter->setText(QStringLiteral("xl"));
    QCOMPARE(shown(), QList<qint64>{xlRun_});
    filter->setText(QStringLiteral("attention"));
    QCOMPARE(shown(), QList<qint64>{attentionRun_});
    filter->setText(QStringLiteral("FP32 tiny"));  // both words, any case
    QCOMPARE(shown(), QList<qint64>{benchRun_});
    filter->setText(QStringLiteral("fp32 xl"));
    QCOMPARE(shown(), QList<qint64>{});
    filter->clear();
    QCOMPARE(shown().size(), 3);
}

void TestHistory::loadConfigurationAsksForTheStoredSpec() {
    LabPanel* bench = w_->panel(QStringLiteral("bench"));
    bench->setState(tinyBench(QStringLiteral("something else")));
    bench->setState(QJsonObject{{"context", "64, 128"}, {"steps", 9}});
    QVERIFY(bench->makeJob()->spec_json != benchSpec_);
    // Through History's button, as a user does it.
    w_->history()->widget()->selectRuns({benchRun_});
    QPushButton* button = nullptr;
    for (auto* b : w_->history()->widget()->findChildren<QPushButton*>())
        if (b->text() == QStringLiteral("&Load Configuration")) button = b;
    QVERIFY(button && button->isEnabled());
    button->click();
    QCOMPARE(w_->currentPanel(), bench);
    auto job = bench->makeJob();
    QVERIFY2(job, qPrintable(bench->problems().join('\n')));
    QCOMPARE(job->spec_json, benchSpec_);
    QCOMPARE(job->label, QStringLiteral("alpha"));
    // Changed, it is another run than "alpha": the label goes, as a preset's does.
    qobject_cast<QSpinBox*>(bench->fieldWidget("steps"))
        ->setValue(bench->state().value("steps").toInt() + 1);
    QCOMPARE(bench->makeJob()->label, QString());
    // The attention run: into the attention panel, the lab switched.
    LabPanel* att = w_->panel(QStringLiteral("attention"));
    att->setState(QJsonObject{{"seq", "128"}, {"steps", 5}});
    QVERIFY(w_->history()->loadRunConfiguration(attentionRun_));
    QCOMPARE(w_->currentPanel(), att);
    QCOMPARE(att->makeJob()->spec_json, attentionSpec_);
    // The context menu offers both, sharing the buttons' state.
    QStringList texts;
    for (QAction* a : w_->history()->widget()->contextMenu()->actions())
        if (!a->isSeparator()) texts << a->text();
    QVERIFY(texts.contains(QStringLiteral("Load Configuration")));
    QVERIFY(texts.contains(QStringLiteral("Run Again")));
    // A run this window cannot read says why.
    QVERIFY(!w_->history()->loadRunConfiguration(424242));
    QVERIFY(w_->logText().contains(QStringLiteral("Cannot load run 424242's configuration")));
}

void TestHistory::runAgainStartsTheSameRun() {
    w_->panel(QStringLiteral("bench"))->setState(QJsonObject{{"steps", 11}});
    w_->history()->widget()->selectRuns({benchRun_});
    QSignalSpy finished(w_->session(), &RunSession::runFinished);
    for (QAction* a : w_->history()->widget()->contextMenu()->actions())
        if (a->text() == QStringLiteral("Run Again")) a->trigger();
    QVERIFY(w_->session()->isRunning());
    QVERIFY(finished.wait(180000) || !finished.isEmpty());
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Completed);
    ranAgain_ = benchViewOf(w_.get())->storeRunId();
    QVERIFY(ranAgain_ > xlRun_);
    ResultStore store(w_->session()->storePath().toStdString());
    const auto info = store.run(ranAgain_);
    QVERIFY(info);
    QCOMPARE(info->spec_json, benchSpec_);
    QCOMPARE(info->label, std::string("alpha"));
    QCOMPARE(info->point_count, 1);
}

void TestHistory::deletedRunIsMarkedAndRefusesExport() {
    QVERIFY(ranAgain_ > 0);
    QSignalSpy opened(w_->history(), &HistoryController::storedRunOpened);
    w_->history()->openStoredRun(ranAgain_);
    QVERIFY(opened.wait(10000) || !opened.isEmpty());
    QString error;
    QVERIFY2(w_->exports()->exportTab(QStringLiteral("results"), dir_.filePath("before.csv"), {},
                                      &error),
             qPrintable(error));
    auto* banner = w_->findChild<QLabel*>(QStringLiteral("deletedBanner"));
    QVERIFY(banner && !banner->isVisible());

    QSignalSpy deleted(w_->history(), &HistoryController::storedRunDeleted);
    w_->history()->deleteStoredRun(ranAgain_);
    QVERIFY(deleted.wait(10000) || !deleted.isEmpty());
    QCOMPARE(deleted[0][1].toString(), QString());
    QVERIFY(!w_->labs()->deletedRunNote(benchViewOf(w_.get())).isEmpty());
    QVERIFY(banner->isVisible());
    QVERIFY(banner->text().contains(QStringLiteral("run %1 was deleted").arg(ranAgain_)));
    QVERIFY(w_->windowTitle().contains(QStringLiteral("(deleted)")));
    // Every export of it is refused, with the reason; nothing is written.
    for (const QString& pane : {QStringLiteral("results"), QStringLiteral("steps")}) {
        const QString path = dir_.filePath(pane + QStringLiteral("-deleted.csv"));
        QVERIFY(!w_->exports()->exportTab(pane, path, {}, &error));
        QVERIFY2(error.contains(QStringLiteral("deleted")), qPrintable(error));
        QVERIFY(!QFileInfo::exists(path));
    }
    QVERIFY(!w_->exports()->exportReport(dir_.filePath("deleted.md"), {800, 450}, &error));
    QVERIFY(!QFileInfo::exists(dir_.filePath("deleted.md")));
    // The other lab's view shows nothing of it and is unaffected.
    QVERIFY(w_->labs()->deletedRunNote(attentionViewOf(w_.get())).isEmpty());
    // Another run shown: exports work again.
    QTRY_VERIFY(w_->history()->runList()->rowOf(ranAgain_) < 0);
    opened.clear();
    w_->history()->openStoredRun(benchRun_);
    QVERIFY(opened.wait(10000) || !opened.isEmpty());
    QVERIFY(w_->labs()->deletedRunNote(benchViewOf(w_.get())).isEmpty());
    QVERIFY(!banner->isVisible());
    QVERIFY(!w_->windowTitle().contains(QStringLiteral("(deleted)")));
}

void TestHistory::openResultsStore() {
    const QString first = w_->session()->storePath();
    const QString other = dir_.filePath("other.db");
    {
        ResultStore store(other.toStdString());
        store.createRun("bench", "from the other store", xlSweepSpec(), "NVIDIA H100");
    }
    QSignalSpy ok(w_->history(), &HistoryController::storeOpened);
    QSignalSpy failed(w_->history(), &HistoryController::storeOpenFailed);
    w_->history()->openStore(other);
    QVERIFY(ok.wait(10000) || !ok.isEmpty());
    QCOMPARE(w_->session()->storePath(), QFileInfo(other).absoluteFilePath());
    QCOMPARE(w_->history()->runList()->rowCount(), 1);
    QCOMPARE(QString::fromStdString(w_->history()->runList()->runs()[0].label),
             QStringLiteral("from the other store"));
    auto* label = w_->findChild<QLabel*>(QStringLiteral("storeLabel"));
    QVERIFY(label && label->text().contains(QStringLiteral("other.db")));

    // Not a store: a clear message, and the store in use stays.
    const QString junk = dir_.filePath("notes.db");
    {
        QFile f(junk);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
    }
    w_->history()->openStore(junk);
    QVERIFY(failed.wait(10000) || !failed.isEmpty());
    QVERIFY2(
        failed.last()[0].toString().contains(QStringLiteral("cannot be read as a results store")),
        qPrintable(failed.last()[0].toString()));
    QCOMPARE(w_->session()->storePath(), QFileInfo(other).absoluteFilePath());
    QCOMPARE(w_->history()->runList()->rowCount(), 1);
    w_->history()->openStore(dir_.filePath("missing.db"));
    QTRY_COMPARE(failed.size(), 2);
    QVERIFY(failed.last()[0].toString().contains(QStringLiteral("does not exist")));
    QVERIFY(!QFileInfo::exists(dir_.filePath("missing.db")));
    QCOMPARE(w_->session()->storePath(), QFileInfo(other).absoluteFilePath());

    // Back to the first.
    w_->history()->openStore(first);
    QTRY_COMPARE(ok.size(), 2);
    QCOMPARE(w_->history()->runList()->rowCount(), 3);
}

void TestHistory::compareRefusalsEnd() {
    // What `trainscope --compare A,B` waits for: a refusal, never silence.
    QSignalSpy failed(w_->history(), &HistoryController::comparisonFailed);
    w_->history()->widget()->selectRuns({benchRun_, attentionRun_});
    w_->history()->compareStoredRuns(benchRun_, attentionRun_);
    QVERIFY(failed.wait(10000) || !failed.isEmpty());
    QVERIFY2(failed.last()[0].toString().contains(QStringLiteral("only runs of one kind compare")),
             qPrintable(failed.last()[0].toString()));
    w_->history()->compareStoredRuns(benchRun_, 999);
    QTRY_COMPARE(failed.size(), 2);
    QVERIFY2(failed.last()[0].toString().contains(QStringLiteral("999")),
             qPrintable(failed.last()[0].toString()));
}

QTEST_MAIN(TestHistory)
// Issue 29 item 18: the filter "ok" kept the runs that were "not ok" (and "none of 4 ok"); a
// filter that keeps nothing said nothing.
void TestHistory::filterTellsOkFromNotOk() {
    RunListModel runs;
    auto run = [](qint64 id, int points, int ok, bool ended) {
        RunInfo r;
        r.id = id;
        r.lab = "bench";
        r.created = "2026-11-26T10:00:00Z";
        r.point_count = points;
        r.ok_count = ok;
        r.planned = points + 1;
        if (ended) r.ended = r.created;
        return r;
    };
    runs.setRuns({run(1, 1, 1, true), run(2, 1, 0, true), run(3, 4, 0, true), run(4, 4, 3, true),
                  run(5, 2, 2, false), run(6, 4, 4, true)});
    HistoryWidget h(&runs);
    auto shown = [&] {
        QList<qint64> ids;
        for (int r = 0; r < h.proxy()->rowCount(); ++r)
            ids << h.proxy()->index(r, 0).data(RunListModel::RunIdRole).toLongLong();
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    auto* noMatch = h.findChild<QLabel*>(QStringLiteral("historyNoMatch"));
    QVERIFY(noMatch);
    h.filter()->setText(QStringLiteral("ok"));
    QCOMPARE(shown(), (QList<qint64>{1, 6}));
    for (const char* notOk : {"not ok", "Not-OK", "failed"}) {
        h.filter()->setText(QString::fromLatin1(notOk));
        QCOMPARE(shown(), (QList<qint64>{2, 3, 4, 5}));
    }
    h.filter()->setText(QStringLiteral("interrupted"));
    QCOMPARE(shown(), QList<qint64>{5});
    h.filter()->setText(QStringLiteral("bench ok"));  // with another column's word
    QCOMPARE(shown(), (QList<qint64>{1, 6}));
    QVERIFY(noMatch->isHidden());
    h.filter()->setText(QStringLiteral("zzz"));
    QCOMPARE(shown(), QList<qint64>{});
    QVERIFY(!noMatch->isHidden());
    QVERIFY2(noMatch->text().contains(QStringLiteral("\"zzz\"")), qPrintable(noMatch->text()));
    QVERIFY2(noMatch->text().contains(QStringLiteral("(6 run")), qPrintable(noMatch->text()));
    h.filter()->clear();
    QCOMPARE(shown().size(), 6);
    QVERIFY(noMatch->isHidden());
}

// Issue 29 item 18: runs the CLI (or another window) adds appear without Refresh.
void TestHistory::historyFollowsTheStore() {
    const int before = w_->history()->runList()->rowCount();
    const qint64 id =
        storeRun(QStringLiteral("bench"), QStringLiteral("from elsewhere"), benchSpec_);
    QTRY_VERIFY_WITH_TIMEOUT(w_->history()->runList()->runById(id) != nullptr, 10000);
    QCOMPARE(w_->history()->runList()->rowCount(), before + 1);
}

#include "tst_history.moc"
