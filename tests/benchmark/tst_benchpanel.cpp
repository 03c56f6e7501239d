// The benchmark panel: lists make sweeps, bad values are flagged in place (red frame, the
// engine's message as tooltip) and block Run, options this machine cannot run are disabled
// with the reason, and the state round-trips (settings, presets).
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QtTest>

#include "benchmark/benchpanel.h"
#include "shell/presets.h"
#include "runtime/environment.h"

using namespace ts;
using namespace ts::ui;

namespace {
QJsonObject tinyState() {
    return QJsonObject{{"sizes", QJsonArray{"tiny"}}, {"context", "32"}, {"batch", "2"},
                       {"modes", QJsonArray{"train"}}, {"precisions", QJsonArray{"fp32"}},
                       {"attentions", QJsonArray{"naive"}}, {"warmup", "1"}, {"steps", 3}, {"device", "cpu"}};
}
bool flagged(QWidget* w) { return w && w->property("invalid").toBool(); }
}  // namespace

class TestBenchPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void validConfigurationMakesAJob();
    void listsMakeASweep();
    void badValuesAreFlaggedInPlace();
    void engineMessagesLandOnTheirField();
    void unavailableOptionsAreDisabledWithTheReason();
    void stateRoundTrips();
    void everyPresetLoadsAndIsValidHere();

private:
    Capabilities caps_;
};

void TestBenchPanel::initTestCase() { caps_ = capabilities(); }

void TestBenchPanel::validConfigurationMakesAJob() {
    BenchPanel p;
    QVERIFY(!p.makeJob());  // nothing runs before the machine is known
    p.setCapabilities(caps_);
    p.setState(tinyState());
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    const auto job = p.makeJob();
    QVERIFY(job);
    QCOMPARE(job->point_count, 1);
    QCOMPARE(job->lab, QStringLiteral("bench"));
    QVERIFY(job->run && job->environment);
    const auto pts = p.points();
    QCOMPARE(pts.size(), size_t(1));
    QCOMPARE(pts[0].model.name, std::string("tiny"));
    QCOMPARE(pts[0].model.context_length, int64_t(32));
    QCOMPARE(pts[0].batch_size, int64_t(2));
    QCOMPARE(pts[0].warmup, 1);
    QCOMPARE(pts[0].steps, 3);
    QVERIFY(QString::fromStdString(job->spec_json).contains(QStringLiteral("\"batch_sizes\":[2]")));
}

void TestBenchPanel::listsMakeASweep() {
    BenchPanel p;
    p.setCapabilities(caps_);
    QJsonObject s = tinyState();
    s["sizes"] = QJsonArray{"tiny", "mini"};
    s["context"] = "32, 64 128";
    s["batch"] = "1;2";
    s["warmup"] = "0, 2";
    p.setState(s);
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.points().size(), size_t(2 * 3 * 2 * 2));
    QVERIFY(p.summary().startsWith(QStringLiteral("24 points")));
    s["context"] = "1-100000";  // a typo must not expand into a huge sweep
    p.setState(s);
    QVERIFY(!p.isValid());
}

void TestBenchPanel::badValuesAreFlaggedInPlace() {
    BenchPanel p;
    p.setCapabilities(caps_);
    p.setState(tinyState());
    QSignalSpy changed(&p, &LabPanel::changed);
    auto* ctx = qobject_cast<QLineEdit*>(p.fieldWidget("context"));
    QVERIFY(ctx);
    ctx->setText(QStringLiteral("32, abc"));
    QVERIFY(changed.count() > 0);
    QVERIFY(!p.isValid());
    QVERIFY(!p.makeJob());
    QVERIFY(flagged(ctx));
    QVERIFY(ctx->toolTip().contains(QStringLiteral("'abc'")));
    QVERIFY(p.problems().join(' ').contains(QStringLiteral("'abc'")));
    ctx->setText(QStringLiteral("32"));
    QVERIFY(p.isValid());
    QVERIFY(!flagged(ctx));
    // Zero is a number, but not a batch size: the engine's validation names it.
    auto* batch = qobject_cast<QLineEdit*>(p.fieldWidget("batch"));
    batch->setText(QStringLiteral("0"));
    QVERIFY(!p.isValid());
    QVERIFY(flagged(batch));
    QVERIFY(batch->toolTip().contains(QStringLiteral("batch_size")));
    batch->setText(QStringLiteral("2"));
    // Nothing ticked is a problem too.
    QJsonObject s = tinyState();
    s["precisions"] = QJsonArray{};
    s["sizes"] = QJsonArray{};
    p.setState(s);
    QVERIFY(flagged(p.fieldWidget("sizes")));
    QVERIFY(p.problems().join(' ').contains(QStringLiteral("model size")));
}

void TestBenchPanel::engineMessagesLandOnTheirField() {
    BenchPanel p;
    p.setCapabilities(caps_);
    QJsonObject s = tinyState();
    s["sizes"] = QJsonArray{"custom"};
    s["custom"] = QJsonObject{{"vocab", 1000}, {"d_model", 100}, {"d_ff", 256}, {"layers", 2}, {"heads", 3}};
    p.setState(s);
    QVERIFY(!p.isValid());
    QVERIFY(flagged(p.fieldWidget("heads")));  // "d_model 100 is not divisible by num_heads 3"
    QVERIFY(p.fieldWidget("heads")->toolTip().contains(QStringLiteral("num_heads")));
    QVERIFY(!flagged(p.fieldWidget("layers")));
    qobject_cast<QSpinBox*>(p.fieldWidget("heads"))->setValue(5);  // head dim 20: fine
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.points().front().model.d_model, int64_t(100));
}

void TestBenchPanel::unavailableOptionsAreDisabledWithTheReason() {
    BenchPanel p;
    p.setCapabilities(caps_);
    QList<QCheckBox*> boxes = p.findChildren<QCheckBox*>();
    int disabled = 0;
    for (QCheckBox* cb : boxes) {
        if (cb->isEnabled()) continue;
        ++disabled;
        // Every disabled option says why, in the engine's words.
        QVERIFY2(!cb->toolTip().trimmed().isEmpty(), qPrintable(cb->text()));
        QVERIFY(!cb->isChecked());
    }
    auto* device = qobject_cast<QComboBox*>(p.fieldWidget("device"));
    auto* model = qobject_cast<QStandardItemModel*>(device->model());
    if (!caps_.cuda_available) {
        // This machine: no GPU. "cuda" is listed, disabled, with the reason.
        const int i = device->findData(QStringLiteral("cuda"));
        QVERIFY(i >= 0);
        QVERIFY(!model->item(i)->isEnabled());
        QVERIFY(!device->itemData(i, Qt::ToolTipRole).toString().isEmpty());
        QVERIFY(disabled >= 1);  // at least the flash kernels
        for (QCheckBox* cb : boxes)
            if (cb->text() == QLatin1String("flash")) QVERIFY(!cb->isEnabled());
    }
    auto* strategy = qobject_cast<QComboBox*>(p.fieldWidget("strategy"));
    auto* smodel = qobject_cast<QStandardItemModel*>(strategy->model());
    for (int i = 1; i < strategy->count(); ++i) {
        QVERIFY(!smodel->item(i)->isEnabled());
        QVERIFY(strategy->itemData(i, Qt::ToolTipRole).toString().contains(QStringLiteral("DDP")));
    }
    // A state asking for an unavailable option drops it and says so.
    if (!caps_.cuda_available) {
        QJsonObject s = tinyState();
        s["attentions"] = QJsonArray{"naive", "flash"};
        s["device"] = "cuda";
        QStringList notes;
        p.setState(s, &notes);
        QVERIFY(p.isValid());
        QVERIFY2(notes.join(' ').contains(QStringLiteral("flash")), qPrintable(notes.join('\n')));
        QVERIFY2(notes.join(' ').contains(QStringLiteral("cuda")), qPrintable(notes.join('\n')));
        QCOMPARE(p.points().front().device, std::string("cpu"));
    }
}

void TestBenchPanel::stateRoundTrips() {
    BenchPanel a, b;
    a.setCapabilities(caps_);
    b.setCapabilities(caps_);
    QJsonObject s = tinyState();
    s["label"] = "round trip";
    s["sizes"] = QJsonArray{"tiny", "custom"};
    s["custom"] = QJsonObject{{"vocab", 5000}, {"d_model", 96}, {"d_ff", 384}, {"layers", 3}, {"heads", 6}};
    s["context"] = "32, 48";
    s["modes"] = QJsonArray{"forward", "train"};
    a.setState(s);
    b.setState(a.state());
    QCOMPARE(b.state(), a.state());
    QCOMPARE(b.points(), a.points());
    QCOMPARE(a.points().size(), size_t(2 * 2 * 2));
}

void TestBenchPanel::everyPresetLoadsAndIsValidHere() {
    const auto presets = loadPresets();
    QVERIFY(presets.size() >= 5);
    for (const auto& preset : presets) {
        BenchPanel p;
        p.setCapabilities(caps_);
        QJsonObject config = preset.config;
        if (!caps_.cuda_available)
            for (auto it = preset.cpuConfig.begin(); it != preset.cpuConfig.end(); ++it) config[it.key()] = it.value();
        p.setState(config);
        QVERIFY2(p.isValid(), qPrintable(preset.id + ": " + p.problems().join('\n')));
        QVERIFY2(!preset.description.isEmpty(), qPrintable(preset.id));
    }
}

QTEST_MAIN(TestBenchPanel)
#include "tst_benchpanel.moc"
