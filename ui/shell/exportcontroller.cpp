#include "ui/shell/exportcontroller.h"

#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>

#include "core/atomic_file.h"
#include "ui/common/exporter.h"
#include "ui/common/labview.h"
#include "ui/common/tableview.h"
#include "ui/common/theme.h"
#include "ui/shell/exportdialog.h"
#include "ui/shell/labdeck.h"
#include "ui/shell/runsession.h"

namespace ts::ui {

ExportController::ExportController(const RunSession* session, const LabDeck* deck, QWidget* window)
    : QObject(window), session_(session), deck_(deck), window_(window) {
    connect(deck, &LabDeck::exportRequested, this, &ExportController::exportPaneInteractive);
    connect(deck, &LabDeck::copyRequested, this, &ExportController::copyPane);
}

bool ExportController::overwritesStore(const QString& path, QString* error) const {
    const std::string problem =
        outputTargetProblem(path.toStdString(), session_->storePath().toStdString());
    if (problem.empty()) return false;
    if (error) *error = QString::fromStdString(problem);
    return true;
}

bool ExportController::refuseDeleted(const LabView* view, QString* error) const {
    const QString note = deck_->deletedRunNote(view);
    if (!note.isEmpty() && error) *error = tr("Cannot export: %1.").arg(note);
    return !note.isEmpty();
}

bool ExportController::exportPane(LabView* view, int pane, const QString& path, QSize size,
                                  QString* error, bool withEnvironment) {
    if (overwritesStore(path, error) || refuseDeleted(view, error)) return false;
    if (pane < 0 || pane >= view->panes().size()) {
        if (error) *error = tr("no view to export");
        return false;
    }
    const LabView::Pane& p = view->panes()[pane];
    const ExportContext ctx = view->paneContext(pane);
    if (tableFormatFor(path)) {
        if (!p.table) {
            if (error) *error = tr("this view has no table");
            return false;
        }
        if (withEnvironment && overwritesStore(environmentPathFor(path), error)) return false;
        return exportTable(*p.table->model(), path, ctx, error, withEnvironment);
    }
    if (!p.chart) {
        if (error) *error = tr("this view has no chart");
        return false;
    }
    if (!size.isValid()) size = dynamic_cast<QWidget*>(p.chart)->size();
    return exportChart(*p.chart, path, size, ctx, error);
}

bool ExportController::exportTab(const QString& key, const QString& path, QSize size,
                                 QString* error, bool withEnvironment) {
    const auto [lab, pane] = deck_->findPane(key);
    if (lab < 0) {
        if (error) *error = tr("there is no view '%1'").arg(key);
        return false;
    }
    return exportPane(deck_->labs()[lab].view, pane, path, size, error, withEnvironment);
}

bool ExportController::exportReport(const QString& path, QSize chartSize, QString* error) {
    if (overwritesStore(path, error)) return false;
    LabView* v = deck_->currentView();
    if (!v) {
        if (error) *error = tr("no lab is shown");
        return false;
    }
    if (refuseDeleted(v, error)) return false;
    return ts::ui::exportReport(path, v->reportParts(), v->exportContext(-1), chartSize, error);
}

QString ExportController::suggestedPath(const QString& stem, const QString& ext) const {
    QSettings s;
    QString dir = s.value(QStringLiteral("export/dir")).toString();
    if (dir.isEmpty() || !QFileInfo(dir).isDir()) {
        // The usual place, made when missing (a fresh profile has none); else home.
        dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        if (dir.isEmpty() || !QDir().mkpath(dir)) dir = QDir::homePath();
    }
    const LabView* v = deck_->currentView();
    const qint64 id = v ? v->storeRunId() : 0;
    // "trainscope-run12-steps.png"; an unsaved run or a comparison ("compare-run3-vs-run5")
    // has no id of its own.
    const QString name = id > 0 ? QStringLiteral("trainscope-run%1-%2").arg(id).arg(stem)
                                : QStringLiteral("trainscope-") + stem;
    return QDir(dir).filePath(name + QLatin1Char('.') + ext);
}

void ExportController::exportPaneInteractive(LabView* view, int pane) {
    if (pane < 0 || pane >= view->panes().size()) return;
    if (QString why; refuseDeleted(view, &why))
        return (void)QMessageBox::warning(window_, tr("Export"), why);
    const LabView::Pane& p = view->panes()[pane];
    const bool chart = p.chart != nullptr;
    const QString stem = chart ? p.chart->chartFileStem() : p.table->fileStem();
    ExportDialog dlg(chart ? ExportDialog::Kind::Chart : ExportDialog::Kind::Table,
                     suggestedPath(stem, chart ? QStringLiteral("png") : QStringLiteral("csv")),
                     chart ? p.widget->size() : QSize(), window_);
    for (;;) {
        if (dlg.exec() != QDialog::Accepted) return;
        QString error;
        const PrintColours colours(chart && dlg.printColours());
        if (exportPane(view, pane, dlg.path(), chart ? dlg.size() : QSize(), &error,
                       dlg.environmentBeside()))
            break;
        QMessageBox::warning(window_, tr("Export"), error);  // then the dialog again, as it was
    }
    QSettings().setValue(QStringLiteral("export/dir"), QFileInfo(dlg.path()).absolutePath());
    Q_EMIT logLine(tr("Exported %1 to %2")
                       .arg(chart ? p.chart->chartTitle() : p.table->tableTitle(), dlg.path()));
    Q_EMIT notice(tr("Saved %1").arg(dlg.path()), 5000);
}

void ExportController::copyPane(LabView* view, int pane) {
    if (pane < 0 || pane >= view->panes().size()) return;
    if (QString why; refuseDeleted(view, &why)) return Q_EMIT notice(why, 5000);
    const LabView::Pane& p = view->panes()[pane];
    const ExportContext ctx = view->paneContext(pane);
    if (p.chart) {
        copyChartToClipboard(*p.chart, dynamic_cast<QWidget*>(p.chart)->size(), ctx);
        Q_EMIT notice(tr("%1 copied as an image").arg(p.chart->chartTitle()), 3000);
    } else if (p.table) {
        copyTableToClipboard(*p.table->model(), ctx);
        Q_EMIT notice(tr("%1 table copied").arg(p.table->tableTitle()), 3000);
    }
}

void ExportController::exportShownPane() {
    if (LabView* v = deck_->currentView()) exportPaneInteractive(v, v->currentPane());
}

void ExportController::copyShownPane() {
    if (LabView* v = deck_->currentView()) copyPane(v, v->currentPane());
}

void ExportController::exportReportInteractive() {
    if (QString why; refuseDeleted(deck_->currentView(), &why))
        return (void)QMessageBox::warning(window_, tr("Export Report"), why);
    ExportDialog dlg(ExportDialog::Kind::Report,
                     suggestedPath(QStringLiteral("report"), QStringLiteral("md")),
                     QSize(1200, 700), window_);
    for (;;) {
        if (dlg.exec() != QDialog::Accepted) return;
        QString error;
        const PrintColours colours(dlg.printColours());
        if (exportReport(dlg.path(), dlg.size(), &error)) break;
        QMessageBox::warning(window_, tr("Export Report"), error);
    }
    Q_EMIT logLine(tr("Report written to %1").arg(dlg.path()));
    Q_EMIT notice(tr("Saved %1").arg(dlg.path()), 5000);
}

}  // namespace ts::ui
