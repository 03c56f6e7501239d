// The interface and the helpers its panels share; this file also keeps moc's output for it.
#include "common/labpanel.h"

#include <QComboBox>
#include <QLabel>
#include <QShortcut>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QVariant>

#include "common/format.h"

namespace ts::ui {

void LabPanel::flagField(QWidget* w, const QStringList& messages, const QString& base_tooltip) {
    const bool invalid = !messages.isEmpty();
    if (w->property("invalid").toBool() != invalid) {
        w->setProperty("invalid", invalid);
        // A style sheet on the flagged widget only: a panel-wide one would stop the
        // application font (presentation mode) from reaching the fields.
        w->setStyleSheet(invalid ? QStringLiteral("%1#%2 { border: 2px solid #e53935; border-radius: 3px; }")
                                       .arg(QLatin1String(w->metaObject()->className()), w->objectName())
                                 : QString());
    }
    w->setToolTip(invalid ? messages.join(QLatin1Char('\n')) +
                                (base_tooltip.isEmpty() ? QString() : QStringLiteral("\n\n") + base_tooltip)
                          : base_tooltip);
}

void LabPanel::addStatusLabels(QVBoxLayout* layout) {
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setObjectName(QStringLiteral("summary"));
    problemsLabel_ = new QLabel(this);
    problemsLabel_->setWordWrap(true);
    problemsLabel_->setObjectName(QStringLiteral("problems"));
    problemsLabel_->setStyleSheet(QStringLiteral("QLabel#problems { color: #e53935; }"));
    problemsLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    problemsLabel_->hide();
    layout->addWidget(summary_);
    layout->addWidget(problemsLabel_);
}

QComboBox* LabPanel::makeDeviceCombo(QWidget* parent) {
    device_ = new QComboBox(parent);
    device_->addItem(tr("cpu"), QStringLiteral("cpu"));
    return device_;
}

void LabPanel::registerFields(const QHash<QString, QWidget*>& fields) {
    for (auto it = fields.begin(); it != fields.end(); ++it) {
        it.value()->setObjectName(it.key());
        baseTooltips_.insert(it.value(), it.value()->toolTip());
        fields_.insert(it.key(), it.value());
    }
}

void LabPanel::installRunShortcut() {
    auto* run = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    run->setContext(Qt::WidgetWithChildrenShortcut);
    connect(run, &QShortcut::activated, this, &LabPanel::runRequested);
}

void LabPanel::setCapabilities(const Capabilities& caps) {
    caps_ = caps;
    capsKnown_ = true;
    updating_ = true;
    if (device_) {
        const QString current = device_->currentData().toString();
        device_->clear();
        auto* model = qobject_cast<QStandardItemModel*>(device_->model());
        for (const DeviceInfo& d : caps.devices) {
            QString text = qstr(d.id);
            if (!d.name.empty()) text += QStringLiteral(" — ") + qstr(d.name);
            if (d.total_memory > 0) text += tr(" (%1 GiB)").arg(d.total_memory / double(1 << 30), 0, 'f', 0);
            device_->addItem(text, qstr(d.id));
        }
        if (device_->findData(QStringLiteral("cpu")) < 0) device_->insertItem(0, tr("cpu"), QStringLiteral("cpu"));
        if (!caps.cuda_available) {
            device_->addItem(tr("cuda"), QStringLiteral("cuda"));
            const int i = device_->count() - 1;
            const QString why = caps.torch_cuda_build
                                    ? tr("No CUDA device found on this machine")
                                    : tr("This LibTorch was built without CUDA (torch %1)").arg(qstr(caps.torch_version));
            if (model) model->item(i)->setEnabled(false);
            device_->setItemData(i, why, Qt::ToolTipRole);
        } else if (device_->findData(QStringLiteral("cuda")) < 0) {
            // "cuda" = the current CUDA device; most presets name it.
            device_->addItem(tr("cuda (current device)"), QStringLiteral("cuda"));
        }
        int idx = device_->findData(current);
        if (idx < 0 || (model && !model->item(idx)->isEnabled())) idx = 0;
        device_->setCurrentIndex(idx);
    }
    updating_ = false;
    updateAvailability();
    revalidate();
}

void LabPanel::showProblems(const QHash<QWidget*, QStringList>& byField, const QStringList& general) {
    problems_.clear();
    // Fields in a stable order: the order of their names, as registered.
    QStringList names = fields_.keys();
    names.sort();
    for (const QString& name : names) {
        QWidget* w = fields_.value(name);
        flagField(w, byField.value(w), baseTooltips_.value(w));
        for (const QString& m : byField.value(w))
            if (!problems_.contains(m)) problems_ << m;
    }
    for (const QString& m : general)
        if (!problems_.contains(m)) problems_ << m;
    problemsLabel_->setText(problems_.join(QLatin1Char('\n')));
    problemsLabel_->setVisible(!problems_.isEmpty());
    summary_->setText(capsKnown_ || !problems_.isEmpty() ? summary() : tr("Checking what this machine can run…"));
}

}  // namespace ts::ui
