#include "ui/shell/windowactions.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>

#include "ui/common/format.h"
#include "ui/common/labview.h"
#include "ui/common/theme.h"
#include "ui/shell/exportcontroller.h"
#include "ui/shell/historycontroller.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/presentation.h"
#include "ui/shell/presets.h"
#include "ui/shell/runsession.h"

namespace ts::ui {

WindowActions::WindowActions(QMainWindow* window, const Parts& parts)
    : QObject(window), window_(window), parts_(parts) {
    RunSession* session = parts_.session;
    run_ = new QAction(tr("&Run"), this);
    run_->setObjectName(QStringLiteral("runAction"));
    run_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_R), QKeySequence(Qt::Key_F5)});
    connect(run_, &QAction::triggered, session, &RunSession::start);
    stop_ = new QAction(tr("&Stop"), this);
    stop_->setObjectName(QStringLiteral("stopAction"));
    stop_->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Period), QKeySequence(Qt::SHIFT | Qt::Key_F5)});
    stop_->setToolTip(tr("End the run within a step; what was measured is kept"));
    connect(stop_, &QAction::triggered, session, &RunSession::stop);

    buildPresetsMenu();
    buildFileMenu();
    buildRunMenu();
    buildViewMenu();
    buildHelpMenu();
    buildToolBar();
    restyle();
    systemTheme_->setChecked(true);
    connect(&Theme::instance(), &Theme::changed, this, &WindowActions::restyle);
    connect(session, &RunSession::stateChanged, this, &WindowActions::updateRunState);
    connect(session, &RunSession::capabilitiesKnown, this, &WindowActions::takeCapabilities);
    updateRunState();
}

void WindowActions::buildPresetsMenu() {
    presets_ = new QMenu(tr("Classroom &Presets"), window_);
    for (const ClassroomPreset& p : loadPresets()) {
        QAction* a = presets_->addAction(p.title);
        a->setData(p.id);
        a->setToolTip(p.description);
        a->setStatusTip(p.description);
        connect(a, &QAction::triggered, this, [this, p] { parts_.session->loadPreset(p); });
    }
    presets_->setToolTipsVisible(true);
    presets_->addSeparator();
    presets_->addAction(tr("Open Preset File…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(window_, tr("Open Preset"), QString(),
                                                          tr("Presets (*.json)"));
        if (path.isEmpty()) return;
        QString err;
        if (auto p = readPreset(path, &err))
            parts_.session->loadPreset(*p);
        else
            QMessageBox::warning(window_, tr("Open Preset"), err);
    });
}

void WindowActions::buildFileMenu() {
    ExportController* exports = parts_.exports;
    exportView_ = new QAction(tr("&Export Current View…"), this);
    exportView_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(exportView_, &QAction::triggered, exports, &ExportController::exportShownPane);
    copyView_ = new QAction(tr("&Copy Current View"), this);
    copyView_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    connect(copyView_, &QAction::triggered, exports, &ExportController::copyShownPane);
    report_ = new QAction(tr("Export Run &Report…"), this);
    report_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    connect(report_, &QAction::triggered, exports, &ExportController::exportReportInteractive);
    quit_ = new QAction(tr("&Quit"), this);
    quit_->setShortcut(QKeySequence::Quit);
    quit_->setMenuRole(QAction::QuitRole);
    connect(quit_, &QAction::triggered, window_, &QWidget::close);

    QMenu* file = window_->menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Open Results &Store…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O),
                    parts_.history, &HistoryController::openStoreInteractive);
    file->addMenu(presets_);
    file->addAction(tr("&Import Trace…"), parts_.history,
                    [this] { parts_.history->importTrace(); });
    file->addSeparator();
    file->addAction(exportView_);
    file->addAction(copyView_);
    file->addAction(report_);
    file->addSeparator();
    file->addAction(quit_);
}

void WindowActions::buildRunMenu() {
    HistoryController* history = parts_.history;
    QMenu* run = window_->menuBar()->addMenu(tr("&Run"));
    run->addAction(run_);
    run->addAction(stop_);
    run->addSeparator();
    run->addAction(tr("&Open Selected Run"), QKeySequence(Qt::CTRL | Qt::Key_O), history,
                   &HistoryController::openSelected);
    run->addAction(tr("Re&play Selected Run"), history,
                   [history] { history->replaySelected(1.0); });
    run->addAction(tr("Replay Selected Run &Fast (10×)"), history,
                   [history] { history->replaySelected(10.0); });
    run->addAction(tr("&Compare Selected Runs"), QKeySequence(Qt::CTRL | Qt::Key_D), history,
                   &HistoryController::compareSelected);
    run->addAction(tr("O&verlay Selected Runs"), history, &HistoryController::overlaySelected);
    run->addAction(tr("Refresh &History"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), history,
                   &HistoryController::refresh);
}

// One submenu per experiment, its panes in tab order; Ctrl+1..9 are the shown experiment's
// first nine panes (the shortcuts move with the experiment, so each pane has one).
void WindowActions::buildViewMenu() {
    LabDeck* deck = parts_.deck;
    QMenu* view = window_->menuBar()->addMenu(tr("&View"));
    for (int l = 0; l < deck->labs().size(); ++l) {
        const LabDeck::Lab& lab = deck->labs()[l];
        QMenu* sub = view->addMenu(lab.title);
        sub->setObjectName(lab.id + QStringLiteral("PaneMenu"));
        const auto& panes = lab.view->panes();
        for (int p = 0; p < panes.size(); ++p) {
            QString text = panes[p].title;
            text.remove(QLatin1Char('&'));
            QAction* a = sub->addAction(text, this, [deck, lab, p] {
                if (deck->currentId() == lab.id || deck->select(lab.id)) lab.view->showPane(p);
            });
            a->setData(panes[p].key);
            paneActions_[l].append(a);
        }
    }
    moveShortcuts();
    connect(deck, &LabDeck::currentChanged, this, &WindowActions::moveShortcuts);
    view->addSeparator();
    for (QDockWidget* dock : parts_.docks) view->addAction(dock->toggleViewAction());
    view->addSeparator();
    presentation_ = view->addAction(tr("&Presentation Mode"));
    presentation_->setCheckable(true);
    presentation_->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), QKeySequence(Qt::Key_F11)});
    presentation_->setToolTip(
        tr("Large fonts, high-contrast charts and the results alone (the docks hidden)"));
    connect(presentation_, &QAction::toggled, parts_.presentation,
            [mode = parts_.presentation](bool on) { mode->setActive(on); });
    buildThemeMenu(view);
}

void WindowActions::buildThemeMenu(QMenu* view) {
    QMenu* theme = view->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(this);
    systemTheme_ = theme->addAction(tr("&System"));
    light_ = theme->addAction(tr("&Light"));
    dark_ = theme->addAction(tr("&Dark"));
    for (auto [act, mode] :
         {std::pair{systemTheme_, ThemeMode::System}, std::pair{light_, ThemeMode::Light},
          std::pair{dark_, ThemeMode::Dark}}) {
        act->setCheckable(true);
        group->addAction(act);
        connect(act, &QAction::triggered, this, [mode] { Theme::instance().setMode(mode); });
    }
}

void WindowActions::buildHelpMenu() {
    QMenu* help = window_->menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("What This &Machine Can Run…"), this, &WindowActions::showMachine);
    help->addAction(tr("&About TrainScope"), this, [this] {
        QMessageBox::about(
            window_, tr("About TrainScope"),
            tr("<b>TrainScope</b> %1<br>A workbench for GPU experiments on Transformer "
               "training: configure, run, watch, compare, export.")
                .arg(QApplication::applicationVersion()));
    });
}

void WindowActions::buildToolBar() {
    const QStyle* st = window_->style();
    auto* tb = window_->addToolBar(tr("Main"));
    tb->setObjectName(QStringLiteral("mainToolBar"));
    tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    tb->addAction(run_);
    tb->addAction(stop_);
    tb->addSeparator();
    auto* presetsButton = new QToolButton(tb);
    presetsButton->setText(tr("Presets"));
    presetsButton->setIcon(st->standardIcon(QStyle::SP_DirOpenIcon));
    presetsButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    presetsButton->setPopupMode(QToolButton::InstantPopup);
    presetsButton->setMenu(presets_);
    tb->addWidget(presetsButton);
    exportView_->setIcon(st->standardIcon(QStyle::SP_DialogSaveButton));
    report_->setIcon(st->standardIcon(QStyle::SP_FileDialogDetailedView));
    tb->addAction(exportView_);
    tb->addAction(report_);
    tb->addSeparator();
    tb->addAction(presentation_);
}

void WindowActions::moveShortcuts() {
    const int shown = parts_.deck->currentIndex();
    for (auto it = paneActions_.begin(); it != paneActions_.end(); ++it)
        for (int p = 0; p < it.value().size(); ++p)
            it.value()[p]->setShortcut(
                it.key() == shown && p < 9
                    ? QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + p))
                    : QKeySequence());
}

void WindowActions::updateRunState() {
    const RunSession* session = parts_.session;
    run_->setEnabled(session->canStart());
    run_->setToolTip(session->startTip());
    stop_->setEnabled(session->canStop());
    presets_->setEnabled(!session->isRunning());
}

// GPU-only presets are disabled on a machine without one, with the reason.
void WindowActions::takeCapabilities() {
    const bool cuda = parts_.session->capabilities().cuda_available;
    for (QAction* a : presets_->actions())
        if (const auto p = findPreset(a->data().toString()); p && p->gpuOnly()) {
            a->setEnabled(cuda);
            if (!cuda) a->setToolTip(gpuOnlyReason(*p) + QStringLiteral(". ") + p->description);
        }
}

void WindowActions::showMachine() {
    const RunSession* session = parts_.session;
    const Capabilities& caps = session->capabilities();
    QString text;
    if (!session->capabilitiesReady()) {
        text = tr("Still checking.");
    } else {
        text = tr("LibTorch %1 (%2)\n")
                   .arg(qstr(caps.torch_version),
                        caps.torch_cuda_build ? tr("CUDA build") : tr("CPU build"));
        text += caps.cuda_available ? tr("CUDA available\n") : tr("No CUDA device\n");
        text += caps.flash_kernels ? tr("TrainScope flash kernels built\n")
                                   : tr("No TrainScope flash kernels in this build\n");
        for (const auto& d : caps.devices)
            text += QStringLiteral("\n• %1 %2%3%4")
                        .arg(qstr(d.id), qstr(d.name), d.bf16 ? tr(", bf16") : QString(),
                             d.fp16 ? tr(", fp16") : QString());
    }
    text += tr("\n\nResults store: %1").arg(session->storePath());
    QMessageBox::information(window_, tr("This Machine"), text);
}

// Icons drawn in the palette's colours; the checked theme and presentation mode follow the
// Theme, whoever changed it.
void WindowActions::restyle() {
    const ThemeMode m = Theme::instance().mode();
    run_->setIcon(Theme::instance().icon(Glyph::Run));
    stop_->setIcon(Theme::instance().icon(Glyph::Stop));
    systemTheme_->setChecked(m == ThemeMode::System);
    light_->setChecked(m == ThemeMode::Light);
    dark_->setChecked(m == ThemeMode::Dark);
    const QSignalBlocker block(presentation_);
    presentation_->setChecked(parts_.presentation->isActive());
}

}  // namespace ts::ui
