#include "shell/automation.h"

#include <QApplication>
#include <QFileInfo>
#include <QDir>
#include <QPixmap>
#include <QTimer>

#include <cstdio>
#include <memory>

#include "common/labpanel.h"
#include "shell/historywidget.h"
#include "shell/mainwindow.h"

namespace ts::ui {

bool hasWork(const AutomationOptions& o) {
    return !o.experiment.isEmpty() || !o.preset.isEmpty() || !o.config.isEmpty() || o.run || !o.compare.isEmpty() || o.open > 0 ||
           !o.shots.isEmpty() || !o.report.isEmpty();
}

namespace {

// The script as a chain of steps; each step calls next() when it is done.
struct Script : std::enable_shared_from_this<Script> {
    MainWindow* w;
    AutomationOptions o;
    int failures = 0;

    void fail(const QString& msg) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(msg));
        ++failures;
    }

    void start() {
        auto self = shared_from_this();
        if (w->capabilitiesReady()) QTimer::singleShot(0, w, [self] { self->configure(); });
        else QObject::connect(w, &MainWindow::capabilitiesKnown, w, [self] { self->configure(); },
                              Qt::SingleShotConnection);
    }

    void configure() {
        if (!o.experiment.isEmpty() && !w->selectExperiment(o.experiment))
            fail(QStringLiteral("no experiment '%1'").arg(o.experiment));
        if (!o.preset.isEmpty()) {
            if (auto p = findPreset(o.preset)) w->loadPreset(*p);
            else fail(QStringLiteral("no preset '%1'").arg(o.preset));
        }
        if (!o.config.isEmpty() && w->currentPanel()) w->currentPanel()->setState(o.config);
        auto self = shared_from_this();
        if (o.run) {
            QObject::connect(w, &MainWindow::runFinished, w, [self] { QTimer::singleShot(200, self->w, [self] { self->afterRun(); }); },
                             Qt::SingleShotConnection);
            if (!w->startRun()) {
                fail(QStringLiteral("the configuration cannot run: ") + w->currentPanel()->problems().join(QStringLiteral("; ")));
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
            QObject::connect(w, &MainWindow::storedRunOpened, w, [self, opened] {
                *opened = true;
                self->shoot(0);
            }, Qt::SingleShotConnection);
            QTimer::singleShot(15000, w, [self, opened] {  // the window logs why it could not
                if (*opened) return;
                self->fail(QStringLiteral("could not open run %1").arg(self->o.open));
                self->finish();
            });
            w->openStoredRun(o.open);
            return;
        }
        if (o.compare.size() != 2) {
            shoot(0);
            return;
        }
        auto self = shared_from_this();
        QObject::connect(w, &MainWindow::historyRefreshed, w, [self] {
            const auto& runs = self->w->runList()->runs();  // newest first
            auto resolve = [&](qint64 id) -> qint64 {
                if (id >= 0) return id;
                const size_t i = static_cast<size_t>(-id - 1);
                return i < runs.size() ? runs[i].id : 0;
            };
            const qint64 a = resolve(self->o.compare[0]), b = resolve(self->o.compare[1]);
            if (a <= 0 || b <= 0) {
                self->fail(QStringLiteral("not enough stored runs to compare"));
                self->shoot(0);
                return;
            }
            // Exactly one of the two answers comes; the other connection is dropped with it.
            auto ready = std::make_shared<QMetaObject::Connection>();
            auto failed = std::make_shared<QMetaObject::Connection>();
            *ready = QObject::connect(self->w, &MainWindow::comparisonReady, self->w, [self, failed] {
                QObject::disconnect(*failed);
                self->shoot(0);
            }, Qt::SingleShotConnection);
            *failed = QObject::connect(self->w, &MainWindow::comparisonFailed, self->w,
                                       [self, ready](const QString& why) {
                                           QObject::disconnect(*ready);
                                           self->fail(QStringLiteral("cannot compare: ") + why);
                                           self->finish();
                                       }, Qt::SingleShotConnection);
            self->w->history()->selectRuns({a, b});
            self->w->compareStoredRuns(std::min(a, b), std::max(a, b));
        }, Qt::SingleShotConnection);
        w->refreshHistory();
    }

    void shoot(int i) {
        if (i >= o.shots.size()) {
            writeReport();
            return;
        }
        const auto& [tab, path] = o.shots[i];
        if (!w->showTab(tab)) fail(QStringLiteral("no tab '%1'").arg(tab));
        auto self = shared_from_this();
        QTimer::singleShot(o.settleMs, w, [self, i, path = path] {
            QDir().mkpath(QFileInfo(path).absolutePath());
            const QPixmap shot = self->w->grab();
            if (!shot.save(path, "PNG")) self->fail(QStringLiteral("cannot write %1").arg(path));
            else std::fprintf(stderr, "trainscope: wrote %s\n", qPrintable(path));
            self->shoot(i + 1);
        });
    }

    void writeReport() {
        if (!o.report.isEmpty()) {
            QString err;
            if (!w->exportReport(o.report, QSize(1200, 700), &err)) fail(err);
        }
        finish();
    }

    void finish() {
        if (o.quit) QTimer::singleShot(0, qApp, [f = failures] { QApplication::exit(f ? 1 : 0); });
    }
};

}  // namespace

void startAutomation(MainWindow* window, const AutomationOptions& options) {
    auto script = std::make_shared<Script>();
    script->w = window;
    script->o = options;
    script->start();
}

}  // namespace ts::ui
