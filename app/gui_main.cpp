// trainscope: the workbench window. Options script it for screenshots and demos.
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

#include "ui/common/theme.h"
#include "ui/labs.h"
#include "ui/shell/automation.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/presentation.h"
#include "ui/shell/presets.h"

namespace {

void nameTheApplication() {
    QCoreApplication::setOrganizationName(QStringLiteral("TrainScope"));
    QCoreApplication::setApplicationName(QStringLiteral("TrainScope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TRAINSCOPE_UI_VERSION));
}

// Qt aborts when no window system can be reached; say what to do before it tries.
bool displayReachable(int argc, char** argv) {
    if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") ||
        !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return true;
    for (int i = 1; i < argc; ++i)
        if (qstrcmp(argv[i], "-platform") == 0 || qstrcmp(argv[i], "--platform") == 0) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral(
        "TrainScope: where the time and memory of a transformer training step go (the window; "
        "trainscope-cli is the same without one).\n"
        "Every option is checked before the window opens: a bad one exits 2 with the reason; a "
        "session that quits exits 1 when its run, the opened run or the comparison failed or "
        "could not be stored, or a tab it asked for is not there."));
    cli.addHelpOption();
    cli.addVersionOption();
    QCommandLineOption db(
        QStringLiteral("db"),
        QStringLiteral(
            "Results store (default: $TRAINSCOPE_DB or ~/.local/share/trainscope/results.db)."),
        QStringLiteral("path"));
    QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("light, dark or system."),
                             QStringLiteral("mode"));
    QCommandLineOption presentation(QStringLiteral("presentation"),
                                    QStringLiteral("Start in presentation mode."));
    QCommandLineOption fresh(
        QStringLiteral("no-restore"),
        QStringLiteral("Ignore and keep the saved window state and configuration."));
    QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size, e.g. 1600x1000."),
                            QStringLiteral("WxH"));
    // The experiments and presets as the window has them, not a hand-kept list.
    QStringList labIds, presetIds;
    for (const auto& lab : ts::ui::uiLabs()) labIds << lab.id;
    ts::ui::ensureResources();
    for (const auto& p : ts::ui::loadPresets()) presetIds << p.id;
    QCommandLineOption experiment(
        QStringLiteral("experiment"),
        QStringLiteral("Select an experiment: %1.").arg(labIds.join(QStringLiteral(", "))),
        QStringLiteral("id"));
    QCommandLineOption preset(
        QStringLiteral("preset"),
        QStringLiteral("Load a classroom preset: %1.").arg(presetIds.join(QStringLiteral(", "))),
        QStringLiteral("id"));
    QCommandLineOption config(QStringLiteral("config"),
                              QStringLiteral("Panel state as JSON, or a file holding it."),
                              QStringLiteral("json"));
    QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Press Run once ready."));
    QCommandLineOption compare(
        QStringLiteral("compare"),
        QStringLiteral("Compare two stored runs: A,B (ids; 'last' and 'previous' allowed)."),
        QStringLiteral("A,B"));
    QCommandLineOption overlay(
        QStringLiteral("overlay"),
        QStringLiteral("Overlay two or more stored runs of one experiment on one chart: A,B,... "
                       "(ids; 'last' and 'previous' allowed)."),
        QStringLiteral("A,B,..."));
    QCommandLineOption open(QStringLiteral("open"),
                            QStringLiteral("Open a stored run into the views (its id)."),
                            QStringLiteral("id"));
    QCommandLineOption shot(
        QStringLiteral("screenshot"),
        QStringLiteral(
            "After the run (or the run --open shows, the --compare or the --overlay), "
            "grab a tab: TAB=file.png, TAB a tab's key in the experiment shown (steps, sweep, "
            "speedup, attention, lanes, ...; one that two experiments share also as "
            "experiment.tab: memory.timeline; a key that is not one lists them all). "
            "To TAB=file.csv or file.md: the tab's table instead (a CSV with its "
            "environment beside it, file.environment.json). A bare file.png grabs the window as "
            "the "
            "script leaves it (the overlay's chart after --overlay). Repeatable; quits "
            "after."),
        QStringLiteral("tab=png"));
    QCommandLineOption report(QStringLiteral("report"),
                              QStringLiteral("After the run (or the run --open shows, or the "
                                             "--compare), write a Markdown report of the "
                                             "experiment shown, its charts beside it, and quit."),
                              QStringLiteral("file.md"));
    for (const auto* o : {&db, &theme, &presentation, &fresh, &size, &experiment, &preset, &config,
                          &run, &compare, &overlay, &open, &shot, &report})
        cli.addOption(*o);
    {
        // Options first, with no window system: --help, --version and a bad option answer
        // anywhere, a terminal without a display included.
        QCoreApplication options(argc, argv);
        nameTheApplication();
        cli.process(options);
    }
    if (!displayReachable(argc, argv)) {
        std::fprintf(
            stderr,
            "trainscope: no display to open the window on: run it in a desktop session, under "
            "xvfb-run, or with QT_QPA_PLATFORM=offscreen for scripted screenshots (trainscope-cli "
            "needs no display).\n");
        return 2;
    }
    QGuiApplication::setHighDpiScaleFactorRoundingPolicy(
        Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    nameTheApplication();
    QApplication::setDesktopFileName(QStringLiteral("org.trainscope.TrainScope"));

    ts::ui::AutomationArgs args;
    args.experiment = cli.value(experiment);
    args.preset = cli.value(preset);
    args.config = cli.value(config);
    args.run = cli.isSet(run);
    args.compare = cli.value(compare);
    args.overlay = cli.value(overlay);
    args.open = cli.value(open);
    args.size = cli.value(size);
    args.theme = cli.value(theme);
    args.shots = cli.values(shot);
    args.report = cli.value(report);
    args.storePath = cli.value(db);
    ts::ui::AutomationOptions script;
    if (const QString error = ts::ui::parseAutomation(args, &script); !error.isEmpty()) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(error));
        return 2;
    }

    ts::ui::MainWindow::Options options;
    options.storePath = cli.value(db);
    options.restoreSettings = !cli.isSet(fresh);
    // The theme before the window is built (its charts take their colours as they are made),
    // and again after it: restored settings must not override what was asked for.
    if (!script.theme.isEmpty())
        ts::ui::Theme::instance().setMode(ts::ui::themeModeFromKey(script.theme));
    ts::ui::MainWindow window(options);
    if (!script.theme.isEmpty())
        ts::ui::Theme::instance().setMode(ts::ui::themeModeFromKey(script.theme));
    if (cli.isSet(presentation)) window.presentation()->setActive(true);  // the docks hidden too
    if (script.size.isValid()) window.resize(script.size);
    window.show();
    if (ts::ui::hasWork(script)) ts::ui::startAutomation(&window, script);
    return app.exec();
}
