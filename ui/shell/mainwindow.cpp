#include "ui/shell/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/chartpane.h"
#include "ui/common/chartstyle.h"
#include "ui/common/format.h"
#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/common/storeaccess.h"
#include "ui/common/tableview.h"
#include "ui/common/theme.h"
#include "ui/labs.h"
#include "ui/shell/historywidget.h"
#include "ui/shell/longruncheck.h"
#include "ui/shell/presentation.h"
#include "ui/shell/storefollower.h"

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
QString outcomeText(RunOutcome o) {
    switch (o) {
        case RunOutcome::Completed:
            return QObject::tr("finished");
        case RunOutcome::Stopped:
            return QObject::tr("stopped");
        case RunOutcome::Failed:
            return QObject::tr("failed");
    }
    return {};
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

    buildLabs();
    buildDocks();
    buildActions();
    buildStatusBar();
    connectRun();
    if (options_.restoreSettings) {
        restoreSettings();
    } else {
        resize(defaultWindowSize());
        Theme::instance().setMode(Theme::instance().mode());
    }
    updateRunState();
    updateTitle();
    probeCapabilities();
    storeFollower_ = new StoreFollower(this);
    connect(storeFollower_, &StoreFollower::changed, this, &MainWindow::refreshHistory);
    refreshHistory();
}

MainWindow::~MainWindow() {
    // Results still on their way belong to nobody now.
    controller_.abandon();
}

// ---------------------------------------------------------------- labs and docks

void MainWindow::buildLabs() {
    views_ = new QStackedWidget(this);
    views_->setObjectName(QStringLiteral("labViews"));
    setCentralWidget(withDeletedBanner(views_));
    for (const LabEntry& e : uiLabs()) {
        LabPanel* p = e.createPanel();
        p->setObjectName(e.id + QStringLiteral("Panel"));
        LabView* v = e.createView();
        v->setObjectName(e.id + QStringLiteral("View"));
        v->setParent(views_);
        views_->addWidget(v);
        labs_.append({e.id, e.title, p, v});
        connectView(v);
        connect(p, &LabPanel::changed, this, &MainWindow::updateRunState);
        connect(p, &LabPanel::runRequested, this, &MainWindow::startRun);
    }
}

void MainWindow::connectView(LabView* v) {
    connect(v, &LabView::exportRequested, this,
            [this, v](int pane) { exportPaneInteractive(v, pane); });
    connect(v, &LabView::copyRequested, this, [this, v](int pane) { copyPane(v, pane); });
    connect(v, &LabView::titleChanged, this, &MainWindow::updateTitle);
    connect(v, &LabView::logLine, this, &MainWindow::appendLog);
    connect(v, &LabView::statusText, this, [this](const QString& t) { statusLabel_->setText(t); });
    connect(v, &LabView::progress, this, &MainWindow::setProgress);
    connect(v, &LabView::openPointInLab, this, &MainWindow::openPointInLab);
    connect(v, &LabView::replayFinished, this, [this] {
        eta_->clear();
        updateRunState();
        Q_EMIT replayFinished();
    });
}

void MainWindow::buildDocks() {
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    // The lab chooser and one panel per lab.
    auto* expWidget = new QWidget(this);
    auto* expLayout = new QVBoxLayout(expWidget);
    expLayout->setContentsMargins(4, 4, 4, 4);
    experimentCombo_ = new QComboBox(expWidget);
    experimentCombo_->setObjectName(QStringLiteral("experiment"));
    panels_ = new QStackedWidget(expWidget);
    for (const Lab& lab : labs_) {
        LabPanel* p = lab.panel;
        auto* scroll = new QScrollArea(panels_);
        scroll->setWidget(p);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        panels_->addWidget(scroll);
        experimentCombo_->addItem(lab.title, lab.id);
    }
    // The dock is wide enough for the shown panel's fields (they are never clipped; the dock
    // scrolls vertically only); a hidden panel asks for nothing: its size is stale after a font
    // change (presentation mode) until it is shown. Re-applied once the new font has settled.
    auto fitPanels = [this] {
        for (int i = 0; i < panels_->count(); ++i) {
            auto* scroll = static_cast<QScrollArea*>(panels_->widget(i));
            const int fit = scroll->widget()->minimumSizeHint().width() +
                            scroll->verticalScrollBar()->sizeHint().width() + 6;
            scroll->setMinimumWidth(i == panels_->currentIndex() ? fit : 0);
        }
    };
    fitPanels();
    connect(&Theme::instance(), &Theme::changed, panels_,
            [this, fitPanels] { QTimer::singleShot(0, panels_, fitPanels); });
    connect(experimentCombo_, &QComboBox::currentIndexChanged, this, [this, fitPanels](int i) {
        panels_->setCurrentIndex(i);
        QTimer::singleShot(0, panels_, fitPanels);
        views_->setCurrentIndex(i);
        updateRunState();
        updateTitle();
        // The status line and progress were the last lab's: say what this one shows.
        if (!isRunning()) {
            LabView* v = currentView();
            const bool shown = v && shownStore_.contains(v);
            statusLabel_->setText(!shown                ? tr("Ready")
                                  : v->storeRunId() > 0 ? tr("Showing run %1").arg(v->storeRunId())
                                                        : tr("Showing an unsaved run"));
            setProgress(shown ? 1.0 : 0.0, -1);
        }
    });
    auto* chooser = new QHBoxLayout;
    chooser->addWidget(new QLabel(tr("Experiment:"), expWidget));
    chooser->addWidget(experimentCombo_, 1);
    expLayout->addLayout(chooser);
    expLayout->addWidget(panels_, 1);
    experimentDock_ = new QDockWidget(tr("Experiment"), this);
    experimentDock_->setObjectName(QStringLiteral("experimentDock"));
    experimentDock_->setWidget(expWidget);
    addDockWidget(Qt::LeftDockWidgetArea, experimentDock_);

    history_ = new HistoryWidget(&runs_, this);
    {
        QStringList openable, replayable, comparable, replayTitles, compareTitles;
        for (const Lab& lab : labs_) {
            openable << lab.id;
            if (lab.view->replayUnavailable().isEmpty()) {
                replayable << lab.id;
                replayTitles << lab.title;
            }
            if (lab.view->compareUnavailable().isEmpty()) {
                comparable << lab.id;
                compareTitles << lab.title;
            }
        }
        history_->setOpenableKinds(openable);
        history_->setReplayableKinds(
            replayable,
            tr("Replay works on runs of %1 only (their steps were recorded); open others instead")
                .arg(replayTitles.join(QStringLiteral(", "))));
        history_->setComparableKinds(comparable,
                                     tr("Compare works on runs of %1 only; open others instead")
                                         .arg(compareTitles.join(QStringLiteral(", "))));
    }
    historyDock_ = new QDockWidget(tr("History"), this);
    historyDock_->setObjectName(QStringLiteral("historyDock"));
    historyDock_->setWidget(history_);
    addDockWidget(Qt::BottomDockWidgetArea, historyDock_);
    connect(history_, &HistoryWidget::openRequested, this, &MainWindow::openStoredRun);
    connect(history_, &HistoryWidget::replayRequested, this,
            [this](qint64 id) { replayStoredRun(id, 1.0); });
    connect(history_, &HistoryWidget::compareRequested, this, &MainWindow::compareStoredRuns);
    connect(history_, &HistoryWidget::refreshRequested, this, &MainWindow::refreshHistory);
    connect(history_, &HistoryWidget::deleteRequested, this, &MainWindow::deleteStoredRun);
    connect(history_, &HistoryWidget::loadConfigurationRequested, this,
            [this](qint64 id) { loadRunConfiguration(id); });
    connect(history_, &HistoryWidget::runAgainRequested, this,
            [this](qint64 id) { loadRunConfiguration(id, true); });

    log_ = new QPlainTextEdit(this);
    log_->setObjectName(QStringLiteral("log"));
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(5000);
    auto logFont = [this] {
        QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        f.setPointSizeF(f.pointSizeF() * Theme::instance().fontScale());
        log_->setFont(f);
    };
    logFont();
    connect(&Theme::instance(), &Theme::changed, log_, logFont);
    logDock_ = new QDockWidget(tr("Log"), this);
    logDock_->setObjectName(QStringLiteral("logDock"));
    logDock_->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, logDock_);
    splitDockWidget(historyDock_, logDock_, Qt::Horizontal);
    // Log lines come in bursts; the pane is updated at most 10 times a second.
    logThrottle_ = new RedrawThrottle(
        [this] {
            if (pendingLog_.isEmpty()) return;
            log_->appendPlainText(pendingLog_.join(QLatin1Char('\n')));
            pendingLog_.clear();
        },
        this, 100);
    presentation_ = new PresentationMode(this, {experimentDock_, historyDock_, logDock_});
    resizeDocks({experimentDock_}, {400}, Qt::Horizontal);
    resizeDocks({historyDock_}, {230}, Qt::Vertical);
}

void MainWindow::buildActions() {
    const QStyle* st = style();
    runAct_ = new QAction(tr("&Run"), this);
    runAct_->setObjectName(QStringLiteral("runAction"));
    runAct_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_R), QKeySequence(Qt::Key_F5)});
    connect(runAct_, &QAction::triggered, this, &MainWindow::startRun);
    stopAct_ = new QAction(tr("&Stop"), this);
    stopAct_->setObjectName(QStringLiteral("stopAction"));
    stopAct_->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Period), QKeySequence(Qt::SHIFT | Qt::Key_F5)});
    stopAct_->setToolTip(tr("End the run within a step; what was measured is kept"));
    connect(stopAct_, &QAction::triggered, this, &MainWindow::stopRun);

    auto* exportView = new QAction(tr("&Export Current View…"), this);
    exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(exportView, &QAction::triggered, this, [this] {
        if (LabView* v = currentView()) exportPaneInteractive(v, v->currentPane());
    });
    auto* copyView = new QAction(tr("&Copy Current View"), this);
    copyView->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    connect(copyView, &QAction::triggered, this, [this] {
        if (LabView* v = currentView()) copyPane(v, v->currentPane());
    });
    auto* report = new QAction(tr("Export Run &Report…"), this);
    report->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    connect(report, &QAction::triggered, this, &MainWindow::exportReportInteractive);
    auto* quit = new QAction(tr("&Quit"), this);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    presetsMenu_ = new QMenu(tr("Classroom &Presets"), this);
    for (const ClassroomPreset& p : loadPresets()) {
        QAction* a = presetsMenu_->addAction(p.title);
        a->setData(p.id);
        a->setToolTip(p.description);
        a->setStatusTip(p.description);
        connect(a, &QAction::triggered, this, [this, p] { loadPreset(p); });
    }
    presetsMenu_->setToolTipsVisible(true);
    presetsMenu_->addSeparator();
    presetsMenu_->addAction(tr("Open Preset File…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Preset"), QString(),
                                                          tr("Presets (*.json)"));
        if (path.isEmpty()) return;
        QString err;
        if (auto p = readPreset(path, &err))
            loadPreset(*p);
        else
            QMessageBox::warning(this, tr("Open Preset"), err);
    });

    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Open Results &Store…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O),
                    this, &MainWindow::openStoreInteractive);
    file->addMenu(presetsMenu_);
    file->addAction(tr("&Import Trace…"), this, [this] { importTrace(); });
    file->addSeparator();
    file->addAction(exportView);
    file->addAction(copyView);
    file->addAction(report);
    file->addSeparator();
    file->addAction(quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(runAct_);
    run->addAction(stopAct_);
    run->addSeparator();
    run->addAction(tr("&Open Selected Run"), QKeySequence(Qt::CTRL | Qt::Key_O), this, [this] {
        if (auto ids = history_->selectedRuns(); !ids.isEmpty()) openStoredRun(ids.front());
    });
    run->addAction(tr("Re&play Selected Run"), this, [this] {
        if (auto ids = history_->selectedRuns(); !ids.isEmpty()) replayStoredRun(ids.front(), 1.0);
    });
    run->addAction(tr("Replay Selected Run &Fast (10×)"), this, [this] {
        if (auto ids = history_->selectedRuns(); !ids.isEmpty()) replayStoredRun(ids.front(), 10.0);
    });
    run->addAction(tr("&Compare Selected Runs"), QKeySequence(Qt::CTRL | Qt::Key_D), this, [this] {
        const auto ids = history_->selectedRuns();
        if (ids.size() == 2)
            compareStoredRuns(std::min(ids[0], ids[1]), std::max(ids[0], ids[1]));
        else
            statusBar()->showMessage(tr("Select exactly two runs in the History pane"), 4000);
    });
    run->addAction(tr("Refresh &History"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), this,
                   &MainWindow::refreshHistory);

    // One submenu per experiment, its panes in tab order; Ctrl+1..9 are the shown experiment's
    // first nine panes (the shortcuts move with the experiment, so each pane has one).
    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (int l = 0; l < labs_.size(); ++l) {
        QMenu* sub = view->addMenu(labs_[l].title);
        sub->setObjectName(labs_[l].id + QStringLiteral("PaneMenu"));
        const auto& panes = labs_[l].view->panes();
        for (int p = 0; p < panes.size(); ++p) {
            QString text = panes[p].title;
            text.remove(QLatin1Char('&'));
            QAction* a = sub->addAction(text, this, [this, l, p] {
                if (experimentCombo_->currentIndex() == l || selectExperiment(labs_[l].id))
                    labs_[l].view->showPane(p);
            });
            a->setData(panes[p].key);
            paneActions_[l].append(a);
        }
    }
    auto moveShortcuts = [this] {
        const int shown = experimentCombo_->currentIndex();
        for (auto it = paneActions_.begin(); it != paneActions_.end(); ++it)
            for (int p = 0; p < it.value().size(); ++p)
                it.value()[p]->setShortcut(
                    it.key() == shown && p < 9
                        ? QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + p))
                        : QKeySequence());
    };
    moveShortcuts();
    connect(experimentCombo_, &QComboBox::currentIndexChanged, this, moveShortcuts);
    view->addSeparator();
    view->addAction(experimentDock_->toggleViewAction());
    view->addAction(historyDock_->toggleViewAction());
    view->addAction(logDock_->toggleViewAction());
    view->addSeparator();
    presentationAct_ = view->addAction(tr("&Presentation Mode"));
    presentationAct_->setCheckable(true);
    presentationAct_->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), QKeySequence(Qt::Key_F11)});
    presentationAct_->setToolTip(
        tr("Large fonts, high-contrast charts and the results alone (the docks hidden)"));
    connect(presentationAct_, &QAction::toggled, this, &MainWindow::setPresentationMode);
    QMenu* theme = view->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(this);
    systemThemeAct_ = theme->addAction(tr("&System"));
    lightAct_ = theme->addAction(tr("&Light"));
    darkAct_ = theme->addAction(tr("&Dark"));
    for (auto [act, mode] :
         {std::pair{systemThemeAct_, ThemeMode::System}, std::pair{lightAct_, ThemeMode::Light},
          std::pair{darkAct_, ThemeMode::Dark}}) {
        act->setCheckable(true);
        group->addAction(act);
        connect(act, &QAction::triggered, this, [mode] { Theme::instance().setMode(mode); });
    }
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        const ThemeMode m = Theme::instance().mode();
        runAct_->setIcon(Theme::instance().icon(Glyph::Run));  // drawn in the palette's colours
        stopAct_->setIcon(Theme::instance().icon(Glyph::Stop));
        systemThemeAct_->setChecked(m == ThemeMode::System);
        lightAct_->setChecked(m == ThemeMode::Light);
        darkAct_->setChecked(m == ThemeMode::Dark);
        const QSignalBlocker block(presentationAct_);
        presentationAct_->setChecked(presentation_->isActive());
    });
    systemThemeAct_->setChecked(true);
    runAct_->setIcon(Theme::instance().icon(Glyph::Run));
    stopAct_->setIcon(Theme::instance().icon(Glyph::Stop));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("What This &Machine Can Run…"), this, [this] {
        QString text;
        if (!capsReady_) {
            text = tr("Still checking.");
        } else {
            text = tr("LibTorch %1 (%2)\n")
                       .arg(qstr(caps_.torch_version),
                            caps_.torch_cuda_build ? tr("CUDA build") : tr("CPU build"));
            text += caps_.cuda_available ? tr("CUDA available\n") : tr("No CUDA device\n");
            text += caps_.flash_kernels ? tr("TrainScope flash kernels built\n")
                                        : tr("No TrainScope flash kernels in this build\n");
            for (const auto& d : caps_.devices)
                text += QStringLiteral("\n• %1 %2%3%4")
                            .arg(qstr(d.id), qstr(d.name), d.bf16 ? tr(", bf16") : QString(),
                                 d.fp16 ? tr(", fp16") : QString());
        }
        text += tr("\n\nResults store: %1").arg(controller_.storePath());
        QMessageBox::information(this, tr("This Machine"), text);
    });
    help->addAction(tr("&About TrainScope"), this, [this] {
        QMessageBox::about(
            this, tr("About TrainScope"),
            tr("<b>TrainScope</b> %1<br>A workbench for GPU experiments on Transformer "
               "training: configure, run, watch, compare, export.")
                .arg(QApplication::applicationVersion()));
    });

    auto* tb = addToolBar(tr("Main"));
    tb->setObjectName(QStringLiteral("mainToolBar"));
    tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tb->addAction(runAct_);
    tb->addAction(stopAct_);
    tb->addSeparator();
    auto* presetsButton = new QToolButton(tb);
    presetsButton->setText(tr("Presets"));
    presetsButton->setIcon(st->standardIcon(QStyle::SP_DirOpenIcon));
    presetsButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    presetsButton->setPopupMode(QToolButton::InstantPopup);
    presetsButton->setMenu(presetsMenu_);
    tb->addWidget(presetsButton);
    exportView->setIcon(st->standardIcon(QStyle::SP_DialogSaveButton));
    report->setIcon(st->standardIcon(QStyle::SP_FileDialogDetailedView));
    tb->addAction(exportView);
    tb->addAction(report);
    tb->addSeparator();
    tb->addAction(presentationAct_);
}

void MainWindow::buildStatusBar() {
    statusLabel_ = new QLabel(tr("Checking what this machine can run…"), this);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(260);
    progress_->setTextVisible(true);
    progress_->setFormat(QStringLiteral("%p%"));
    eta_ = new QLabel(this);
    statusBar()->addWidget(statusLabel_, 1);
    // The panel lists its problems under its fields, possibly scrolled away: their count and
    // the first of them stay in sight here.
    problemsLabel_ = new QLabel(this);
    problemsLabel_->setObjectName(QStringLiteral("problemsIndicator"));
    problemsLabel_->setStyleSheet(QStringLiteral("QLabel { color: #e53935; }"));
    problemsLabel_->hide();
    statusBar()->addPermanentWidget(problemsLabel_);
    storeLabel_ = new QLabel(this);
    storeLabel_->setObjectName(QStringLiteral("storeLabel"));
    updateStoreLabel();
    statusBar()->addPermanentWidget(storeLabel_);
    statusBar()->addPermanentWidget(eta_);
    statusBar()->addPermanentWidget(progress_);
    progress_->setValue(0);
}

// ---------------------------------------------------------------- runs

void MainWindow::connectRun() {
    connect(
        &controller_, &RunController::runStarted, this,
        [this](quint64, qint64 storeRun, const Environment& env) {
            if (runningView_) runningView_->runStarted(storeRun, env);
            appendLog(storeRun > 0
                          ? tr("Stored as run %1 in %2").arg(storeRun).arg(controller_.storePath())
                          : tr("This run is not stored"));
            if (!env.device_name.empty())
                appendLog(environmentLines(env).join(QStringLiteral(" · ")));
        });
    connect(&controller_, &RunController::itemsArrived, this,
            [this](quint64, const QList<QVariant>& items) {
                if (runningView_) runningView_->addItems(items);
            });
    longRun_ = new LongRunCheck(this);
    connect(longRun_, &LongRunCheck::stopRequested, this, &MainWindow::stopRun);
    connect(&controller_, &RunController::progress, this, [this](quint64, double f, double eta) {
        setProgress(f, eta);
        longRun_->progress(f, eta);
    });
    connect(&controller_, &RunController::logMessage, this,
            [this](quint64, int level, const QString& text) {
                static const char* prefix[] = {"", "warning: ", "error: "};
                appendLog(QLatin1String(prefix[std::clamp(level, 0, 2)]) + text);
            });
    connect(&controller_, &RunController::runFinished, this,
            [this](quint64, RunOutcome outcome, const QString& message) {
                const QString took = formatDuration(runClock_.elapsed() / 1000.0);
                QString line = tr("Run %1 after %2").arg(outcomeText(outcome), took);
                if (!message.isEmpty()) line += QStringLiteral(": ") + message;
                appendLog(line);
                statusLabel_->setText(line);
                // A stopped or failed run's progress (7%) would read as a run still going.
                setProgress(outcome == RunOutcome::Completed ? 1.0 : 0.0, -1);
                eta_->clear();
                longRun_->runFinished();
                updateRunState();
                refreshHistory();
                Q_EMIT runFinished(outcome);
            });
}

bool MainWindow::startRun() {
    if (isRunning()) return false;
    LabPanel* p = currentPanel();
    if (!p) return false;
    if (!capsReady_) {
        statusBar()->showMessage(tr("Still checking what this machine can run"), 3000);
        return false;
    }
    std::optional<LabJob> job = p->makeJob();
    if (!job) {
        const QStringList problems = p->problems();
        appendLog(tr("Cannot run: %1")
                      .arg(problems.isEmpty() ? tr("nothing to run")
                                              : problems.join(QStringLiteral("; "))));
        statusLabel_->setText(tr("Fix the flagged fields first"));
        return false;
    }
    saveSettings();  // the last configuration survives a crash of the run
    runningView_ = currentView();
    runningView_->beginRun(*job);
    noteShown(runningView_);
    appendLog(tr("— Run: %1").arg(p->summary()));
    setProgress(0, -1);
    runClock_.start();
    longRun_->runStarted();
    controller_.start(std::move(*job));
    updateRunState();
    return true;
}

void MainWindow::stopRun() {
    for (const Lab& lab : labs_)
        if (lab.view->isReplaying()) {
            lab.view->stopReplay();
            return;
        }
    if (!controller_.isRunning()) return;
    controller_.stop();
    appendLog(tr("Stopping after the current step…"));
    statusLabel_->setText(tr("Stopping after the current step…"));
    stopAct_->setEnabled(false);
}

bool MainWindow::isRunning() const {
    if (controller_.isRunning()) return true;
    for (const Lab& lab : labs_)
        if (lab.view->isReplaying()) return true;
    return false;
}

void MainWindow::probeCapabilities() {
    auto* watcher = new QFutureWatcher<std::pair<Capabilities, QString>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        const auto [caps, error] = watcher->result();
        watcher->deleteLater();
        caps_ = caps;
        capsReady_ = true;
        if (!error.isEmpty()) appendLog(tr("warning: could not query LibTorch: %1").arg(error));
        for (const Lab& lab : labs_) lab.panel->setCapabilities(caps_);
        QStringList devs;
        for (const auto& d : caps_.devices)
            devs << qstr(d.id) +
                        (d.name.empty() ? QString() : QStringLiteral(" (%1)").arg(qstr(d.name)));
        appendLog(tr("LibTorch %1; devices: %2")
                      .arg(qstr(caps_.torch_version), devs.join(QStringLiteral(", "))));
        statusLabel_->setText(
            caps_.cuda_available
                ? tr("Ready")
                : tr("Ready — CPU only: GPU options are disabled (hover them for why)"));
        // GPU-only presets are disabled here, with the reason.
        for (QAction* a : presetsMenu_->actions())
            if (const auto p = findPreset(a->data().toString()); p && p->gpuOnly()) {
                a->setEnabled(caps_.cuda_available);
                if (!caps_.cuda_available)
                    a->setToolTip(gpuOnlyReason(*p) + QStringLiteral(". ") + p->description);
            }
        if (pendingPreset_) {
            const ClassroomPreset p = *pendingPreset_;
            pendingPreset_.reset();
            loadPreset(p);
        }
        updateRunState();
        Q_EMIT capabilitiesKnown();
    });
    // The first LibTorch query can take seconds (CUDA initialisation): off the UI thread.
    watcher->setFuture(QtConcurrent::run([]() -> std::pair<Capabilities, QString> {
        try {
            return {capabilities(), QString()};
        } catch (const std::exception& e) {
            Capabilities c;
            c.devices.push_back(DeviceInfo{"cpu", "CPU"});
            return {c, qstr(std::string(e.what()))};
        }
    }));
}

// ---------------------------------------------------------------- history

void MainWindow::refreshHistory() {
    if (controller_.storePath().isEmpty()) return;
    storeFollower_->markRead(controller_.storePath());
    auto* w = new QFutureWatcher<RunList>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w] {
        RunList list = w->result();
        w->deleteLater();
        const QList<qint64> selected = history_->selectedRuns();
        if (!list.error.isEmpty()) {
            history_->setMessage(tr("Store not readable: %1").arg(list.error));
        } else {
            history_->setMessage(!list.readOnly.isEmpty() ? tr("Read-only: %1").arg(list.readOnly)
                                 : list.runs.empty()      ? tr("No stored runs yet. Press Run.")
                                                          : QString());
            runs_.setRuns(std::move(list.runs));
            history_->selectRuns(selected);
        }
        Q_EMIT historyRefreshed();
    });
    w->setFuture(listRunsAsync(controller_.storePath()));
}

void MainWindow::withStoredRun(qint64 id, const QString& what,
                               std::function<void(const StoredRun&)> use) {
    auto* w = new QFutureWatcher<StoredRun>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, id, what, use = std::move(use)] {
        const StoredRun run = w->result();
        w->deleteLater();
        if (!run.error.isEmpty()) {
            appendLog(tr("Could not %1 run %2: %3").arg(what).arg(id).arg(run.error));
            Q_EMIT storedRunFailed(id, run.error);
            return;
        }
        if (isRunning()) return;  // a run started meanwhile owns the views
        if (labIndex(qstr(run.info.lab)) < 0) {
            const QString why =
                tr("it is of kind '%1', which this window cannot show").arg(qstr(run.info.lab));
            appendLog(tr("Could not %1 run %2: %3").arg(what).arg(id).arg(why));
            Q_EMIT storedRunFailed(id, why);
            return;
        }
        use(run);
    });
    w->setFuture(loadRunAsync(controller_.storePath(), id));
}

void MainWindow::openStoredRun(qint64 id) {
    if (isRunning()) {
        statusBar()->showMessage(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    withStoredRun(id, tr("open"), [this, id](const StoredRun& run) {
        selectExperiment(qstr(run.info.lab));
        QString error;
        if (!currentView()->showStored(run, &error)) {
            appendLog(tr("Could not open run %1: %2").arg(id).arg(error));
            Q_EMIT storedRunFailed(id, error);
            return;
        }
        runningView_ = nullptr;
        noteShown(currentView());
        setProgress(1.0, 0);
        statusLabel_->setText(tr("Showing stored run %1").arg(id));
        updateTitle();
        // A view that reads the run in a pool thread (a profile) has it shown only when it
        // says so: a report or screenshot taken before would be of an empty view.
        LabView* view = currentView();
        if (!view->loading()) {
            Q_EMIT storedRunOpened(id);
            return;
        }
        connect(
            view, &LabView::storedRunLoaded, this,
            [this, id](const QString& error) {
                updateTitle();
                if (error.isEmpty()) {
                    Q_EMIT storedRunOpened(id);
                } else {
                    appendLog(tr("Could not open run %1: %2").arg(id).arg(error));
                    Q_EMIT storedRunFailed(id, error);
                }
            },
            Qt::SingleShotConnection);
    });
}

void MainWindow::replayStoredRun(qint64 id, double speed) {
    if (isRunning()) {
        statusBar()->showMessage(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    if (const RunInfo* r = runs_.runById(id)) {
        const int i = labIndex(qstr(r->lab));
        if (i >= 0 && !labs_[i].view->replayUnavailable().isEmpty()) {
            statusBar()->showMessage(labs_[i].view->replayUnavailable(), 4000);
            return;
        }
    }
    withStoredRun(id, tr("replay"), [this, speed](const StoredRun& run) {
        LabView* v = labView(qstr(run.info.lab));
        if (!v->replayUnavailable().isEmpty()) {  // the history list was stale
            statusBar()->showMessage(v->replayUnavailable(), 4000);
            return;
        }
        selectExperiment(qstr(run.info.lab));
        runningView_ = nullptr;
        v->replay(run, speed);
        noteShown(v);
        updateRunState();
    });
}

void MainWindow::compareStoredRuns(qint64 a, qint64 b) {
    const QString path = controller_.storePath();
    auto* w = new QFutureWatcher<std::pair<StoredRun, StoredRun>>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w] {
        const auto [ra, rb] = w->result();
        w->deleteLater();
        for (const StoredRun* r : {&ra, &rb})
            if (!r->error.isEmpty()) {
                appendLog(tr("Could not compare: %1").arg(r->error));
                Q_EMIT comparisonFailed(r->error);
                return;
            }
        LabView* v = labView(qstr(ra.info.lab));
        QString error;
        if (ra.info.lab != rb.info.lab)
            error =
                tr("run %1 is of kind '%2' and run %3 of kind '%4': only runs of one kind compare")
                    .arg(ra.info.id)
                    .arg(qstr(ra.info.lab))
                    .arg(rb.info.id)
                    .arg(qstr(rb.info.lab));
        else if (!v)
            error = tr("runs of kind '%1' cannot be shown in this window").arg(qstr(ra.info.lab));
        else if (!v->compareUnavailable().isEmpty())
            error = v->compareUnavailable();
        if (error.isEmpty()) {
            if (!isRunning()) selectExperiment(qstr(ra.info.lab));
            if (v->compare(ra, rb, &error)) {
                noteShown(v);
                Q_EMIT comparisonReady();
                return;
            }
        }
        statusBar()->showMessage(error, 6000);  // a refusal, not a failure: nothing for the log
        Q_EMIT comparisonFailed(error);
    });
    w->setFuture(QtConcurrent::run([path, a, b] {
        return std::pair{loadRun(path, a), loadRun(path, b)};
    }));
}

bool MainWindow::loadPreset(const ClassroomPreset& preset) {
    if (isRunning()) {
        statusBar()->showMessage(tr("Wait for the run to finish, or stop it"), 4000);
        return false;
    }
    if (!capsReady_) {
        pendingPreset_ = preset;  // CPU or GPU variant: decided once the probe is back
        return true;
    }
    const int index = labIndex(preset.experiment);
    if (index < 0) {
        appendLog(tr("Preset '%1' needs the experiment '%2', which this build lacks")
                      .arg(preset.title, preset.experiment));
        return false;
    }
    if (preset.gpuOnly() && !caps_.cuda_available) {
        const QString why = gpuOnlyReason(preset);
        appendLog(why);
        statusLabel_->setText(why);
        return false;
    }
    experimentCombo_->setCurrentIndex(index);
    QJsonObject config = preset.config;
    const bool cpuVariant = !caps_.cuda_available && !preset.cpuConfig.isEmpty();
    if (cpuVariant)
        for (auto it = preset.cpuConfig.begin(); it != preset.cpuConfig.end(); ++it)
            config[it.key()] = it.value();
    QStringList notes;
    labs_[index].panel->applyPreset(config, preset.title, &notes);
    appendLog(tr("— Preset: %1").arg(preset.title));
    if (!preset.description.isEmpty()) appendLog(preset.description);
    if (cpuVariant) appendLog(tr("No CUDA device: loaded the preset's smaller CPU variant"));
    for (const QString& n : notes) appendLog(tr("note: %1").arg(n));
    labs_[index].view->applyPresetView(preset.view);
    // The views still show the last run until this one runs: say so, not only "loaded".
    LabView* v = labs_[index].view;
    statusLabel_->setText(
        shownStore_.contains(v) && v->storeRunId() > 0
            ? tr("Preset loaded: %1. Press Run; until then the views show run %2.")
                  .arg(preset.title)
                  .arg(v->storeRunId())
            : tr("Preset loaded: %1. Press Run.").arg(preset.title));
    return true;
}

QString MainWindow::gpuOnlyReason(const ClassroomPreset& preset) {
    return tr("The preset '%1' needs a CUDA GPU, and this machine has none: what it compares "
              "(%2) cannot run on the CPU")
        .arg(preset.title,
             preset.config.value(QLatin1String("backend")).toString() == QLatin1String("nccl")
                 ? tr("NCCL ranks, one per GPU")
                 : tr("its device is cuda"));
}

// ---------------------------------------------------------------- state

void MainWindow::updateRunState() {
    const bool running = isRunning();
    LabPanel* p = currentPanel();
    const bool valid = p && p->isValid();
    runAct_->setEnabled(!running && capsReady_ && valid);
    runAct_->setToolTip(
        !capsReady_ ? tr("Checking what this machine can run…")
        : running   ? tr("A run is in progress")
        : valid     ? tr("Run: %1").arg(p->summary())
                : tr("Fix first:\n%1").arg(p ? p->problems().join(QLatin1Char('\n')) : QString()));
    const QStringList problems = p && capsReady_ ? p->problems() : QStringList();
    problemsLabel_->setVisible(!problems.isEmpty());
    if (!problems.isEmpty()) {
        const QString first = problems.front().left(90) +
                              (problems.front().size() > 90 ? QStringLiteral("…") : QString());
        problemsLabel_->setText(problems.size() == 1
                                    ? tr("⚠ %1").arg(first)
                                    : tr("⚠ %1 problems: %2 …").arg(problems.size()).arg(first));
        problemsLabel_->setToolTip(problems.join(QLatin1Char('\n')));
    }
    stopAct_->setEnabled(running);
    experimentCombo_->setEnabled(!running);
    panels_->setEnabled(!running);
    presetsMenu_->setEnabled(!running);
    history_->setBusy(running);
}

void MainWindow::updateTitle() {
    const LabView* v = currentView();
    const QString deleted = deletedRunNote(v);
    // A view that has shown nothing since the start has no run to name ("Unsaved run" was its
    // empty export context's title).
    setWindowTitle(tr("TrainScope — %1")
                       .arg(!v || !shownStore_.contains(v) ? tr("No run shown")
                            : deleted.isEmpty()            ? v->runTitle()
                                                : tr("%1 (deleted)").arg(v->runTitle())));
    deletedBanner_->setText(deleted.isEmpty() ? QString()
                                              : tr("Not stored any more: %1.").arg(deleted));
    deletedBanner_->setVisible(!deleted.isEmpty());
}

void MainWindow::appendLog(const QString& line) {
    pendingLog_ << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss  ")) + line;
    logThrottle_->request();
}

QString MainWindow::logText() const {
    logThrottle_->flush();
    return log_->toPlainText();
}

void MainWindow::setProgress(double fraction, double eta) {
    progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    eta_->setText(eta >= 0 && fraction < 1 ? tr("ETA %1").arg(formatDuration(eta)) : QString());
}

int MainWindow::labIndex(const QString& id) const {
    for (int i = 0; i < labs_.size(); ++i)
        if (labs_[i].id == id) return i;
    return -1;
}

LabPanel* MainWindow::currentPanel() const {
    const int i = experimentCombo_ ? experimentCombo_->currentIndex() : -1;
    return i >= 0 && i < labs_.size() ? labs_[i].panel : nullptr;
}

LabView* MainWindow::currentView() const {
    const int i = experimentCombo_ ? experimentCombo_->currentIndex() : -1;
    return i >= 0 && i < labs_.size() ? labs_[i].view : nullptr;
}

QString MainWindow::statusText() const { return statusLabel_->text(); }

QString MainWindow::currentLabId() const {
    const int i = experimentCombo_ ? experimentCombo_->currentIndex() : -1;
    return i >= 0 && i < labs_.size() ? labs_[i].id : QString();
}

LabPanel* MainWindow::panel(const QString& id) const {
    const int i = labIndex(id);
    return i < 0 ? nullptr : labs_[i].panel;
}

bool MainWindow::importTrace(const QString& chosen, QString* error) {
    QString path = chosen, why;
    if (path.isEmpty()) {
        QStringList filters, all;
        for (const Lab& lab : labs_)
            if (const QStringList p = lab.view->importPatterns(); !p.isEmpty()) {
                filters << tr("%1 (%2)").arg(lab.title, p.join(QLatin1Char(' ')));
                all << p;
            }
        filters.prepend(tr("Traces and snapshots (%1)").arg(all.join(QLatin1Char(' '))));
        path = QFileDialog::getOpenFileName(this, tr("Import Trace"), {}, filters.join(";;"));
        if (path.isEmpty()) return false;
    }
    const QString name = QFileInfo(path).fileName();
    LabView* v = nullptr;
    QString lab;
    for (const Lab& l : labs_)
        for (const QString& p : l.view->importPatterns())
            if (!v && QDir::match(p, name)) v = l.view, lab = l.id;
    if (!v)
        why = tr("%1: no experiment imports this kind of file").arg(name);
    else if (isRunning())
        why = tr("Wait for the run to finish, or stop it");
    else if (!selectExperiment(lab))
        why = tr("%1: the experiment '%2' cannot be shown now").arg(name, lab);
    else if (v->importFile(path, controller_.storePath(), &why))
        noteShown(v);
    if (!why.isEmpty()) {
        appendLog(tr("Import failed: %1").arg(why));
        statusBar()->showMessage(why, 8000);
        if (chosen.isEmpty()) QMessageBox::warning(this, tr("Import Trace"), why);
    }
    if (error) *error = why;
    return why.isEmpty();
}

LabView* MainWindow::labView(const QString& id) const {
    const int i = labIndex(id);
    return i < 0 ? nullptr : labs_[i].view;
}

std::pair<int, int> MainWindow::findPane(const QString& key) const {
    // "lab.key" names one lab's pane.
    if (const qsizetype dot = key.indexOf(QLatin1Char('.')); dot > 0) {
        const int lab = labIndex(key.left(dot));
        const int pane = lab >= 0 ? labs_[lab].view->paneIndex(key.mid(dot + 1)) : -1;
        return pane >= 0 ? std::pair{lab, pane} : std::pair{-1, -1};
    }
    // Labs share pane keys ("timeline" is the profiler's and the memory lab's): the shown lab's
    // pane first, then the first lab that has one.
    const int current = experimentCombo_->currentIndex();
    if (current >= 0 && current < labs_.size())
        if (const int p = labs_[current].view->paneIndex(key); p >= 0) return {current, p};
    for (int i = 0; i < labs_.size(); ++i)
        if (const int p = labs_[i].view->paneIndex(key); p >= 0) return {i, p};
    return {-1, -1};
}

QStringList MainWindow::tabKeys() const {
    // Each key once; one that several labs share also as "lab.key" ("memory.timeline").
    QStringList keys, shared;
    for (const Lab& lab : labs_)
        for (const LabView::Pane& pane : lab.view->panes()) {
            if (keys.contains(pane.key) && !shared.contains(pane.key)) shared << pane.key;
            if (!keys.contains(pane.key)) keys << pane.key;
        }
    for (const Lab& lab : labs_)
        for (const LabView::Pane& pane : lab.view->panes())
            if (shared.contains(pane.key)) keys << lab.id + QLatin1Char('.') + pane.key;
    return keys;
}

bool MainWindow::showTab(const QString& key) {
    const auto [lab, pane] = findPane(key);
    if (lab < 0) return false;
    if (experimentCombo_->currentIndex() != lab && !selectExperiment(labs_[lab].id)) return false;
    labs_[lab].view->showPane(pane);
    return true;
}

bool MainWindow::selectExperiment(const QString& id) {
    const int i = experimentCombo_->findData(id);
    if (i < 0 || isRunning()) return false;
    experimentCombo_->setCurrentIndex(i);
    return true;
}

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
    for (const Lab& lab : labs_) {
        const QByteArray json = s.value(QStringLiteral("panels/") + lab.id).toByteArray();
        if (!json.isEmpty()) lab.panel->restoreState(QJsonDocument::fromJson(json).object());
    }
    const int exp = experimentCombo_->findData(s.value(QStringLiteral("experiment")).toString());
    if (exp >= 0) experimentCombo_->setCurrentIndex(exp);
    showTab(s.value(QStringLiteral("tab")).toString());  // a pane key; older settings held an index
}

void MainWindow::saveSettings() const {
    if (!options_.restoreSettings) return;
    QSettings s;
    s.setValue(QStringLiteral("theme"), themeModeKey(Theme::instance().mode()));
    s.setValue(QStringLiteral("presentation"), presentation_->isActive());
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"),
               presentation_->userLayout());  // never the presentation layout
    for (const Lab& lab : labs_)
        s.setValue(QStringLiteral("panels/") + lab.id,
                   QJsonDocument(lab.panel->savedState()).toJson(QJsonDocument::Compact));
    s.setValue(QStringLiteral("experiment"), experimentCombo_->currentData().toString());
    if (const LabView* v = currentView(); v && v->currentPane() >= 0)
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
    for (const Lab& lab : labs_) lab.view->stopReplay();
    controller_.abandon();
    e->accept();
}

}  // namespace ts::ui
