#include "ui/planner/plannerview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "core/table.h"
#include "planner/planner_report.h"
#include "ui/common/format.h"
#include "ui/common/panes.h"
#include "ui/common/tableview.h"
#include "ui/planner/plannerchart.h"
#include "ui/planner/plannermodel.h"
#include "ui/planner/plannerpanel.h"

namespace ts::ui {

namespace {

// The formulas and limits of every strategy, as Markdown for a QTextBrowser.
QString plannerFormulasMarkdown(const PlannerReport& r) {
    QString md = QObject::tr(
                     "**C/W = %1 FLOP/byte.** Times of one layer's MLP on one device; a "
                     "pass is communication bound when its communication takes longer "
                     "than its compute (they overlap).\n\n")
                     .arg(r.inputs.flops / r.inputs.bandwidth, 0, 'g', 4);
    for (const StrategyPlan& p : r.plans) {
        md += QStringLiteral("**%1** (X = %2, Y = %3)\n\n")
                  .arg(qstr(strategyTitle(p.strategy)))
                  .arg(p.x)
                  .arg(p.y);
        md += QObject::tr("- forward: FLOPs `%1`; communication `%2`\n")
                  .arg(qstr(p.forward.flops_formula), qstr(p.forward.comm_formula));
        md += QObject::tr("- backward: FLOPs `%1`; communication `%2`\n")
                  .arg(qstr(p.backward.flops_formula), qstr(p.backward.comm_formula));
        for (const PlannerLimit& l : p.limits)
            md += QStringLiteral("- %1: `%2` = %3%4\n")
                      .arg(qstr(l.what), qstr(l.formula))
                      .arg(l.value, 0, 'g', 4)
                      .arg(!l.checked ? QString()
                           : l.holds  ? QObject::tr(" (within)")
                                      : QObject::tr(" (**past it: communication bound**)"));
        md += QLatin1Char('\n');
    }
    return md;
}

}  // namespace

PlannerView::PlannerView(QWidget* parent) : LabView(parent) {
    registerPlannerMetaTypes();
    model_ = new PlannerTableModel(this);
    auto* table = new DataTableView(this);
    table->setObjectName(QStringLiteral("plannerTable"));
    table->setTitle(tr("Parallelism plan"), QStringLiteral("planner"));
    table->setModel(model_);
    formulas_ = new QTextBrowser(this);
    formulas_->setObjectName(QStringLiteral("plannerFormulas"));
    addPane({QStringLiteral("plan"), tr("&Plan"),
             panePage(this, nullptr, table, formulas_, nullptr, {1, 2}), nullptr, table});
    chart_ = new PlannerChart(this);
    chart_->setObjectName(QStringLiteral("plannerChart"));
    chart_->setMinimumHeight(240);
    strategy_ = new QComboBox(this);
    for (Strategy s : allStrategies())
        strategy_->addItem(qstr(strategyTitle(s)), qstr(toString(s)));
    strategy_->setToolTip(tr("Whose compute and communication the chart draws"));
    connect(strategy_, &QComboBox::currentIndexChanged, this, [this] { refreshChart(); });
    addPane({QStringLiteral("crossover"), tr("&Crossover"),
             panePage(this, paneRow(this, {new QLabel(tr("Strategy:"), this), strategy_}), chart_),
             chart_, nullptr});
    text_ = new QTextBrowser(this);
    text_->setObjectName(QStringLiteral("plannerReport"));
    text_->setLineWrapMode(QTextEdit::NoWrap);
    addPane({QStringLiteral("report"), tr("&Report"), text_, nullptr, nullptr});
    begin({}, {});
}

const std::optional<PlannerReport>& PlannerView::report() const { return model_->report(); }

void PlannerView::begin(const QString& label, const std::string& spec_json) {
    label_ = label;
    storeRunId_ = 0;
    env_ = {};
    configuration_.clear();
    configurationJson_.clear();
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(spec_json));
    if (doc.isObject()) {
        configuration_ = PlannerPanel::describeSpec(doc.object());
        configurationJson_ = QString::fromUtf8(doc.toJson(QJsonDocument::Indented)).trimmed();
    }
    showReport(std::nullopt);
    Q_EMIT titleChanged();
}

void PlannerView::showReport(const std::optional<PlannerReport>& r) {
    model_->setReport(r);
    if (r) {
        formulas_->setMarkdown(plannerFormulasMarkdown(*r));
        QFont mono(QStringLiteral("monospace"));
        mono.setStyleHint(QFont::Monospace);
        text_->setFont(mono);
        text_->setPlainText(qstr(plannerReportText(*r, TableFormat::Text)));
    } else {
        formulas_->setMarkdown(
            tr("Compute (or Measure) in the planner's panel to see the plan: "
               "each strategy's FLOPs and communication, and where it becomes "
               "communication bound."));
        text_->clear();
    }
    if (auto* t = qobject_cast<DataTableView*>(panes()[paneIndex(QStringLiteral("plan"))].table))
        t->resizeColumnsToContents();
    refreshChart();
}

void PlannerView::refreshChart() {
    const auto& r = model_->report();
    const auto s = parseStrategy(strategy_->currentData().toString().toStdString());
    if (!r || !s) {
        chart_->setCurve(std::nullopt);
        return;
    }
    chart_->setCurve(planCurve(r->inputs, *s));
}

void PlannerView::beginRun(const LabJob& job) { begin(job.label, job.spec_json); }

void PlannerView::runStarted(qint64 storeRunId, const Environment& env) {
    storeRunId_ = storeRunId;
    env_ = env;
    Q_EMIT titleChanged();
}

void PlannerView::addItems(const QList<QVariant>& items) {
    for (const QVariant& item : items)
        if (item.metaType() == QMetaType::fromType<PlannerReport>())
            showReport(item.value<PlannerReport>());
}

bool PlannerView::showStored(const StoredRun& run, QString* error) {
    std::vector<PlannerReport> reports;
    try {
        reports = plannerReportsFromRows(run.info, run.rows);
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    showStoredEnvironment(run.info);
    if (!reports.empty()) showReport(reports.back());
    Q_EMIT logLine(tr("Opened %1 run %2").arg(qstr(run.info.lab)).arg(run.info.id));
    Q_EMIT titleChanged();
    return true;
}

QList<ReportPart> PlannerView::reportParts() const {
    return {ReportPart{tr("Parallelism plan"), nullptr, model_, {}},
            ReportPart{tr("Compute against communication"), chart_, nullptr, {}}};
}

}  // namespace ts::ui
