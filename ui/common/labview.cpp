#include "ui/common/labview.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "ui/common/panes.h"
#include "ui/common/tableview.h"

namespace ts::ui {

LabView::LabView(QWidget* parent) : QWidget(parent), tabs_(new QTabWidget(this)) {
    tabs_->setDocumentMode(true);
    tabs_->setObjectName(QStringLiteral("views"));
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(tabs_);
}

int LabView::addPane(const Pane& pane) {
    const int index = tabs_->addTab(pane.widget, pane.title);
    panes_.append(pane);
    // Charts and tables of every kind (Qt Charts, QCustomPlot, tables) have these two signals.
    for (QObject* o : {dynamic_cast<QObject*>(pane.chart), static_cast<QObject*>(pane.table)}) {
        if (!o) continue;
        connect(o, SIGNAL(exportRequested()), this, SLOT(onPaneExport()));
        connect(o, SIGNAL(copyRequested()), this, SLOT(onPaneCopy()));
    }
    return index;
}

int LabView::paneOf(const QObject* sender) const {
    for (int i = 0; i < panes_.size(); ++i)
        if (dynamic_cast<const QObject*>(panes_[i].chart) == sender || panes_[i].table == sender)
            return i;
    return -1;
}

void LabView::onPaneExport() {
    if (const int i = paneOf(sender()); i >= 0) Q_EMIT exportRequested(i);
}

void LabView::onPaneCopy() {
    if (const int i = paneOf(sender()); i >= 0) Q_EMIT copyRequested(i);
}

int LabView::paneIndex(const QString& key) const {
    for (int i = 0; i < panes_.size(); ++i)
        if (panes_[i].key == key) return i;
    return -1;
}

int LabView::currentPane() const { return tabs_->currentIndex(); }

void LabView::showPane(int index) { tabs_->setCurrentIndex(index); }

void LabView::showOverlay(std::vector<OverlaidRun> runs, OverlayPlot plot) {
    if (!overlayChart_) {
        overlayModel_ = new OverlayModel(this);
        overlayChart_ = new OverlayChart(overlayModel_, this);
        overlayMetric_ = new QComboBox(this);
        overlayMetric_->setObjectName(QStringLiteral("overlayMetric"));
        overlayMetric_->setToolTip(tr("What the overlaid runs are drawn by"));
        auto* label = new QLabel(tr("Draw:"), this);
        label->setBuddy(overlayMetric_);
        QWidget* page = panePage(this, paneRow(this, {label, overlayMetric_}), overlayChart_);
        addPane({QStringLiteral("overlay"), tr("Overlay"), page, overlayChart_, nullptr});
        connect(overlayMetric_, &QComboBox::activated, this, &LabView::drawOverlayBy);
    }
    overlayRuns_ = std::move(runs);
    {
        const QSignalBlocker block(overlayMetric_);
        overlayMetric_->clear();
        overlayMetric_->addItems(plot.metrics);
        overlayMetric_->setCurrentIndex(plot.metric);
    }
    overlayMetric_->parentWidget()->setVisible(plot.metrics.size() > 1);
    overlayModel_->setPlot(std::move(plot));
    overlayChart_->flushRedraw();
    showPane(paneIndex(QStringLiteral("overlay")));
}

void LabView::drawOverlayBy(int metric) {
    QString error;
    if (auto plot = combineOverlays(overlayRuns_, &error, metric)) {
        overlayModel_->setPlot(std::move(*plot));
        overlayChart_->flushRedraw();
    } else {
        Q_EMIT statusText(error);  // nothing measured by it: the chart stays as it was
        overlayMetric_->setCurrentIndex(overlayModel_->plot().metric);
    }
}

ExportContext LabView::paneContext(int pane) const {
    if (!overlayChart_ || pane != paneIndex(QStringLiteral("overlay"))) return exportContext(pane);
    const OverlayPlot& plot = overlayModel_->plot();
    ExportContext ctx;
    QStringList ids;
    for (qint64 id : plot.runIds) ids << QString::number(id);
    ctx.title = tr("Runs %1 overlaid").arg(ids.join(QStringLiteral(", ")));
    ctx.configuration = plot.title;
    ctx.notes = plot.runNames;
    if (plot.missing > 0)
        ctx.notes << tr(
            "%n point(s) without a value (failed, out of memory or not measured) "
            "are not drawn",
            "", plot.missing);
    return ctx;
}

ExportContext LabView::exportContext(int) const {
    ExportContext ctx;
    ctx.runLabel = label_;
    ctx.storeRunId = storeRunId_;
    ctx.environment = env_;
    ctx.configuration = configuration_;
    ctx.configurationJson = configurationJson_;
    return ctx;
}

void LabView::showStoredEnvironment(const RunInfo& info) {
    env_ = {};
    if (const nlohmann::json j = parseJsonOrDiscarded(info.environment_json);
        j.is_object() && !j.empty()) {
        try {
            env_ = environmentFromJson(j);
        } catch (const std::exception&) {
            env_ = {};  // a damaged environment is not shown; the rows may know it
        }
    }
    if (env_.device_name.empty()) env_.device_name = info.device_name;
}

void LabView::takeEnvironment(const Environment& e) {
    for (auto field :
         {&Environment::device_name, &Environment::driver_version, &Environment::cuda_version,
          &Environment::torch_version, &Environment::cpu, &Environment::hostname,
          &Environment::date, &Environment::git_commit, &Environment::trainscope_version})
        if ((env_.*field).empty()) env_.*field = e.*field;
}

QString LabView::runTitle() const { return exportContext(0).runTitle(); }

QString LabView::replayUnavailable() const {
    return tr("This experiment's runs cannot be replayed: open them instead");
}

QString LabView::compareUnavailable() const {
    return tr("This experiment's runs do not compare: open them instead");
}

void LabView::replay(const StoredRun&, double) {}

bool LabView::compare(const StoredRun&, const StoredRun&, QString* error) {
    if (error) *error = compareUnavailable();
    return false;
}

bool LabView::importFile(const QString&, const QString&, QString* error) {
    if (error) *error = tr("This experiment imports no files");
    return false;
}

void LabView::applyPresetView(const QJsonObject& view) {
    const int i = paneIndex(view.value(QLatin1String("tab")).toString());
    if (i >= 0) showPane(i);
}

}  // namespace ts::ui
