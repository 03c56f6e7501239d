#include "ui/benchmark/comparewidget.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/benchmark/comparechart.h"
#include "ui/benchmark/comparemodel.h"
#include "ui/common/format.h"
#include "ui/common/tableview.h"

namespace ts::ui {

CompareWidget::CompareWidget(CompareModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
    header_ = new QLabel(this);
    header_->setWordWrap(true);
    header_->setTextFormat(Qt::RichText);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    metric_ = new QComboBox(this);
    for (Metric m : {Metric::Total, Metric::Forward, Metric::Backward, Metric::Optimizer})
        metric_->addItem(metricName(m), static_cast<int>(m));
    chart_ = new CompareChart(model, this);
    chart_->setObjectName(QStringLiteral("compareChart"));
    chart_->setMinimumHeight(200);
    table_ = new DataTableView(this);
    table_->setObjectName(QStringLiteral("compareTable"));
    table_->setTitle(tr("Comparison"), QStringLiteral("compare"));
    table_->setModel(model);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table_->horizontalHeader()->setStretchLastSection(false);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Compare:"), this));
    controls->addWidget(metric_);
    controls->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(header_);
    layout->addLayout(controls);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(chart_);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({600, 400});  // the chart most of it, whatever the table's own height
    layout->addWidget(split, 1);
    connect(metric_, &QComboBox::currentIndexChanged, this,
            [this] { model_->setMetric(static_cast<Metric>(metric_->currentData().toInt())); });
    connect(model, &QAbstractItemModel::modelReset, this, &CompareWidget::refresh);
    refresh();
}

void CompareWidget::refresh() {
    if (!model_->hasRuns()) {
        header_->setText(tr("Select two runs in the History pane and press <b>Compare</b>."));
        return;
    }
    auto side = [](const char* tag, const CompareModel::Side& s) {
        return QStringLiteral("<b>%1</b> = run %2 %3 (%4, %5 points)")
            .arg(QLatin1String(tag))
            .arg(s.info.id)
            .arg(s.info.label.empty() ? QString()
                                      : QStringLiteral("“") + qstr(s.info.label).toHtmlEscaped() +
                                            QStringLiteral("”"))
            .arg(qstr(s.info.created).toHtmlEscaped())
            .arg(s.points.size());
    };
    QString html = side("A", model_->sideA()) + QStringLiteral("<br>") + side("B", model_->sideB());
    const auto diffs = model_->environmentDifferences();
    if (diffs.isEmpty()) {
        html += tr("<br>Same environment.");
    } else {
        html += QStringLiteral("<br>") + tr("Environment differences:") +
                QStringLiteral("<ul style='margin:0'>");
        for (const QStringList& d : diffs)
            html += QStringLiteral("<li>%1: A %2 · B %3</li>")
                        .arg(d[0].toHtmlEscaped(), d[1].toHtmlEscaped(), d[2].toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    header_->setText(html);
}

}  // namespace ts::ui
