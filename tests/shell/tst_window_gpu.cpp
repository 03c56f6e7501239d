// The window against a real GPU (labels `gpu` and `ui`; exit 77, SKIPPED, without one):
// a benchmark point end to end with device memory in the memory chart, the attention lab with
// our kernels, and the UI thread's responsiveness while a large model streams its steps.
// Screenshots of each go to $TRAINSCOPE_SHOTS when it is set.
#include <QAction>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <QtTest>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/stallprobe.h"
#include "common/windowtesting.h"
#include "runtime/environment.h"
#include "ui/attention/attentionmodel.h"
#include "ui/benchmark/memorychart.h"
#include "ui/benchmark/resultmodel.h"
#include "ui/benchmark/stepchart.h"
#include "ui/benchmark/stepmodel.h"
#include "ui/common/labpanel.h"

using namespace ts;
using namespace ts::ui;

namespace {

void shoot(MainWindow& w, const QString& name) {
    const QString dir = qEnvironmentVariable("TRAINSCOPE_SHOTS");
    if (dir.isEmpty()) return;
    QTest::qWait(700);  // throttled redraws
    w.grab().save(dir + QLatin1Char('/') + name);
}

bool runToEnd(MainWindow& w, int timeoutMs) {
    QSignalSpy finished(w.session(), &RunSession::runFinished);
    if (!w.session()->start()) return false;
    return (finished.wait(timeoutMs) || !finished.isEmpty()) &&
           finished[0][0].value<RunOutcome>() == RunOutcome::Completed;
}

}  // namespace

class TestWindowGpu : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void benchmarkPointShowsDeviceMemory();
    void attentionLabRunsOurKernels();
    void uiStaysResponsiveWhileALargeModelStreams();

private:
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<MainWindow> w_;
};

void TestWindowGpu::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    w_ = std::make_unique<MainWindow>(MainWindow::Options{dir_->filePath("results.db"), false});
    w_->resize(1600, 1000);
    w_->show();
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
    QTRY_VERIFY_WITH_TIMEOUT(w_->session()->capabilitiesReady(), 120000);
}

void TestWindowGpu::cleanup() {
    w_.reset();
    dir_.reset();
}

void TestWindowGpu::benchmarkPointShowsDeviceMemory() {
    QVERIFY(w_->labs()->select("bench"));
    w_->currentPanel()->setState(QJsonObject{{"label", "small on the GPU"},
                                             {"sizes", QJsonArray{"small"}},
                                             {"context", "256"},
                                             {"batch", "4"},
                                             {"modes", QJsonArray{"train"}},
                                             {"precisions", QJsonArray{"fp32", "bf16"}},
                                             {"attentions", QJsonArray{"naive"}},
                                             {"warmup", "3"},
                                             {"steps", 10},
                                             {"device", "cuda"}});
    QVERIFY2(w_->currentPanel()->isValid(), qPrintable(w_->currentPanel()->problems().join('\n')));
    QVERIFY(runToEnd(*w_, 300000));
    BenchView* v = benchViewOf(w_.get());
    QCOMPARE(v->document()->results()->rowCount(), 2);
    QCOMPARE(v->document()->steps()->rowCount(), 2 * 13);
    for (const auto& e : v->document()->results()->entries()) {
        QVERIFY(e.result.status == Status::Ok);
        QVERIFY(e.result.total.mean > 0);
        // Device memory: a 128 M-parameter model with AdamW holds over 1.5 GB.
        QVERIFY2(e.result.peak_memory > 1'500'000'000LL,
                 qPrintable(QString::number(e.result.peak_memory)));
    }
    QVERIFY(v->document()->environment().device_name.find("NVIDIA") != std::string::npos);
    v->memoryChart()->flushRedraw();
    QCOMPARE(v->memoryChart()->plottedPoints(), 2 * 13);
    QVERIFY(v->memoryChart()->maxPlottedMiB() > 1500.0);
    QVERIFY(w_->labs()->showPane(QStringLiteral("memory")));
    shoot(*w_, QStringLiteral("memory-gpu.png"));
    QVERIFY(w_->labs()->showPane(QStringLiteral("steps")));
    shoot(*w_, QStringLiteral("steps-gpu.png"));
    QVERIFY(w_->labs()->showPane(QStringLiteral("speedup")));
    shoot(*w_, QStringLiteral("speedup-gpu.png"));
}

void TestWindowGpu::attentionLabRunsOurKernels() {
    if (!capabilities().flash_kernels) QSKIP("this build has no CUDA attention kernels");
    QVERIFY(w_->labs()->select("attention"));
    w_->currentPanel()->setState(QJsonObject{{"label", "ours against SDPA"},
                                             {"impls", QJsonArray{"naive", "sdpa-flash", "flash"}},
                                             {"seq", "1024, 2048, 4096"},
                                             {"head_dims", "64"},
                                             {"batches", "4"},
                                             {"heads", "8"},
                                             {"dtypes", QJsonArray{"bf16"}},
                                             {"causal", QJsonArray{"causal"}},
                                             {"passes", QJsonArray{"forward", "backward"}},
                                             {"warmup", 2},
                                             {"steps", 5},
                                             {"device", "cuda"},
                                             {"check", true}});
    QVERIFY2(w_->currentPanel()->isValid(), qPrintable(w_->currentPanel()->problems().join('\n')));
    QVERIFY(runToEnd(*w_, 300000));
    AttentionView* v = attentionViewOf(w_.get());
    const std::vector<AttentionCell> cells = v->model()->cells();
    QCOMPARE(cells.size(), size_t(9));
    for (const AttentionCell& c : cells) {
        QVERIFY2(c.status == Status::Ok, c.error.c_str());
        QVERIFY(c.err_out >= 0 && c.err_out <= c.tolerance);  // checked before it was timed
        QVERIFY(c.forward_ms > 0 && c.backward_ms > 0 && c.peak_memory > 0);
    }
    QVERIFY(w_->labs()->showPane(QStringLiteral("attention")));
    shoot(*w_, QStringLiteral("attention-gpu.png"));
}

void TestWindowGpu::uiStaysResponsiveWhileALargeModelStreams() {
    // xl-2025 (the 2025 table's xl): 2 B parameters, a step of about half a second; its steps,
    // memory and results stream into the views while the UI thread keeps a 5 ms timer.
    QVERIFY(w_->labs()->select("bench"));
    w_->currentPanel()->setState(QJsonObject{{"label", "xl streaming"},
                                             {"sizes", QJsonArray{"xl-2025"}},
                                             {"context", "256"},
                                             {"batch", "4"},
                                             {"modes", QJsonArray{"train"}},
                                             {"precisions", QJsonArray{"bf16"}},
                                             {"attentions", QJsonArray{"naive"}},
                                             {"warmup", "2"},
                                             {"steps", 20},
                                             {"device", "cuda"}});
    QVERIFY2(w_->currentPanel()->isValid(), qPrintable(w_->currentPanel()->problems().join('\n')));
    QVERIFY(w_->labs()->showPane(QStringLiteral("memory")));
    StallProbe probe;
    QSignalSpy finished(w_->session(), &RunSession::runFinished);
    probe.start();
    w_->actions()->runAction()->trigger();
    QVERIFY(w_->session()->isRunning());
    runEventLoopUntil(w_->session(), &RunSession::runFinished, 400000);
    probe.stop();
    QCOMPARE(finished.count(), 1);
    QVERIFY(finished[0][0].value<RunOutcome>() == RunOutcome::Completed);
    BenchView* v = benchViewOf(w_.get());
    QCOMPARE(v->document()->steps()->rowCount(), 22);
    QVERIFY(!probe.stalls().empty());
    std::vector<qint64> sorted = probe.stalls();
    std::sort(sorted.begin(), sorted.end());
    const double worst = sorted.back() / 1e6, p99 = sorted[sorted.size() * 99 / 100] / 1e6;
    std::printf(
        "xl bf16 run of %lld ms on %s: %lld UI ticks; the UI thread's own longest stall %.1f ms, "
        "p99 %.1f ms\n",
        static_cast<long long>(probe.elapsedMs()), v->document()->environment().device_name.c_str(),
        static_cast<long long>(probe.ticks()), worst, p99);
    QVERIFY(probe.ticks() > probe.elapsedMs() / 50);  // the probe really ran throughout
    QVERIFY2(worst <= 50.0,
             qPrintable(QStringLiteral("the UI thread stalled for %1 ms").arg(worst)));
    QVERIFY2(p99 < 20.0, qPrintable(QStringLiteral("p99 stall %1 ms").arg(p99)));
    shoot(*w_, QStringLiteral("memory-xl-gpu.png"));
}

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    if (!capabilities().cuda_available) {
        std::printf("SKIPPED: no CUDA device\n");
        return 77;
    }
    TestWindowGpu t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_window_gpu.moc"
