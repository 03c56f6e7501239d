#include "ui/shell/automation.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QPixmap>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <memory>

#include "core/atomic_file.h"
#include "ui/common/exporter.h"
#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/common/storeaccess.h"
#include "ui/labs.h"
#include "ui/shell/exportcontroller.h"
#include "ui/shell/historycontroller.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/longruncheck.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/presets.h"
#include "ui/shell/runsession.h"

namespace ts::ui {

namespace {

// "last" = -1, "previous" = -2, a positive id as it is; 0 for anything else.
qint64 runReference(const QString& text) {
    if (text == QLatin1String("last")) return -1;
    if (text == QLatin1String("previous")) return -2;
    bool ok = false;
    const qint64 id = text.toLongLong(&ok);
    return ok && id > 0 ? id : 0;
}

QString checkConfig(const QString& text, QJsonObject* out) {
    QByteArray json = text.toUtf8();
    if (const QByteArray t = json.trimmed(); !t.startsWith('{') && !t.startsWith('[')) {
        QFile f(text);
        if (!f.open(QIODevice::ReadOnly))
            return QStringLiteral(
                       "--config: '%1' is neither a JSON object nor a readable file (%2)")
                .arg(text, f.errorString());
        json = f.readAll();
    }
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
    if (err.error != QJsonParseError::NoError)
        return QStringLiteral("--config: not valid JSON at offset %1: %2")
            .arg(err.offset)
            .arg(err.errorString());
    if (!doc.isObject()) return QStringLiteral("--config: expected a JSON object ({...})");
    *out = doc.object();
    return {};
}

QString labIds() {
    QStringList ids;
    for (const LabEntry& lab : uiLabs()) ids << lab.id;
    return ids.join(QStringLiteral(", "));
}

QString presetIds() {
    QStringList ids;
    for (const ClassroomPreset& p : loadPresets()) ids << p.id;
    return ids.join(QStringLiteral(", "));
}

}  // namespace

QString parseAutomation(const AutomationArgs& a, AutomationOptions* out) {
    AutomationOptions o;
    o.experiment = a.experiment;
    if (!o.experiment.isEmpty() &&
        std::none_of(uiLabs().begin(), uiLabs().end(),
                     [&](const LabEntry& l) { return l.id == o.experiment; }))
        return QStringLiteral("--experiment: no experiment '%1' (one of: %2)")
            .arg(o.experiment, labIds());
    o.preset = a.preset;
    if (!o.preset.isEmpty() && !findPreset(o.preset))
        return QStringLiteral("--preset: no preset '%1' (one of: %2)").arg(o.preset, presetIds());
    if (!a.config.isEmpty())
        if (QString e = checkConfig(a.config, &o.config); !e.isEmpty()) return e;
    o.run = a.run;
    if (!a.compare.isEmpty()) {
        const QStringList ids = a.compare.split(QLatin1Char(','));
        for (const QString& id : ids) o.compare << runReference(id.trimmed());
        if (ids.size() != 2 || o.compare.contains(0))
            return QStringLiteral(
                       "--compare: expected two runs as A,B (run ids, 'last' or 'previous'), got "
                       "'%1'")
                .arg(a.compare);
    }
    if (!a.overlay.isEmpty()) {
        const QStringList ids = a.overlay.split(QLatin1Char(','));
        for (const QString& id : ids) o.overlay << runReference(id.trimmed());
        if (ids.size() < 2 || o.overlay.contains(0))
            return QStringLiteral(
                       "--overlay: expected two or more runs as A,B,... (run ids, 'last' or "
                       "'previous'), got '%1'")
                .arg(a.overlay);
    }
    if (!a.open.isEmpty() && (o.open = runReference(a.open)) <= 0)
        return QStringLiteral("--open: expected a run id (a positive whole number), got '%1'")
            .arg(a.open);
    if ((!o.compare.isEmpty()) + (o.open > 0) + (!o.overlay.isEmpty()) > 1)
        return QStringLiteral("--open, --compare and --overlay: choose one");
    for (const QString& s : a.shots) {
        const qsizetype eq = s.indexOf(QLatin1Char('='));
        // A bare picture's name: the window as the script leaves it (the overlay, a comparison).
        if (eq < 0 && s.endsWith(QLatin1String(".png"), Qt::CaseInsensitive) && s.size() > 4) {
            o.shots.append({QString(), s});
            continue;
        }
        if (eq <= 0 || eq == s.size() - 1)
            return QStringLiteral("--screenshot: expected TAB=file.png or file.png, got '%1'")
                .arg(s);
        o.shots.append({s.left(eq), s.mid(eq + 1)});
    }
    o.report = a.report;
    // Written files never replace the results store (nor another one): checked here, before
    // anything runs, and again before each write.
    const std::string store =
        (a.storePath.isEmpty() ? defaultStorePath() : a.storePath).toStdString();
    for (const auto& [tab, path] : o.shots)
        if (const std::string problem = outputTargetProblem(path.toStdString(), store);
            !problem.empty())
            return QStringLiteral("--screenshot: %1").arg(QString::fromStdString(problem));
    if (!o.report.isEmpty())
        if (const std::string problem = outputTargetProblem(o.report.toStdString(), store);
            !problem.empty())
            return QStringLiteral("--report: %1").arg(QString::fromStdString(problem));
    if (!a.size.isEmpty()) {
        const auto m = QRegularExpression(QStringLiteral("^(\\d{2,5})x(\\d{2,5})$")).match(a.size);
        if (!m.hasMatch())
            return QStringLiteral(
                       "--size: expected WIDTHxHEIGHT in pixels, e.g. 1600x1000, got '%1'")
                .arg(a.size);
        o.size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
        // A window past 8K is no window to look at, and its backing store (99999² pixels: 37
        // GiB) is what made the window crash while painting; one below 320×240 shows nothing.
        constexpr int kMinW = 320, kMinH = 240, kMax = 8192;
        if (o.size.width() < kMinW || o.size.height() < kMinH || o.size.width() > kMax ||
            o.size.height() > kMax)
            return QStringLiteral("--size: %1 is outside %2x%3 to %4x%4 pixels")
                .arg(a.size)
                .arg(kMinW)
                .arg(kMinH)
                .arg(kMax);
    }
    if (!a.theme.isEmpty() &&
        !QStringList{QStringLiteral("light"), QStringLiteral("dark"), QStringLiteral("system")}
             .contains(a.theme))
        return QStringLiteral("--theme: expected light, dark or system, got '%1'").arg(a.theme);
    o.theme = a.theme;
    o.quit = !o.shots.isEmpty() || !o.report.isEmpty();
    *out = o;
    return {};
}

bool hasWork(const AutomationOptions& o) {
    return !o.experiment.isEmpty() || !o.preset.isEmpty() || !o.config.isEmpty() || o.run ||
           !o.compare.isEmpty() || !o.overlay.isEmpty() || o.open > 0 || !o.shots.isEmpty() ||
           !o.report.isEmpty();
}

namespace {

// The script as a chain of steps; each step calls next() when it is done. It talks to the
// window's parts: the run session, the labs, History and the exports; the window itself is
// only what a screenshot grabs.
struct Script : std::enable_shared_from_this<Script> {
    MainWindow* w;
    RunSession* session;
    LabDeck* labs;
    HistoryController* history;
    ExportController* exports;
    AutomationOptions o;
    int failures = 0;

    void fail(const QString& msg) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(msg));
        ++failures;
    }
    int runFailures = 0;  // the run's own: they end a session that quits, not an open window
    void runFailed(const QString& msg) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(msg));
        ++runFailures;
    }

    void start() {
        session->longRunCheck()->setEnabled(false);  // nobody is there to answer
        auto self = shared_from_this();
        if (session->capabilitiesReady())
            QTimer::singleShot(0, w, [self] { self->configure(); });
        else
            QObject::connect(
                session, &RunSession::capabilitiesKnown, w, [self] { self->configure(); },
                Qt::SingleShotConnection);
    }

    void configure() {
        if (!o.experiment.isEmpty() && !labs->select(o.experiment))
            fail(QStringLiteral("no experiment '%1'").arg(o.experiment));
        if (!o.preset.isEmpty()) {
            if (auto p = findPreset(o.preset)) {
                if (!session->loadPreset(*p))
                    fail(QStringLiteral("--preset %1: %2").arg(o.preset, session->statusText()));
            } else
                fail(QStringLiteral("no preset '%1'").arg(o.preset));
        }
        if (!o.config.isEmpty() && labs->currentPanel()) {
            QStringList notes;
            labs->currentPanel()->setState(o.config, &notes);
            for (const QString& n : notes) fail(QStringLiteral("--config: ") + n);
        }
        if (failures) {  // a script that did not configure what it asked for runs nothing
            finish();
            return;
        }
        auto self = shared_from_this();
        if (o.run) {
            QObject::connect(
                session, &RunSession::runFinished, w,
                [self](RunOutcome outcome) {
                    // A run that failed (or was stopped) is no run to show: a session that quits
                    // when done ends 1 after what it was asked to write, with the reasons (one
                    // that stays open shows them in the log). An out-of-memory point is a result,
                    // as in the CLI. See RunController::lastProblems.
                    if (outcome == RunOutcome::Failed)
                        self->runFailed(QStringLiteral("the run failed (see the log)"));
                    else if (outcome == RunOutcome::Stopped)
                        self->runFailed(QStringLiteral("the run was stopped"));
                    for (const QString& p : self->session->lastProblems())
                        self->runFailed(QStringLiteral("the run: ") + p);
                    QTimer::singleShot(200, self->w, [self] { self->afterRun(); });
                },
                Qt::SingleShotConnection);
            if (!session->start()) {
                fail(QStringLiteral("the configuration cannot run: ") +
                     labs->currentPanel()->problems().join(QStringLiteral("; ")));
                finish();
            }
        } else {
            afterRun();
        }
    }

    void afterRun() {
        if (o.open > 0) {
            auto self = shared_from_this();
            auto opened = std::make_shared<bool>(false);
            QObject::connect(
                history, &HistoryController::storedRunOpened, w,
                [self, opened] {
                    if (*opened) return;
                    *opened = true;
                    self->shoot(0);
                },
                Qt::SingleShotConnection);
            QObject::connect(
                history, &HistoryController::storedRunFailed, w,
                [self, opened](qint64, const QString& why) {
                    if (*opened) return;
                    *opened = true;
                    self->fail(
                        QStringLiteral("could not open run %1: %2").arg(self->o.open).arg(why));
                    self->finish();
                },
                Qt::SingleShotConnection);
            QTimer::singleShot(60000, w, [self, opened] {  // neither answer came
                if (*opened) return;
                *opened = true;
                self->fail(QStringLiteral("could not open run %1").arg(self->o.open));
                self->finish();
            });
            history->openStoredRun(o.open);
            return;
        }
        if (!o.overlay.isEmpty()) {
            overlay();
            return;
        }
        if (o.compare.size() != 2) {
            shoot(0);
            return;
        }
        auto self = shared_from_this();
        QObject::connect(
            history, &HistoryController::refreshed, w,
            [self] {
                const auto& runs = self->history->runList()->runs();  // newest first
                auto resolve = [&](qint64 id) -> qint64 {
                    if (id >= 0) return id;
                    const size_t i = static_cast<size_t>(-id - 1);
                    return i < runs.size() ? runs[i].id : 0;
                };
                const qint64 a = resolve(self->o.compare[0]), b = resolve(self->o.compare[1]);
                if (a <= 0 || b <= 0) {
                    self->fail(QStringLiteral("not enough stored runs to compare"));
                    self->finish();
                    return;
                }
                // Exactly one of the two answers comes; the other connection is dropped with it.
                auto ready = std::make_shared<QMetaObject::Connection>();
                auto failed = std::make_shared<QMetaObject::Connection>();
                *ready = QObject::connect(
                    self->history, &HistoryController::comparisonReady, self->w,
                    [self, failed] {
                        QObject::disconnect(*failed);
                        self->shoot(0);
                    },
                    Qt::SingleShotConnection);
                *failed = QObject::connect(
                    self->history, &HistoryController::comparisonFailed, self->w,
                    [self, ready](const QString& why) {
                        QObject::disconnect(*ready);
                        self->fail(QStringLiteral("cannot compare: ") + why);
                        self->finish();
                    },
                    Qt::SingleShotConnection);
                self->history->widget()->selectRuns({a, b});
                self->history->compareStoredRuns(std::min(a, b), std::max(a, b));
            },
            Qt::SingleShotConnection);
        history->refresh();
    }

    // The runs asked for on one chart, once History lists the store ("last" and "previous"
    // need its list); exactly one of ready, failed or the time-out ends the wait.
    void overlay() {
        auto self = shared_from_this();
        auto done = std::make_shared<bool>(false);
        auto end = [self, done](const QString& why) {
            if (*done) return;
            *done = true;
            if (why.isEmpty()) return self->shoot(0);
            self->fail(QStringLiteral("cannot overlay: ") + why);
            self->finish();
        };
        QObject::connect(
            history, &HistoryController::refreshed, w,
            [self, end] {
                const auto& runs = self->history->runList()->runs();  // newest first
                QList<qint64> ids;
                for (qint64 id : self->o.overlay) {
                    const size_t i = static_cast<size_t>(-id - 1);
                    ids << (id >= 0 ? id : i < runs.size() ? runs[i].id : 0);
                }
                if (ids.contains(0)) return end(QStringLiteral("not enough stored runs"));
                QObject::connect(
                    self->history, &HistoryController::overlayReady, self->w, [end] { end({}); },
                    Qt::SingleShotConnection);
                QObject::connect(
                    self->history, &HistoryController::overlayFailed, self->w,
                    [end](const QString& why) { end(why); }, Qt::SingleShotConnection);
                self->history->widget()->selectRuns(ids);
                self->history->overlayStoredRuns(ids);
            },
            Qt::SingleShotConnection);
        QTimer::singleShot(60000, w, [end] { end(QStringLiteral("no answer from the store")); });
        history->refresh();
    }

    void shoot(int i) {
        if (i >= o.shots.size()) {
            writeReport();
            return;
        }
        const auto& [tab, path] = o.shots[i];
        // A script that chose its lab (an experiment, a preset, a run, a stored run) takes
        // pictures of that lab: a tab of another one would be a picture of an empty view.
        const bool labChosen = !o.experiment.isEmpty() || !o.preset.isEmpty() || o.run ||
                               o.open > 0 || !o.compare.isEmpty() || !o.overlay.isEmpty();
        // ("lab.tab" names its lab: that is asked for.)
        if (LabView* v = labs->currentView(); labChosen && v && !tab.isEmpty() &&
                                              !tab.contains(QLatin1Char('.')) &&
                                              v->paneIndex(tab) < 0) {
            QStringList keys;
            for (const LabView::Pane& p : v->panes()) keys << p.key;
            fail(QStringLiteral("--screenshot: the %1 experiment has no tab '%2' (its tabs: %3)")
                     .arg(labs->currentId(), tab, keys.join(QStringLiteral(", "))));
            finish();
            return;
        }
        if (!tab.isEmpty() && !labs->showPane(tab)) {
            fail(QStringLiteral("--screenshot: no tab '%1' (one of: %2)")
                     .arg(tab, labs->paneKeys().join(QStringLiteral(", "))));
            finish();
            return;
        }
        auto self = shared_from_this();
        QTimer::singleShot(o.settleMs, w, [self, i, tab = tab, path = path] {
            if (QString error; !self->writeShot(tab, path, &error))
                self->fail(QStringLiteral("--screenshot: ") + error);
            else
                std::fprintf(stderr, "trainscope: wrote %s\n", qPrintable(path));
            self->shoot(i + 1);
        });
    }

    // The window as a PNG, whole or not at all (a QSaveFile renamed into place); to a .csv or
    // .md file, the tab's table instead (a CSV with its environment beside it as JSON).
    bool writeShot(const QString& tab, const QString& path, QString* error) {
        if (const auto table = tableFormatFor(path))
            return exports->exportTab(tab, path, {}, error, *table == TableFormat::Csv);
        if (exports->overwritesStore(path, error)) return false;
        QDir().mkpath(QFileInfo(path).absolutePath());
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || !w->grab().save(&file, "PNG") || !file.commit()) {
            *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
            return false;
        }
        return true;
    }

    void writeReport() {
        if (!o.report.isEmpty()) {
            QString err;
            if (!exports->exportReport(o.report, QSize(1200, 700), &err)) fail(err);
        }
        finish();
    }

    // A script that quits when done exits 1 if anything failed; one that only opened or
    // compared runs (and stays open for the user) exits 1 when that failed, as the README says,
    // rather than leaving an empty window up with the error on the terminal.
    void finish() {
        const bool failed = failures > 0 || (o.quit && runFailures > 0);
        if (o.quit || failed)
            QTimer::singleShot(0, qApp, [failed] { QApplication::exit(failed ? 1 : 0); });
    }
};

}  // namespace

void startAutomation(MainWindow* window, const AutomationOptions& options) {
    auto script = std::make_shared<Script>();
    script->w = window;
    script->session = window->session();
    script->labs = window->labs();
    script->history = window->history();
    script->exports = window->exports();
    script->o = options;
    script->start();
}

}  // namespace ts::ui
