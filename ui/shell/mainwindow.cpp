#include "ui/shell/mainwindow.h"

#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>

#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/common/storeaccess.h"
#include "ui/common/theme.h"
#include "ui/shell/exportcontroller.h"
#include "ui/shell/historycontroller.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/logpane.h"
#include "ui/shell/presentation.h"
#include "ui/shell/presets.h"
#include "ui/shell/runsession.h"
#include "ui/shell/windowactions.h"

namespace ts::ui {

namespace {
// The window's first size: 1500×950 where the screen has room, else what it has (a 1280×800
// or 1366×768 laptop), never below the window's own minimum.
QSize defaultWindowSize() {
    QSize size(1500, 950);
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableGeometry().size() * 0.95);
    return size;
}
}  // namespace

MainWindow::MainWindow(Options options, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)) {
    registerMetaTypes();
    ensureResources();
    setObjectName(QStringLiteral("MainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/trainscope.svg")));
    QString store = options_.storePath.isEmpty() ? defaultStorePath() : options_.storePath;
    if (!store.isEmpty()) QDir().mkpath(QFileInfo(store).absolutePath());
    controller_.setStorePath(store);

    deck_ = new LabDeck(&controller_, this);
    setCentralWidget(deck_->centre());
    session_ = new RunSession(&controller_, deck_, this);
    history_ = new HistoryController(session_, deck_, this);
    exports_ = new ExportController(session_, deck_, this);
    buildDocks();
    actions_ = new WindowActions(this, {session_,
                                        history_,
                                        exports_,
                                        deck_,
                                        presentation_,
                                        {experimentDock_, historyDock_, logDock_}});
    buildStatusBar();
    connectParts();
    if (options_.restoreSettings) {
        restoreSettings();
    } else {
        resize(defaultWindowSize());
        Theme::instance().setMode(Theme::instance().mode());
    }
    updateTitle();
    session_->probeCapabilities();
    history_->refresh();
}

MainWindow::~MainWindow() {
    // Results still on their way belong to nobody now.
    controller_.abandon();
}

void MainWindow::buildDocks() {
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
    experimentDock_ = new QDockWidget(tr("Experiment"), this);
    experimentDock_->setObjectName(QStringLiteral("experimentDock"));
    experimentDock_->setWidget(deck_->chooser());
    addDockWidget(Qt::LeftDockWidgetArea, experimentDock_);

    historyDock_ = new QDockWidget(tr("History"), this);
    historyDock_->setObjectName(QStringLiteral("historyDock"));
    historyDock_->setWidget(history_->widget());
    addDockWidget(Qt::BottomDockWidgetArea, historyDock_);

    log_ = new LogPane(this);
    logDock_ = new QDockWidget(tr("Log"), this);
    logDock_->setObjectName(QStringLiteral("logDock"));
    logDock_->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, logDock_);
    splitDockWidget(historyDock_, logDock_, Qt::Horizontal);

    presentation_ = new PresentationMode(this, {experimentDock_, historyDock_, logDock_});
    resizeDocks({experimentDock_}, {400}, Qt::Horizontal);
    resizeDocks({historyDock_}, {230}, Qt::Vertical);
}

void MainWindow::buildStatusBar() {
    statusBar()->addWidget(session_->statusLabel(), 1);
    statusBar()->addPermanentWidget(session_->problemsLabel());
    statusBar()->addPermanentWidget(history_->storeLabel());
    statusBar()->addPermanentWidget(session_->etaLabel());
    statusBar()->addPermanentWidget(session_->progressBar());
}

// What the parts say goes to the log and the status bar; the title follows the shown run.
void MainWindow::connectParts() {
    connect(deck_, &LabDeck::logLine, log_, &LogPane::append);
    connect(session_, &RunSession::logLine, log_, &LogPane::append);
    connect(history_, &HistoryController::logLine, log_, &LogPane::append);
    connect(exports_, &ExportController::logLine, log_, &LogPane::append);
    connect(session_, &RunSession::notice, statusBar(), &QStatusBar::showMessage);
    connect(history_, &HistoryController::notice, statusBar(), &QStatusBar::showMessage);
    connect(exports_, &ExportController::notice, statusBar(), &QStatusBar::showMessage);
    connect(deck_, &LabDeck::titleChanged, this, &MainWindow::updateTitle);
    connect(session_, &RunSession::runStarting, this, &MainWindow::saveSettings);
}

void MainWindow::updateTitle() {
    const LabView* v = deck_->currentView();
    const QString deleted = deck_->deletedRunNote(v);
    // A view that has shown nothing since the start has no run to name ("Unsaved run" was its
    // empty export context's title).
    setWindowTitle(tr("TrainScope — %1")
                       .arg(!v || !deck_->showsRun(v) ? tr("No run shown")
                            : deleted.isEmpty()       ? v->runTitle()
                                                      : tr("%1 (deleted)").arg(v->runTitle())));
}

QString MainWindow::logText() const { return log_->text(); }

void MainWindow::restoreSettings() {
    QSettings s;
    Theme::instance().setMode(
        themeModeFromKey(s.value(QStringLiteral("theme"), QStringLiteral("system")).toString()));
    if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(defaultWindowSize());
    const QByteArray layout = s.value(QStringLiteral("window/state")).toByteArray();
    restoreState(layout);
    if (s.value(QStringLiteral("presentation"), false).toBool())
        presentation_->setActive(true, layout);
    for (const LabDeck::Lab& lab : deck_->labs()) {
        const QByteArray json = s.value(QStringLiteral("panels/") + lab.id).toByteArray();
        if (!json.isEmpty()) lab.panel->restoreState(QJsonDocument::fromJson(json).object());
    }
    deck_->select(s.value(QStringLiteral("experiment")).toString());
    // A pane key; older settings held an index.
    deck_->showPane(s.value(QStringLiteral("tab")).toString());
}

void MainWindow::saveSettings() const {
    if (!options_.restoreSettings) return;
    QSettings s;
    s.setValue(QStringLiteral("theme"), themeModeKey(Theme::instance().mode()));
    s.setValue(QStringLiteral("presentation"), presentation_->isActive());
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"),
               presentation_->userLayout());  // never the presentation layout
    for (const LabDeck::Lab& lab : deck_->labs())
        s.setValue(QStringLiteral("panels/") + lab.id,
                   QJsonDocument(lab.panel->savedState()).toJson(QJsonDocument::Compact));
    s.setValue(QStringLiteral("experiment"), deck_->currentId());
    if (const LabView* v = deck_->currentView(); v && v->currentPane() >= 0)
        s.setValue(QStringLiteral("tab"), v->panes()[v->currentPane()].key);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (controller_.isRunning()) {
        const auto answer = QMessageBox::question(
            this, tr("Quit"),
            tr("A run is in progress. Stop it and quit? Finished points are kept."));
        if (answer != QMessageBox::Yes) {
            e->ignore();
            return;
        }
    }
    saveSettings();
    deck_->stopReplays();
    controller_.abandon();
    e->accept();
}

}  // namespace ts::ui
