#include "shell/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "attention/attentionmodel.h"  // AttentionCell in a QVariant
#include "common/chartstyle.h"
#include "benchmark/comparewidget.h"
#include "common/experimentpanel.h"
#include "shell/exportdialog.h"
#include "common/format.h"
#include "shell/historywidget.h"
#include "benchmark/memorychart.h"
#include "benchmark/stepchart.h"
#include "benchmark/sweepchart.h"
#include "common/tableview.h"
#include "common/theme.h"
#include "attention/attention_report.h"
#include "benchmark/storedbenchrun.h"

namespace ts::ui {

namespace {
const char* const kTabNames[] = {"steps", "sweep", "speedup", "results", "memory", "compare"};

QWidget* withControls(QWidget* parent, QLayout* controls, QWidget* body) {
    auto* w = new QWidget(parent);
    auto* l = new QVBoxLayout(w);
    l->setContentsMargins(4, 4, 4, 4);
    if (controls) l->addLayout(controls);
    l->addWidget(body, 1);
    return w;
}

QString outcomeText(RunOutcome o) {
    switch (o) {
        case RunOutcome::Completed: return QObject::tr("finished");
        case RunOutcome::Stopped: return QObject::tr("stopped");
        case RunOutcome::Failed: return QObject::tr("failed");
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

    buildViews();
    buildDocks();
    buildActions();
    buildStatusBar();
    connectRun();
    if (options_.restoreSettings) {
        restoreSettings();
    } else {
        resize(1500, 950);
        Theme::instance().setMode(Theme::instance().mode());
    }
    updateRunState();
    updateTitle();
    probeCapabilities();
    refreshHistory();
}

MainWindow::~MainWindow() {
    // Results still on their way belong to nobody now.
    controller_.abandon();
}

// ---------------------------------------------------------------- views

void MainWindow::buildViews() {
    tabs_ = new QTabWidget(this);
    tabs_->setDocumentMode(true);
    tabs_->setObjectName(QStringLiteral("views"));
    setCentralWidget(tabs_);

    // Steps: the chart of one point above the table of every step.
    stepChart_ = new StepChart(doc_.steps(), doc_.results(), this);
    stepChart_->setObjectName(QStringLiteral("stepChart"));
    stepTable_ = new DataTableView(this);
    stepTable_->setObjectName(QStringLiteral("stepTable"));
    stepTable_->setTitle(tr("Steps"), QStringLiteral("steps"));
    stepTable_->setModel(doc_.steps());
    pointCombo_ = new QComboBox(this);
    pointCombo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    pointCombo_->setToolTip(tr("Which sweep point the chart shows"));
    auto* stepControls = new QHBoxLayout;
    stepControls->addWidget(new QLabel(tr("Point:"), this));
    stepControls->addWidget(pointCombo_);
    stepControls->addStretch();
    stepChart_->setMinimumHeight(280);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(stepChart_);
    split->addWidget(stepTable_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    tabs_->addTab(withControls(this, stepControls, split), tr("&Steps"));
    connect(pointCombo_, &QComboBox::currentIndexChanged, this,
            [this] { stepChart_->setPoint(pointCombo_->currentData().toInt()); });

    // Sweep: time against size / context / batch, one series per other varying value.
    sweepChart_ = new SweepChart(doc_.sweep(), this);
    sweepChart_->setObjectName(QStringLiteral("sweepChart"));
    sweepX_ = new QComboBox(this);
    for (Dimension d : {Dimension::Size, Dimension::Context, Dimension::Batch})
        sweepX_->addItem(dimensionName(d), static_cast<int>(d));
    sweepMetric_ = new QComboBox(this);
    for (Metric m : {Metric::Total, Metric::Forward, Metric::Backward, Metric::Optimizer})
        sweepMetric_->addItem(metricName(m), static_cast<int>(m));
    sweepLogY_ = new QCheckBox(tr("log time axis"), this);
    auto* sweepControls = new QHBoxLayout;
    sweepControls->addWidget(new QLabel(tr("Time against:"), this));
    sweepControls->addWidget(sweepX_);
    sweepControls->addWidget(new QLabel(tr("Phase:"), this));
    sweepControls->addWidget(sweepMetric_);
    sweepControls->addWidget(sweepLogY_);
    sweepControls->addStretch();
    tabs_->addTab(withControls(this, sweepControls, sweepChart_), tr("S&weep"));
    connect(sweepX_, &QComboBox::currentIndexChanged, this,
            [this] { doc_.sweep()->setXDimension(static_cast<Dimension>(sweepX_->currentData().toInt())); });
    connect(sweepMetric_, &QComboBox::currentIndexChanged, this,
            [this] { doc_.sweep()->setMetric(static_cast<Metric>(sweepMetric_->currentData().toInt())); });
    connect(sweepLogY_, &QCheckBox::toggled, sweepChart_, &SweepChart::setLogY);

    // Speedup: a baseline column against the others.
    speedupTable_ = new DataTableView(this);
    speedupTable_->setObjectName(QStringLiteral("speedupTable"));
    speedupTable_->setTitle(tr("Speedup"), QStringLiteral("speedup"));
    speedupTable_->setModel(doc_.speedup());
    speedupTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    speedupTable_->horizontalHeader()->setStretchLastSection(false);
    speedupDim_ = new QComboBox(this);
    speedupBaseline_ = new QComboBox(this);
    speedupMetric_ = new QComboBox(this);
    for (Metric m : {Metric::Total, Metric::Forward, Metric::Backward, Metric::Optimizer})
        speedupMetric_->addItem(metricName(m), static_cast<int>(m));
    auto* speedControls = new QHBoxLayout;
    speedControls->addWidget(new QLabel(tr("Compare:"), this));
    speedControls->addWidget(speedupDim_);
    speedControls->addWidget(new QLabel(tr("Baseline:"), this));
    speedControls->addWidget(speedupBaseline_);
    speedControls->addWidget(new QLabel(tr("Phase:"), this));
    speedControls->addWidget(speedupMetric_);
    speedControls->addStretch();
    tabs_->addTab(withControls(this, speedControls, speedupTable_), tr("S&peedup"));
    connect(speedupDim_, &QComboBox::activated, this, [this] {
        doc_.speedup()->setDimension(static_cast<Dimension>(speedupDim_->currentData().toInt()));
    });
    connect(speedupBaseline_, &QComboBox::activated, this,
            [this] { doc_.speedup()->setBaseline(speedupBaseline_->currentText()); });
    connect(speedupMetric_, &QComboBox::currentIndexChanged, this,
            [this] { doc_.speedup()->setMetric(static_cast<Metric>(speedupMetric_->currentData().toInt())); });
    connect(doc_.speedup(), &SpeedupModel::shapeChanged, this, &MainWindow::refillSpeedupControls);

    // Results: one row per point.
    resultTable_ = new DataTableView(this);
    resultTable_->setObjectName(QStringLiteral("resultTable"));
    resultTable_->setTitle(tr("Results"), QStringLiteral("results"));
    resultTable_->setModel(doc_.results());
    resultTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    resultTable_->horizontalHeader()->setStretchLastSection(false);
    tabs_->addTab(withControls(this, nullptr, resultTable_), tr("&Results"));

    memoryChart_ = new MemoryChart(doc_.steps(), this);
    memoryChart_->setObjectName(QStringLiteral("memoryChart"));
    tabs_->addTab(withControls(this, nullptr, memoryChart_), tr("&Memory"));

    compareWidget_ = new CompareWidget(&compare_, this);
    tabs_->addTab(compareWidget_, tr("&Compare"));

    for (ExportableChart* chart : {static_cast<ExportableChart*>(stepChart_), static_cast<ExportableChart*>(sweepChart_)}) {
        auto* pane = dynamic_cast<ChartPane*>(chart);
        connect(pane, &ChartPane::exportRequested, this, [this, pane] { exportChartInteractive(pane, pane); });
        connect(pane, &ChartPane::copyRequested, this,
                [this, pane] { copyChartToClipboard(*pane, pane->size(), doc_.exportContext()); });
    }
    connect(memoryChart_, &MemoryChart::exportRequested, this,
            [this] { exportChartInteractive(memoryChart_, memoryChart_); });
    connect(memoryChart_, &MemoryChart::copyRequested, this,
            [this] { copyChartToClipboard(*memoryChart_, memoryChart_->size(), doc_.exportContext()); });
    for (DataTableView* t : {stepTable_, speedupTable_, resultTable_, compareWidget_->table()}) {
        connect(t, &DataTableView::exportRequested, this, [this, t] { exportTableInteractive(t); });
        connect(t, &DataTableView::copyRequested, this, [this, t] {
            ExportContext ctx = doc_.exportContext();
            copyTableToClipboard(*t->model(), ctx);
            statusBar()->showMessage(tr("%1 table copied").arg(t->tableTitle()), 3000);
        });
    }

    connect(&doc_, &RunDocument::infoChanged, this, &MainWindow::updateTitle);
    connect(doc_.results(), &QAbstractItemModel::rowsInserted, this, &MainWindow::refillPointCombo);
    connect(doc_.results(), &QAbstractItemModel::modelReset, this, &MainWindow::refillPointCombo);
    refillPointCombo();
    refillSpeedupControls();
}

void MainWindow::buildDocks() {
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    // Experiment: the chooser and one panel per registered experiment.
    auto* expWidget = new QWidget(this);
    auto* expLayout = new QVBoxLayout(expWidget);
    expLayout->setContentsMargins(4, 4, 4, 4);
    experimentCombo_ = new QComboBox(expWidget);
    experimentCombo_->setObjectName(QStringLiteral("experiment"));
    panels_ = new QStackedWidget(expWidget);
    for (const PanelEntry& e : experimentPanels()) {
        ExperimentPanel* p = e.create(nullptr);
        p->setObjectName(e.id + QStringLiteral("Panel"));
        auto* scroll = new QScrollArea(panels_);
        scroll->setWidget(p);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        // Wide enough for the panel's fields (they are never clipped; the dock scrolls
        // vertically only). Re-applied when the font changes (presentation mode).
        auto fitWidth = [scroll, p] {
            scroll->setMinimumWidth(p->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 6);
        };
        fitWidth();
        connect(&Theme::instance(), &Theme::changed, scroll, [fitWidth] { QTimer::singleShot(0, fitWidth); });
        panels_->addWidget(scroll);
        experimentCombo_->addItem(e.title, e.id);
        panelList_.append({e.id, p});
        // An experiment with results of its own gets its own tab; the window needs no edit.
        ExperimentView* v = p->createView(this);
        if (v) {
            v->setObjectName(e.id + QStringLiteral("View"));
            tabs_->addTab(v, v->title());
            if (ExportableChart* c = v->chart()) {
                if (auto* pane = dynamic_cast<ChartPane*>(c)) {
                    connect(pane, &ChartPane::exportRequested, this, [this, pane] { exportChartInteractive(pane, pane); });
                    connect(pane, &ChartPane::copyRequested, this,
                            [this, pane] { copyChartToClipboard(*pane, pane->size(), doc_.exportContext()); });
                }
            }
            if (DataTableView* t = v->table()) {
                connect(t, &DataTableView::exportRequested, this, [this, t] { exportTableInteractive(t); });
                connect(t, &DataTableView::copyRequested, this, [this, t] {
                    copyTableToClipboard(*t->model(), doc_.exportContext());
                    statusBar()->showMessage(tr("%1 table copied").arg(t->tableTitle()), 3000);
                });
            }
        }
        views_.append(v);
        connect(p, &ExperimentPanel::changed, this, &MainWindow::updateRunState);
        connect(p, &ExperimentPanel::runRequested, this, &MainWindow::startRun);
    }
    connect(experimentCombo_, &QComboBox::currentIndexChanged, panels_, &QStackedWidget::setCurrentIndex);
    connect(experimentCombo_, &QComboBox::currentIndexChanged, this, &MainWindow::updateRunState);
    auto* chooser = new QHBoxLayout;
    chooser->addWidget(new QLabel(tr("Experiment:"), expWidget));
    chooser->addWidget(experimentCombo_, 1);
    expLayout->addLayout(chooser);
    expLayout->addWidget(panels_, 1);
    auto* buttons = new QHBoxLayout;
    expLayout->addLayout(buttons);
    experimentDock_ = new QDockWidget(tr("Experiment"), this);
    experimentDock_->setObjectName(QStringLiteral("experimentDock"));
    experimentDock_->setWidget(expWidget);
    addDockWidget(Qt::LeftDockWidgetArea, experimentDock_);

    history_ = new HistoryWidget(&runs_, this);
    {
        QStringList openable{QStringLiteral("bench")};
        for (int i = 0; i < panelList_.size(); ++i)
            if (views_.value(i)) openable << panelList_[i].first;
        history_->setOpenableKinds(openable);
    }
    historyDock_ = new QDockWidget(tr("History"), this);
    historyDock_->setObjectName(QStringLiteral("historyDock"));
    historyDock_->setWidget(history_);
    addDockWidget(Qt::BottomDockWidgetArea, historyDock_);
    connect(history_, &HistoryWidget::openRequested, this, &MainWindow::openStoredRun);
    connect(history_, &HistoryWidget::replayRequested, this, [this](qint64 id) { replayStoredRun(id, 1.0); });
    connect(history_, &HistoryWidget::compareRequested, this, &MainWindow::compareStoredRuns);
    connect(history_, &HistoryWidget::refreshRequested, this, &MainWindow::refreshHistory);
    connect(history_, &HistoryWidget::deleteRequested, this, [this](qint64 id) {
        auto* w = new QFutureWatcher<QString>(this);
        connect(w, &QFutureWatcherBase::finished, this, [this, w, id] {
            const QString err = w->result();
            w->deleteLater();
            appendLog(err.isEmpty() ? tr("Run %1 deleted").arg(id) : tr("Could not delete run %1: %2").arg(id).arg(err));
            refreshHistory();
        });
        w->setFuture(removeRunAsync(controller_.storePath(), id));
    });

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
    logThrottle_ = new RedrawThrottle([this] {
        if (pendingLog_.isEmpty()) return;
        log_->appendPlainText(pendingLog_.join(QLatin1Char('\n')));
        pendingLog_.clear();
    }, this, 100);
    resizeDocks({experimentDock_}, {400}, Qt::Horizontal);
    resizeDocks({historyDock_}, {230}, Qt::Vertical);
}

void MainWindow::buildActions() {
    const QStyle* st = style();
    runAct_ = new QAction(st->standardIcon(QStyle::SP_MediaPlay), tr("&Run"), this);
    runAct_->setObjectName(QStringLiteral("runAction"));
    runAct_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_R), QKeySequence(Qt::Key_F5)});
    connect(runAct_, &QAction::triggered, this, &MainWindow::startRun);
    stopAct_ = new QAction(st->standardIcon(QStyle::SP_MediaStop), tr("&Stop"), this);
    stopAct_->setObjectName(QStringLiteral("stopAction"));
    stopAct_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Period), QKeySequence(Qt::SHIFT | Qt::Key_F5)});
    stopAct_->setToolTip(tr("End the run within a step; what was measured is kept"));
    connect(stopAct_, &QAction::triggered, this, &MainWindow::stopRun);

    auto* exportView = new QAction(tr("&Export Current View…"), this);
    exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(exportView, &QAction::triggered, this, [this] {
        const int tab = tabs_->currentIndex();
        if (ExportableChart* c = chartOf(tab)) exportChartInteractive(c, tabs_->currentWidget());
        else if (DataTableView* t = tableOf(tab)) exportTableInteractive(t);
    });
    auto* copyView = new QAction(tr("&Copy Current View"), this);
    copyView->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    connect(copyView, &QAction::triggered, this, &MainWindow::copyCurrentView);
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
        a->setToolTip(p.description);
        a->setStatusTip(p.description);
        connect(a, &QAction::triggered, this, [this, p] { loadPreset(p); });
    }
    presetsMenu_->setToolTipsVisible(true);
    presetsMenu_->addSeparator();
    presetsMenu_->addAction(tr("Open Preset File…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Preset"), QString(), tr("Presets (*.json)"));
        if (path.isEmpty()) return;
        QString err;
        if (auto p = readPreset(path, &err)) loadPreset(*p);
        else QMessageBox::warning(this, tr("Open Preset"), err);
    });

    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addMenu(presetsMenu_);
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
        if (ids.size() == 2) compareStoredRuns(std::min(ids[0], ids[1]), std::max(ids[0], ids[1]));
        else statusBar()->showMessage(tr("Select exactly two runs in the History pane"), 4000);
    });
    run->addAction(tr("Refresh &History"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), this,
                   &MainWindow::refreshHistory);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < tabs_->count(); ++i) {
        QString text = tabs_->tabText(i);
        text.remove(QLatin1Char('&'));
        view->addAction(text, QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)), this,
                        [this, i] { tabs_->setCurrentIndex(i); });
    }
    view->addSeparator();
    view->addAction(experimentDock_->toggleViewAction());
    view->addAction(historyDock_->toggleViewAction());
    view->addAction(logDock_->toggleViewAction());
    view->addSeparator();
    presentationAct_ = view->addAction(tr("&Presentation Mode"));
    presentationAct_->setCheckable(true);
    presentationAct_->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), QKeySequence(Qt::Key_F11)});
    presentationAct_->setToolTip(tr("Large fonts and high-contrast charts for a projector"));
    connect(presentationAct_, &QAction::toggled, this, [](bool on) { Theme::instance().setPresentation(on); });
    QMenu* theme = view->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(this);
    systemThemeAct_ = theme->addAction(tr("&System"));
    lightAct_ = theme->addAction(tr("&Light"));
    darkAct_ = theme->addAction(tr("&Dark"));
    for (auto [act, mode] : {std::pair{systemThemeAct_, ThemeMode::System}, std::pair{lightAct_, ThemeMode::Light},
                             std::pair{darkAct_, ThemeMode::Dark}}) {
        act->setCheckable(true);
        group->addAction(act);
        connect(act, &QAction::triggered, this, [mode] { Theme::instance().setMode(mode); });
    }
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        const ThemeMode m = Theme::instance().mode();
        systemThemeAct_->setChecked(m == ThemeMode::System);
        lightAct_->setChecked(m == ThemeMode::Light);
        darkAct_->setChecked(m == ThemeMode::Dark);
        const QSignalBlocker block(presentationAct_);
        presentationAct_->setChecked(Theme::instance().presentation());
    });
    systemThemeAct_->setChecked(true);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("What This &Machine Can Run…"), this, [this] {
        QString text;
        if (!capsReady_) {
            text = tr("Still checking.");
        } else {
            text = tr("LibTorch %1 (%2)\n").arg(qstr(caps_.torch_version),
                                                caps_.torch_cuda_build ? tr("CUDA build") : tr("CPU build"));
            text += caps_.cuda_available ? tr("CUDA available\n") : tr("No CUDA device\n");
            text += caps_.flash_kernels ? tr("TrainScope flash kernels built\n") : tr("No TrainScope flash kernels in this build\n");
            for (const auto& d : caps_.devices)
                text += QStringLiteral("\n• %1 %2%3%4").arg(qstr(d.id), qstr(d.name), d.bf16 ? tr(", bf16") : QString(),
                                                          d.fp16 ? tr(", fp16") : QString());
        }
        text += tr("\n\nResults store: %1").arg(controller_.storePath());
        QMessageBox::information(this, tr("This Machine"), text);
    });
    help->addAction(tr("&About TrainScope"), this, [this] {
        QMessageBox::about(this, tr("About TrainScope"),
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
    statusBar()->addPermanentWidget(eta_);
    statusBar()->addPermanentWidget(progress_);
    progress_->setValue(0);
}

// ---------------------------------------------------------------- runs

void MainWindow::connectRun() {
    connect(&controller_, &RunController::runStarted, this,
            [this](quint64, qint64 storeRun, const Environment& env) {
                doc_.setStoreRunId(storeRun);
                doc_.setEnvironment(env);
                appendLog(storeRun > 0 ? tr("Stored as run %1 in %2").arg(storeRun).arg(controller_.storePath())
                                       : tr("This run is not stored"));
                if (!env.device_name.empty()) appendLog(environmentLines(env).join(QStringLiteral(" · ")));
            });
    connect(&controller_, &RunController::pointStarted, this,
            [this](quint64, int index, int count, const BenchConfig& c) {
                doc_.startPoint(index, c);
                statusLabel_->setText(tr("Running point %1 of %2: %3").arg(index + 1).arg(count).arg(describeConfig(c)));
                appendLog(tr("Point %1/%2: %3").arg(index + 1).arg(count).arg(describeConfig(c)));
            });
    connect(&controller_, &RunController::stepsArrived, this,
            [this](quint64, int point, const QList<StepSample>& steps) { doc_.addSteps(point, steps); });
    connect(&controller_, &RunController::pointFinished, this, [this](quint64, int index, const BenchResult& r) {
        doc_.finishPoint(index, r);
        if (r.status == Status::Ok)
            appendLog(tr("Point %1: total %2 ± %3 ms per step (forward %4, backward %5, optimizer %6)")
                          .arg(index + 1)
                          .arg(formatMs(r.total.mean), formatMs(r.total.std), formatMs(r.forward.mean),
                               formatMs(r.backward.mean), formatMs(r.optimizer.mean)));
        else
            appendLog(tr("Point %1: %2 %3").arg(index + 1).arg(qstr(toString(r.status)), qstr(r.error)));
    });
    connect(&controller_, &RunController::itemArrived, this, [this](quint64, const QVariant& item) {
        if (runningView_) runningView_->addItem(item);
    });
    connect(&controller_, &RunController::progress, this,
            [this](quint64, double f, double eta) { setProgress(f, eta); });
    connect(&controller_, &RunController::logMessage, this, [this](quint64, int level, const QString& text) {
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
                if (outcome == RunOutcome::Completed) setProgress(1.0, 0);
                eta_->clear();
                updateRunState();
                refreshHistory();
                Q_EMIT runFinished(outcome);
            });

    connect(&replayer_, &Replayer::pointStarted, this, [this](int index, int count, const BenchConfig& c) {
        doc_.startPoint(index, c);
        statusLabel_->setText(tr("Replaying point %1 of %2: %3").arg(index + 1).arg(count).arg(describeConfig(c)));
    });
    connect(&replayer_, &Replayer::stepsArrived, this,
            [this](int point, const QList<StepSample>& steps) { doc_.addSteps(point, steps); });
    connect(&replayer_, &Replayer::pointFinished, this,
            [this](int index, const BenchResult& r) { doc_.finishPoint(index, r); });
    connect(&replayer_, &Replayer::progress, this, &MainWindow::setProgress);
    connect(&replayer_, &Replayer::finished, this, [this](bool stopped) {
        appendLog(stopped ? tr("Replay stopped") : tr("Replay finished"));
        statusLabel_->setText(stopped ? tr("Replay stopped") : tr("Replay finished"));
        eta_->clear();
        updateRunState();
        Q_EMIT replayFinished();
    });
}

bool MainWindow::startRun() {
    if (isRunning()) return false;
    ExperimentPanel* p = currentPanel();
    if (!p) return false;
    if (!capsReady_) {
        statusBar()->showMessage(tr("Still checking what this machine can run"), 3000);
        return false;
    }
    std::optional<ExperimentJob> job = p->makeJob();
    if (!job) {
        const QStringList problems = p->problems();
        appendLog(tr("Cannot run: %1").arg(problems.isEmpty() ? tr("nothing to run") : problems.join(QStringLiteral("; "))));
        statusLabel_->setText(tr("Fix the flagged fields first"));
        return false;
    }
    saveSettings();  // the last configuration survives a crash of the run
    doc_.begin(RunDocument::Source::Live, job->label, job->point_count);
    pointCombo_->setCurrentIndex(0);
    runningView_ = views_.value(experimentCombo_->currentIndex(), nullptr);
    if (runningView_) {
        runningView_->clear();
        tabs_->setCurrentWidget(runningView_);
    }
    appendLog(tr("— Run: %1").arg(p->summary()));
    setProgress(0, -1);
    runClock_.start();
    controller_.start(std::move(*job));
    updateRunState();
    return true;
}

void MainWindow::stopRun() {
    if (replayer_.isActive()) {
        replayer_.stop();
        return;
    }
    if (!controller_.isRunning()) return;
    controller_.stop();
    appendLog(tr("Stopping after the current step…"));
    statusLabel_->setText(tr("Stopping after the current step…"));
    stopAct_->setEnabled(false);
}

bool MainWindow::isRunning() const { return controller_.isRunning() || replayer_.isActive(); }

void MainWindow::probeCapabilities() {
    auto* watcher = new QFutureWatcher<std::pair<Capabilities, QString>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        const auto [caps, error] = watcher->result();
        watcher->deleteLater();
        caps_ = caps;
        capsReady_ = true;
        if (!error.isEmpty()) appendLog(tr("warning: could not query LibTorch: %1").arg(error));
        for (const auto& [id, panel] : panelList_) panel->setCapabilities(caps_);
        QStringList devs;
        for (const auto& d : caps_.devices) devs << qstr(d.id) + (d.name.empty() ? QString() : QStringLiteral(" (%1)").arg(qstr(d.name)));
        appendLog(tr("LibTorch %1; devices: %2").arg(qstr(caps_.torch_version), devs.join(QStringLiteral(", "))));
        statusLabel_->setText(caps_.cuda_available ? tr("Ready") : tr("Ready — CPU only: GPU options are disabled (hover them for why)"));
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
    auto* w = new QFutureWatcher<RunList>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w] {
        RunList list = w->result();
        w->deleteLater();
        const QList<qint64> selected = history_->selectedRuns();
        if (!list.error.isEmpty()) {
            history_->setMessage(tr("Store not readable: %1").arg(list.error));
        } else {
            history_->setMessage(list.runs.empty() ? tr("No stored runs yet. Press Run.") : QString());
            runs_.setRuns(std::move(list.runs));
            history_->selectRuns(selected);
        }
        Q_EMIT historyRefreshed();
    });
    w->setFuture(listRunsAsync(controller_.storePath()));
}

void MainWindow::openStoredRun(qint64 id) {
    if (isRunning()) {
        statusBar()->showMessage(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    auto* w = new QFutureWatcher<StoredRun>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, id] {
        const StoredRun run = w->result();
        w->deleteLater();
        if (!run.error.isEmpty()) {
            appendLog(tr("Could not open run %1: %2").arg(id).arg(run.error));
            return;
        }
        if (isRunning()) return;  // a run started meanwhile owns the views
        // A run of an experiment with its own view (the panel's id is the store's kind) goes
        // there; the benchmark views are left empty, so exports and the report use the view.
        if (ExperimentView* v = run.info.lab == "bench" ? nullptr : view(qstr(run.info.lab))) {
            doc_.begin(RunDocument::Source::Stored, qstr(run.info.label), 0);
            doc_.setStoreRunId(run.info.id);
            Environment env;
            env.device_name = run.info.device_name;
            doc_.setEnvironment(env);
            runningView_ = v;
            v->clear();
            std::vector<AttentionCell> cells;
            try {
                cells = attentionCellsFromRows(run.info, run.rows);
            } catch (const std::exception& e) {
                appendLog(tr("Could not open run %1: %2").arg(id).arg(qstr(std::string(e.what()))));
                return;
            }
            for (const AttentionCell& c : cells) v->addItem(QVariant::fromValue(c));
            tabs_->setCurrentWidget(v);
            setProgress(1.0, 0);
            statusLabel_->setText(tr("Showing stored run %1").arg(id));
            appendLog(tr("Opened %1 run %2 (%3 cells)").arg(qstr(run.info.lab)).arg(id).arg(cells.size()));
            Q_EMIT storedRunOpened(id);
            return;
        }
        const StoredBenchRun bench = benchRunFrom(run);
        if (!bench.error.isEmpty()) {
            appendLog(tr("Could not open run %1: %2").arg(id).arg(bench.error));
            return;
        }
        runningView_ = nullptr;
        doc_.load(bench);
        setProgress(1.0, 0);
        statusLabel_->setText(tr("Showing stored run %1").arg(id));
        appendLog(tr("Opened run %1 (%2 points)").arg(id).arg(bench.points.size()));
        Q_EMIT storedRunOpened(id);
    });
    w->setFuture(loadRunAsync(controller_.storePath(), id));
}

void MainWindow::replayStoredRun(qint64 id, double speed) {
    if (isRunning()) {
        statusBar()->showMessage(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    if (const RunInfo* r = runs_.runById(id); r && r->lab != kBenchLab) {
        statusBar()->showMessage(HistoryWidget::benchOnlyReason(), 4000);
        return;
    }
    auto* w = new QFutureWatcher<StoredRun>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, id, speed] {
        StoredBenchRun run = benchRunFrom(w->result());
        w->deleteLater();
        if (!run.error.isEmpty()) {
            appendLog(tr("Could not replay run %1: %2").arg(id).arg(run.error));
            return;
        }
        if (isRunning()) return;
        if (run.info.lab != "bench") {  // the history list was stale
            statusBar()->showMessage(HistoryWidget::benchOnlyReason(), 4000);
            return;
        }
        runningView_ = nullptr;
        doc_.begin(RunDocument::Source::Replay, qstr(run.info.label), static_cast<int>(run.points.size()));
        doc_.setStoreRunId(run.info.id);
        if (!run.points.empty()) doc_.setEnvironment(run.points.front().environment);
        pointCombo_->setCurrentIndex(0);
        appendLog(tr("Replaying run %1 at %2× its recorded pace").arg(id).arg(speed));
        showTab(StepsTab);
        replayer_.start(std::move(run), speed);
        updateRunState();
    });
    w->setFuture(loadRunAsync(controller_.storePath(), id));
}

void MainWindow::compareStoredRuns(qint64 a, qint64 b) {
    for (qint64 id : {a, b})
        if (const RunInfo* r = runs_.runById(id); r && r->lab != kBenchLab) {
            statusBar()->showMessage(HistoryWidget::benchOnlyReason(), 4000);
            return;
        }
    const QString path = controller_.storePath();
    auto* w = new QFutureWatcher<std::pair<StoredRun, StoredRun>>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, a, b] {
        auto [sa, sb] = w->result();
        w->deleteLater();
        StoredBenchRun ra = benchRunFrom(sa), rb = benchRunFrom(sb);
        for (const StoredBenchRun* r : {&ra, &rb})
            if (!r->error.isEmpty()) {
                appendLog(tr("Could not compare: %1").arg(r->error));
                return;
            }
        if (ra.info.lab != "bench" || rb.info.lab != "bench") {  // the history list was stale
            statusBar()->showMessage(HistoryWidget::benchOnlyReason(), 4000);
            return;
        }
        compare_.setRuns({ra.info, std::move(ra.points)}, {rb.info, std::move(rb.points)});
        showTab(CompareTab);
        appendLog(tr("Comparing run %1 (A) with run %2 (B)").arg(a).arg(b));
        Q_EMIT comparisonReady();
    });
    w->setFuture(QtConcurrent::run([path, a, b] { return std::pair{loadRun(path, a), loadRun(path, b)}; }));
}

// ---------------------------------------------------------------- presets

void MainWindow::loadPreset(const ClassroomPreset& preset) {
    if (isRunning()) {
        statusBar()->showMessage(tr("Wait for the run to finish, or stop it"), 4000);
        return;
    }
    if (!capsReady_) {
        pendingPreset_ = preset;  // CPU or GPU variant: decided once the probe is back
        return;
    }
    int index = -1;
    for (int i = 0; i < panelList_.size(); ++i)
        if (panelList_[i].first == preset.experiment) index = i;
    if (index < 0) {
        appendLog(tr("Preset '%1' needs the experiment '%2', which this build lacks").arg(preset.title, preset.experiment));
        return;
    }
    experimentCombo_->setCurrentIndex(index);
    QJsonObject config = preset.config;
    const bool cpuVariant = !caps_.cuda_available && !preset.cpuConfig.isEmpty();
    if (cpuVariant)
        for (auto it = preset.cpuConfig.begin(); it != preset.cpuConfig.end(); ++it) config[it.key()] = it.value();
    if (!config.contains(QLatin1String("label"))) config[QStringLiteral("label")] = preset.title;
    QStringList notes;
    panelList_[index].second->setState(config, &notes);
    appendLog(tr("— Preset: %1").arg(preset.title));
    if (!preset.description.isEmpty()) appendLog(preset.description);
    if (cpuVariant) appendLog(tr("No CUDA device: loaded the preset's smaller CPU variant"));
    for (const QString& n : notes) appendLog(tr("note: %1").arg(n));
    applyPresetView(preset.view);
    statusLabel_->setText(tr("Preset loaded: %1. Press Run.").arg(preset.title));
}

void MainWindow::applyPresetView(const QJsonObject& view) {
    if (auto d = dimensionFromKey(view.value(QLatin1String("dimension")).toString())) {
        doc_.speedup()->setDimension(*d);
        const QString baseline = view.value(QLatin1String("baseline")).toString();
        if (!baseline.isEmpty()) doc_.speedup()->setBaseline(baseline);
    }
    if (auto x = dimensionFromKey(view.value(QLatin1String("x")).toString())) {
        const int i = sweepX_->findData(static_cast<int>(*x));
        if (i >= 0) sweepX_->setCurrentIndex(i);
    }
    if (view.value(QLatin1String("log_time")).isBool()) sweepLogY_->setChecked(view.value(QLatin1String("log_time")).toBool());
    const QString tab = view.value(QLatin1String("tab")).toString();
    if (!tab.isEmpty()) showTab(tab);
}

// ---------------------------------------------------------------- state

void MainWindow::updateRunState() {
    const bool running = isRunning();
    ExperimentPanel* p = currentPanel();
    const bool valid = p && p->isValid();
    runAct_->setEnabled(!running && capsReady_ && valid);
    runAct_->setToolTip(!capsReady_ ? tr("Checking what this machine can run…")
                        : running   ? tr("A run is in progress")
                        : valid     ? tr("Run: %1").arg(p->summary())
                                    : tr("Fix first:\n%1").arg(p ? p->problems().join(QLatin1Char('\n')) : QString()));
    stopAct_->setEnabled(running);
    experimentCombo_->setEnabled(!running);
    panels_->setEnabled(!running);
    presetsMenu_->setEnabled(!running);
    history_->setBusy(running);
}

void MainWindow::updateTitle() {
    setWindowTitle(tr("TrainScope — %1").arg(doc_.title()));
}

void MainWindow::refillPointCombo() {
    const int wanted = pointCombo_->currentData().toInt();
    const QSignalBlocker block(pointCombo_);
    pointCombo_->clear();
    pointCombo_->addItem(tr("follow the running point"), -1);
    const auto& entries = doc_.results()->entries();
    for (size_t i = 0; i < entries.size(); ++i)
        pointCombo_->addItem(QStringLiteral("%1: %2").arg(i + 1).arg(describeConfig(entries[i].result.config)),
                             static_cast<int>(i));
    const int idx = pointCombo_->findData(wanted);
    pointCombo_->setCurrentIndex(idx < 0 ? 0 : idx);
    stepChart_->setPoint(pointCombo_->currentData().toInt());
}

void MainWindow::refillSpeedupControls() {
    SpeedupModel* m = doc_.speedup();
    {
        const QSignalBlocker b1(speedupDim_);
        speedupDim_->clear();
        auto candidates = m->candidates();
        if (candidates.empty()) candidates.push_back(m->dimension());
        for (Dimension d : candidates) speedupDim_->addItem(dimensionName(d), static_cast<int>(d));
        speedupDim_->setCurrentIndex(std::max(0, speedupDim_->findData(static_cast<int>(m->dimension()))));
    }
    {
        const QSignalBlocker b2(speedupBaseline_);
        speedupBaseline_->clear();
        speedupBaseline_->addItems(m->values());
        speedupBaseline_->setCurrentIndex(std::max(0, static_cast<int>(m->values().indexOf(m->baseline()))));
    }
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

ExperimentPanel* MainWindow::currentPanel() const {
    const int i = experimentCombo_ ? experimentCombo_->currentIndex() : -1;
    return i >= 0 && i < panelList_.size() ? panelList_[i].second : nullptr;
}

ExperimentPanel* MainWindow::panel(const QString& id) const {
    for (const auto& [pid, p] : panelList_)
        if (pid == id) return p;
    return nullptr;
}

void MainWindow::showTab(Tab tab) { tabs_->setCurrentIndex(static_cast<int>(tab)); }

bool MainWindow::showTab(const QString& name) {
    for (int i = 0; i < 6; ++i)
        if (name == QLatin1String(kTabNames[i])) {
            showTab(static_cast<Tab>(i));
            return true;
        }
    if (const int t = viewTab(name); t >= 0) {
        tabs_->setCurrentIndex(t);
        return true;
    }
    return false;
}

bool MainWindow::selectExperiment(const QString& id) {
    const int i = experimentCombo_->findData(id);
    if (i < 0 || isRunning()) return false;
    experimentCombo_->setCurrentIndex(i);
    return true;
}

ExperimentView* MainWindow::view(const QString& experimentId) const {
    for (int i = 0; i < panelList_.size(); ++i)
        if (panelList_[i].first == experimentId) return views_.value(i, nullptr);
    return nullptr;
}

int MainWindow::viewTab(const QString& experimentId) const {
    ExperimentView* v = view(experimentId);
    return v ? tabs_->indexOf(v) : -1;
}

void MainWindow::restoreSettings() {
    QSettings s;
    Theme::instance().setMode(themeModeFromKey(s.value(QStringLiteral("theme"), QStringLiteral("system")).toString()));
    Theme::instance().setPresentation(s.value(QStringLiteral("presentation"), false).toBool());
    if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray())) resize(1500, 950);
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    for (const auto& [id, p] : panelList_) {
        const QByteArray json = s.value(QStringLiteral("panels/") + id).toByteArray();
        if (!json.isEmpty()) p->setState(QJsonDocument::fromJson(json).object());
    }
    const int exp = experimentCombo_->findData(s.value(QStringLiteral("experiment")).toString());
    if (exp >= 0) experimentCombo_->setCurrentIndex(exp);
    tabs_->setCurrentIndex(std::clamp(s.value(QStringLiteral("tab"), 0).toInt(), 0, tabs_->count() - 1));
}

void MainWindow::saveSettings() const {
    if (!options_.restoreSettings) return;
    QSettings s;
    s.setValue(QStringLiteral("theme"), themeModeKey(Theme::instance().mode()));
    s.setValue(QStringLiteral("presentation"), Theme::instance().presentation());
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    for (const auto& [id, p] : panelList_)
        s.setValue(QStringLiteral("panels/") + id, QJsonDocument(p->state()).toJson(QJsonDocument::Compact));
    s.setValue(QStringLiteral("experiment"), experimentCombo_->currentData().toString());
    s.setValue(QStringLiteral("tab"), tabs_->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    if (controller_.isRunning()) {
        const auto answer = QMessageBox::question(this, tr("Quit"),
                                                  tr("A run is in progress. Stop it and quit? Finished points are kept."));
        if (answer != QMessageBox::Yes) {
            e->ignore();
            return;
        }
    }
    saveSettings();
    replayer_.stop();
    controller_.abandon();
    e->accept();
}

// ---------------------------------------------------------------- exports

ExportableChart* MainWindow::chartOf(int tab) const {
    switch (tab) {
        case StepsTab: return stepChart_;
        case SweepTab: return sweepChart_;
        case MemoryTab: return memoryChart_;
        default: break;
    }
    auto* v = qobject_cast<ExperimentView*>(tabs_->widget(tab));
    return v ? v->chart() : nullptr;
}

DataTableView* MainWindow::tableOf(int tab) const {
    switch (tab) {
        case StepsTab: return stepTable_;
        case SpeedupTab: return speedupTable_;
        case ResultsTab: return resultTable_;
        case CompareTab: return compareWidget_->table();
        default: break;
    }
    auto* v = qobject_cast<ExperimentView*>(tabs_->widget(tab));
    return v ? v->table() : nullptr;
}

int MainWindow::tabOf(const ExportableChart* chart) const {
    for (int i = 0; i < tabs_->count(); ++i)
        if (chartOf(i) == chart) return i;
    return -1;
}

static ExportContext compareContext(const CompareModel& m) {
    ExportContext ctx;
    if (!m.hasRuns()) return ctx;
    ctx.runLabel = QObject::tr("comparison of run %1 (A) and run %2 (B)").arg(m.sideA().info.id).arg(m.sideB().info.id);
    if (!m.sideA().points.empty()) ctx.environment = m.sideA().points.front().environment;
    for (const auto& p : m.sideA().points) ctx.configs.push_back(p.config);
    if (!m.sideB().points.empty())
        ctx.notes << QObject::tr("Run B environment: %1")
                         .arg(environmentLines(m.sideB().points.front().environment).join(QStringLiteral("; ")));
    return ctx;
}

bool MainWindow::exportTab(int tab, const QString& path, QSize size, QString* error) {
    const ExportContext ctx = tab == CompareTab ? compareContext(compare_) : doc_.exportContext();
    if (tableFormatFor(path)) {
        DataTableView* t = tableOf(tab);
        if (!t) {
            if (error) *error = tr("this view has no table");
            return false;
        }
        return exportTable(*t->model(), path, ctx, error);
    }
    ExportableChart* c = chartOf(tab);
    if (!c) {
        if (error) *error = tr("this view has no chart");
        return false;
    }
    if (!size.isValid()) size = dynamic_cast<QWidget*>(c)->size();
    return exportChart(*c, path, size, ctx, error);
}

bool MainWindow::exportReport(const QString& path, QSize chartSize, QString* error) {
    QList<ReportPart> parts;
    // An experiment with its own view: its chart and table are the report.
    if (runningView_ && doc_.results()->rowCount() == 0) {
        if (runningView_->chart()) parts << ReportPart{runningView_->title(), runningView_->chart(), nullptr};
        if (runningView_->table()) parts << ReportPart{runningView_->title() + tr(" (table)"), nullptr, runningView_->table()->model()};
        return ts::ui::exportReport(path, parts, doc_.exportContext(), chartSize, error);
    }
    parts << ReportPart{tr("Step timings"), stepChart_, nullptr};
    if (!doc_.sweep()->rows().empty() && doc_.results()->rowCount() > 1)
        parts << ReportPart{tr("Sweep"), sweepChart_, nullptr};
    if (!doc_.speedup()->candidates().empty())
        parts << ReportPart{tr("Speedup (%1, baseline %2)").arg(dimensionName(doc_.speedup()->dimension()), doc_.speedup()->baseline()),
                            nullptr, doc_.speedup()};
    parts << ReportPart{tr("Results"), nullptr, doc_.results()};
    parts << ReportPart{tr("Memory per step"), memoryChart_, nullptr};
    return ts::ui::exportReport(path, parts, doc_.exportContext(), chartSize, error);
}

QString MainWindow::suggestedPath(const QString& stem, const QString& ext) const {
    QSettings s;
    QString dir = s.value(QStringLiteral("export/dir")).toString();
    if (dir.isEmpty() || !QFileInfo(dir).isDir())
        dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString run = doc_.storeRunId() > 0 ? QStringLiteral("run%1").arg(doc_.storeRunId()) : QStringLiteral("run");
    return QDir(dir).filePath(QStringLiteral("trainscope-%1-%2.%3").arg(run, stem, ext));
}

void MainWindow::exportChartInteractive(ExportableChart* chart, QWidget* source) {
    ExportDialog dlg(ExportDialog::Kind::Chart, suggestedPath(chart->chartFileStem(), QStringLiteral("png")),
                     source->size(), this);
    if (dlg.exec() != QDialog::Accepted) return;
    QString error;
    if (!exportTab(tabOf(chart), dlg.path(), dlg.size(), &error)) {
        QMessageBox::warning(this, tr("Export"), error);
        return;
    }
    QSettings().setValue(QStringLiteral("export/dir"), QFileInfo(dlg.path()).absolutePath());
    appendLog(tr("Exported %1 to %2").arg(chart->chartTitle(), dlg.path()));
    statusBar()->showMessage(tr("Saved %1").arg(dlg.path()), 5000);
}

void MainWindow::exportTableInteractive(DataTableView* table) {
    ExportDialog dlg(ExportDialog::Kind::Table, suggestedPath(table->fileStem(), QStringLiteral("csv")), {}, this);
    if (dlg.exec() != QDialog::Accepted) return;
    const ExportContext ctx = table == compareWidget_->table() ? compareContext(compare_) : doc_.exportContext();
    QString error;
    if (!exportTable(*table->model(), dlg.path(), ctx, &error)) {
        QMessageBox::warning(this, tr("Export"), error);
        return;
    }
    QSettings().setValue(QStringLiteral("export/dir"), QFileInfo(dlg.path()).absolutePath());
    appendLog(tr("Exported %1 table to %2").arg(table->tableTitle(), dlg.path()));
    statusBar()->showMessage(tr("Saved %1").arg(dlg.path()), 5000);
}

void MainWindow::exportReportInteractive() {
    ExportDialog dlg(ExportDialog::Kind::Report, suggestedPath(QStringLiteral("report"), QStringLiteral("md")),
                     QSize(1200, 700), this);
    if (dlg.exec() != QDialog::Accepted) return;
    QString error;
    if (!exportReport(dlg.path(), dlg.size(), &error)) {
        QMessageBox::warning(this, tr("Export Report"), error);
        return;
    }
    appendLog(tr("Report written to %1").arg(dlg.path()));
    statusBar()->showMessage(tr("Saved %1").arg(dlg.path()), 5000);
}

void MainWindow::copyCurrentView() {
    const int tab = tabs_->currentIndex();
    if (ExportableChart* c = chartOf(tab)) {
        copyChartToClipboard(*c, dynamic_cast<QWidget*>(c)->size(), doc_.exportContext());
        statusBar()->showMessage(tr("%1 copied as an image").arg(c->chartTitle()), 3000);
    } else if (DataTableView* t = tableOf(tab)) {
        copyTableToClipboard(*t->model(), tab == CompareTab ? compareContext(compare_) : doc_.exportContext());
        statusBar()->showMessage(tr("%1 table copied").arg(t->tableTitle()), 3000);
    }
}

}  // namespace ts::ui
