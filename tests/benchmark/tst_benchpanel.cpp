// The benchmark panel: lists make sweeps, bad values are flagged in place (red frame, the
// engine's message as tooltip) and block Run, options this machine cannot run are disabled
// with the reason, and the state round-trips (settings, presets).
#include <QCheckBox>
#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtTest>

#include "runtime/environment.h"
#include "runtime/python_runner.h"
#include "ui/benchmark/benchpanel.h"
#include "ui/shell/presets.h"

using namespace ts;
using namespace ts::ui;

namespace {
QJsonObject tinyState() {
    return QJsonObject{{"sizes", QJsonArray{"tiny"}},
                       {"context", "32"},
                       {"batch", "2"},
                       {"modes", QJsonArray{"train"}},
                       {"precisions", QJsonArray{"fp32"}},
                       {"attentions", QJsonArray{"naive"}},
                       {"warmup", "1"},
                       {"steps", 3},
                       {"device", "cpu"}};
}
// d_model 100 with 3 heads: the engine refuses it.
QJsonObject customStateWithBadHeads() {
    QJsonObject s = tinyState();
    s["sizes"] = QJsonArray{"custom"};
    s["custom"] =
        QJsonObject{{"vocab", 1000}, {"d_model", 100}, {"d_ff", 256}, {"layers", 2}, {"heads", 3}};
    return s;
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
    void presetLabelLastsAsLongAsThePresetsConfiguration();
    void presetLabelSurvivesARestartOnlyUnchanged();
    void wheelOverAnUnfocusedFieldLeavesItsValue();
    void invalidFieldsKeepTheirArrowsAndGetAFrame();
    void problemsGrowBelowTheFields();
    void tooLargeANumberIsCalledTooLarge();
    void compiledModeIsASweepDimension();
    void yourCodeIsASweepDimension();
    void aContextTooLargeFramesTheContext();

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
    // ... in the panel's words, not the engine's JSON key.
    QVERIFY2(batch->toolTip().startsWith(QStringLiteral("Batch size must be positive")),
             qPrintable(batch->toolTip()));
    QVERIFY(!p.problems().join(' ').contains(QStringLiteral("batch_size")));
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
    p.setState(customStateWithBadHeads());
    QVERIFY(!p.isValid());
    QVERIFY(flagged(p.fieldWidget("heads")));  // "d_model 100 is not divisible by num_heads 3"
    // In the panel's words: "Heads", as the field's label says, not the engine's "num_heads".
    QVERIFY2(
        p.fieldWidget("heads")->toolTip().contains(QStringLiteral("is not divisible by heads 3")),
        qPrintable(p.fieldWidget("heads")->toolTip()));
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
    s["custom"] =
        QJsonObject{{"vocab", 5000}, {"d_model", 96}, {"d_ff", 384}, {"layers", 3}, {"heads", 6}};
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
        if (preset.experiment != QLatin1String("bench"))
            continue;  // other labs test their own presets
        BenchPanel p;
        p.setCapabilities(caps_);
        QJsonObject config = preset.config;
        if (!caps_.cuda_available)
            for (auto it = preset.cpuConfig.begin(); it != preset.cpuConfig.end(); ++it)
                config[it.key()] = it.value();
        p.setState(config);
        QVERIFY2(p.isValid(), qPrintable(preset.id + ": " + p.problems().join('\n')));
        QVERIFY2(!preset.description.isEmpty(), qPrintable(preset.id));
    }
}

namespace {
QString jobLabel(const BenchPanel& p) {
    const auto job = p.makeJob();
    return job ? job->label : QStringLiteral("<no job>");
}
QLineEdit* lineField(const BenchPanel& p, const char* name) {
    return qobject_cast<QLineEdit*>(p.fieldWidget(name));
}
}  // namespace

void TestBenchPanel::presetLabelLastsAsLongAsThePresetsConfiguration() {
    BenchPanel p;
    p.setCapabilities(caps_);
    p.applyPreset(tinyState(), QStringLiteral("Warm-up matters"));
    QCOMPARE(jobLabel(p), QStringLiteral("Warm-up matters"));
    // The first change of the configuration: the run is not the preset's any more.
    lineField(p, "context")->setText(QStringLiteral("48"));
    QCOMPARE(jobLabel(p), QString());
    QCOMPARE(p.state().value("label").toString(), QString());
    lineField(p, "context")->setText(QStringLiteral("32"));  // back again: the label stays gone
    QCOMPARE(jobLabel(p), QString());
    // A label the user typed is theirs: changes keep it.
    p.applyPreset(tinyState(), QStringLiteral("Warm-up matters"));
    lineField(p, "label")->setText(QStringLiteral("my run"));
    lineField(p, "context")->setText(QStringLiteral("48"));
    QCOMPARE(jobLabel(p), QStringLiteral("my run"));
    // A preset that names its own label is labelled so, and the label goes the same way.
    QJsonObject s = tinyState();
    s["label"] = "own";
    p.applyPreset(s, QStringLiteral("Title"));
    QCOMPARE(jobLabel(p), QStringLiteral("own"));
    qobject_cast<QSpinBox*>(p.fieldWidget("steps"))->setValue(9);
    QCOMPARE(jobLabel(p), QString());
}

void TestBenchPanel::presetLabelSurvivesARestartOnlyUnchanged() {
    BenchPanel a;
    a.setCapabilities(caps_);
    a.applyPreset(tinyState(), QStringLiteral("Warm-up matters"));
    {
        BenchPanel b;  // the next session, unchanged: still the preset's run, and still tracked
        b.setCapabilities(caps_);
        b.restoreState(a.savedState());
        QCOMPARE(jobLabel(b), QStringLiteral("Warm-up matters"));
        lineField(b, "batch")->setText(QStringLiteral("3"));
        QCOMPARE(jobLabel(b), QString());
    }
    lineField(a, "batch")->setText(QStringLiteral("3"));
    BenchPanel c;  // changed before the restart: no label comes back
    c.setCapabilities(caps_);
    c.restoreState(a.savedState());
    QCOMPARE(jobLabel(c), QString());
    QCOMPARE(c.state().value("batch").toString(), QStringLiteral("3"));
}

void TestBenchPanel::wheelOverAnUnfocusedFieldLeavesItsValue() {
    QScrollArea area;
    auto* p = new BenchPanel;
    p->setCapabilities(caps_);
    p->setState(tinyState());
    area.setWidget(p);
    area.setWidgetResizable(true);
    area.resize(420, 300);  // shorter than the panel: it scrolls
    area.show();
    QVERIFY(QTest::qWaitForWindowExposed(&area));
    auto* steps = qobject_cast<QSpinBox*>(p->fieldWidget("steps"));
    QVERIFY(steps && !steps->hasFocus());
    QCOMPARE(steps->focusPolicy(), Qt::StrongFocus);
    auto wheel = [](QWidget* w) {
        const QPointF at(w->width() / 2.0, w->height() / 2.0);
        QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(w, &e);
    };
    const int before = steps->value();
    const int scrolled = area.verticalScrollBar()->value();
    wheel(steps);
    QCOMPARE(steps->value(), before);
    QVERIFY2(area.verticalScrollBar()->value() > scrolled,  // the panel scrolled instead
             qPrintable(QStringLiteral("bar %1 of %2")
                            .arg(area.verticalScrollBar()->value())
                            .arg(area.verticalScrollBar()->maximum())));
    auto* device = qobject_cast<QComboBox*>(p->fieldWidget("device"));
    const int index = device->currentIndex();
    wheel(device);
    QCOMPARE(device->currentIndex(), index);
    // Clicked into, the field takes the wheel as usual.
    area.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&area));
    steps->setFocus();
    QTRY_VERIFY(steps->hasFocus());
    wheel(steps);
    QVERIFY(steps->value() != before);
}

void TestBenchPanel::invalidFieldsKeepTheirArrowsAndGetAFrame() {
    BenchPanel p;
    p.setCapabilities(caps_);
    p.setState(customStateWithBadHeads());
    p.resize(420, 1000);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    auto* heads = qobject_cast<QSpinBox*>(p.fieldWidget("heads"));
    QVERIFY(flagged(heads));
    // No style sheet on the spin box (it would drop the native arrows); a frame around it.
    QVERIFY(heads->styleSheet().isEmpty());
    QCOMPARE(heads->buttonSymbols(), QAbstractSpinBox::UpDownArrows);
    QWidget* frame = nullptr;
    for (QWidget* w : heads->parentWidget()->findChildren<QWidget*>(QStringLiteral("invalidFrame")))
        if (w->geometry().contains(heads->geometry())) frame = w;
    QVERIFY(frame);
    QVERIFY(frame->isVisible());
    QVERIFY(frame->testAttribute(Qt::WA_TransparentForMouseEvents));  // clicks reach the field
    heads->setValue(5);
    QVERIFY(!flagged(heads));
    QVERIFY(!frame->isVisible());
}

void TestBenchPanel::problemsGrowBelowTheFields() {
    BenchPanel p;
    p.setCapabilities(caps_);
    p.setState(tinyState());
    p.resize(420, 1200);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    QList<QWidget*> fields;
    for (const char* name : {"context", "batch", "warmup", "steps", "device"})
        fields << p.fieldWidget(name);
    QList<int> ys;
    for (QWidget* w : fields) ys << w->mapTo(&p, QPoint()).y();
    lineField(p, "context")->setText(QStringLiteral("0, x, -5"));
    lineField(p, "batch")->setText(QStringLiteral("0"));
    lineField(p, "warmup")->setText(QStringLiteral("-1"));
    QVERIFY(p.problems().size() >= 2);
    p.layout()->activate();
    QApplication::processEvents();
    for (int i = 0; i < fields.size(); ++i)
        QVERIFY2(fields[i]->mapTo(&p, QPoint()).y() == ys[i],
                 qPrintable(QStringLiteral("%1 moved from y %2 to %3")
                                .arg(fields[i]->objectName())
                                .arg(ys[i])
                                .arg(fields[i]->mapTo(&p, QPoint()).y())));
    auto* problems = p.findChild<QLabel*>(QStringLiteral("problems"));
    QVERIFY(problems && problems->isVisible());
    for (QWidget* w : fields)
        QVERIFY(problems->mapTo(&p, QPoint()).y() > w->mapTo(&p, QPoint()).y());
}

void TestBenchPanel::tooLargeANumberIsCalledTooLarge() {
    BenchPanel p;
    p.setCapabilities(caps_);
    p.setState(tinyState());
    lineField(p, "context")->setText(QStringLiteral("99999999999999999999"));
    QVERIFY(flagged(p.fieldWidget("context")));
    const QString tip = p.fieldWidget("context")->toolTip();
    QVERIFY2(tip.contains(QStringLiteral("'99999999999999999999' is too large")), qPrintable(tip));
    QVERIFY(!tip.contains(QStringLiteral("not a whole number")));
    lineField(p, "context")->setText(QStringLiteral("1e5"));
    QVERIFY(p.fieldWidget("context")->toolTip().contains(QStringLiteral("not a whole number")));
}

void TestBenchPanel::compiledModeIsASweepDimension() {
    BenchPanel p;
    p.setCapabilities(caps_);
    QCheckBox* compiled = nullptr;
    for (QCheckBox* cb : p.findChildren<QCheckBox*>())
        if (cb->text() == QLatin1String("compiled (CUDA graphs)")) compiled = cb;
    QVERIFY(compiled);
    QJsonObject s = tinyState();
    s["execs"] = QJsonArray{"eager", "compiled"};
    if (!caps_.cuda_available) {
        // No GPU: compiled is disabled with the engine's reason, and a state asking for it drops
        // it.
        QVERIFY(!compiled->isEnabled());
        QVERIFY2(compiled->toolTip().contains(QStringLiteral("needs a CUDA device")),
                 qPrintable(compiled->toolTip()));
        QStringList notes;
        p.setState(s, &notes);
        QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
        QCOMPARE(p.points().size(), size_t(1));
        QVERIFY(p.points().front().exec == ExecMode::Eager);
        QVERIFY2(notes.join(' ').contains(QStringLiteral("compiled left out")),
                 qPrintable(notes.join('\n')));
    } else {
        s["device"] = "cuda";
        p.setState(s);
        QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
        QCOMPARE(p.points().size(), size_t(2));
        QVERIFY(p.points()[0].exec == ExecMode::Eager);
        QVERIFY(p.points()[1].exec == ExecMode::Compiled);
        const auto job = p.makeJob();
        QVERIFY(job);
        QVERIFY(QString::fromStdString(job->spec_json)
                    .contains(QStringLiteral("\"execs\":[\"eager\",\"compiled\"]")));
        s["precisions"] =
            QJsonArray{"fp16"};  // fp16 training is not captured: flagged on both fields
        p.setState(s);
        QVERIFY(!p.isValid());
        QVERIFY(flagged(p.fieldWidget("execs")));
    }
    // A state saved before the field: eager.
    p.setState(tinyState());
    QCOMPARE(p.state().value("execs").toArray(), QJsonArray{"eager"});
    QVERIFY(p.points().front().exec == ExecMode::Eager);
    // A stored run's spec from before the field reads as eager too.
    QCOMPARE(
        BenchPanel::stateFromSpec(QJsonObject{{"base", QJsonObject{}}}).value("execs").toArray(),
        QJsonArray{"eager"});
}

void TestBenchPanel::yourCodeIsASweepDimension() {
    BenchPanel p;
    p.setCapabilities(caps_);
    // The example checkout is there to run from the first start.
    auto* code = qobject_cast<QLineEdit*>(p.fieldWidget("code"));
    QVERIFY(code);
    QCOMPARE(code->text(), QString::fromStdString(exampleCheckout()));
    QVERIFY(!code->text().isEmpty());
    QVERIFY(!code->isEnabled());  // TrainScope's model alone: no code to name
    QJsonObject s = tinyState();
    s["sources"] = QJsonArray{"trainscope", "python"};
    s["code"] = "";
    p.setState(s);
    QVERIFY(code->isEnabled());
    QVERIFY(!p.isValid());
    QVERIFY2(flagged(code), qPrintable(p.problems().join('\n')));
    s["code"] = "/no/such/model.py:build";
    p.setState(s);
    QVERIFY(flagged(code));
    QVERIFY2(p.problems().join(' ').contains(QStringLiteral("does not exist")),
             qPrintable(p.problems().join('\n')));
    s["code"] = QString::fromStdString(exampleCheckout());
    p.setState(s);
    QVERIFY2(p.isValid(), qPrintable(p.problems().join('\n')));
    QCOMPARE(p.points().size(), size_t(2));
    QVERIFY(p.points()[0].source == Source::TrainScope);
    QVERIFY(p.points()[1].source == Source::Python);
    QCOMPARE(p.points()[1].python.code, exampleCheckout());
    const auto job = p.makeJob();
    QVERIFY(job);
    // The spec a run stores reads back as the same panel state, and describes the user's code.
    const QJsonObject spec =
        QJsonDocument::fromJson(QByteArray::fromStdString(job->spec_json)).object();
    const QJsonObject back = BenchPanel::stateFromSpec(spec);
    QCOMPARE(back.value("sources").toArray(), (QJsonArray{"trainscope", "python"}));
    QCOMPARE(back.value("code").toString(), QString::fromStdString(exampleCheckout()));
    QVERIFY(BenchPanel::describeSpec(spec).startsWith(QStringLiteral("TrainScope vs your code")));
    // State round trip.
    BenchPanel q;
    q.setCapabilities(caps_);
    q.setState(p.state());
    QCOMPARE(q.state(), p.state());
    QCOMPARE(q.points(), p.points());
    // torch.compile's other modes are the user's code's alone.
    QCheckBox* reduce = nullptr;
    for (QCheckBox* cb : p.findChildren<QCheckBox*>())
        if (cb->text() == QLatin1String("reduce-overhead")) reduce = cb;
    QVERIFY(reduce);
    QVERIFY(reduce->isEnabled());
    p.setState(tinyState());
    QVERIFY(!reduce->isEnabled());
    QCOMPARE(p.state().value("sources").toArray(), QJsonArray{"trainscope"});
}

QTEST_MAIN(TestBenchPanel)
// Issue 29 item 14: context 100,000,000 framed the Device field (the engine's message says "more
// than any device holds") and said it twice in near-identical words.
void TestBenchPanel::aContextTooLargeFramesTheContext() {
    BenchPanel p;
    p.setCapabilities(caps_);
    p.setState(tinyState());
    lineField(p, "context")->setText(QStringLiteral("100000000"));
    QVERIFY(!p.isValid());
    QVERIFY2(flagged(p.fieldWidget("context")), qPrintable(p.problems().join('\n')));
    QVERIFY2(!flagged(p.fieldWidget("device")), qPrintable(p.problems().join('\n')));
    // No two messages say the same thing with other numbers.
    QStringList shapes;
    for (QString m : p.problems()) {
        m.remove(QRegularExpression(QStringLiteral("[0-9.e+^²]+")));
        QVERIFY2(!shapes.contains(m), qPrintable(p.problems().join('\n')));
        shapes << m;
    }
}

#include "tst_benchpanel.moc"
