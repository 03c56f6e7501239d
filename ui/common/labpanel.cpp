// The interface and the helpers its panels share; this file also keeps moc's output for it.
#include "ui/common/labpanel.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QScrollBar>
#include <QShortcut>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QVariant>

#include "ui/common/format.h"

namespace ts::ui {

namespace {

// The red frame of an invalid field, drawn around it on its parent: a style sheet on the
// field itself would swap the native spin box for one without arrows.
class FieldFrame : public QWidget {
public:
    explicit FieldFrame(QWidget* field) : QWidget(field->parentWidget()), field_(field) {
        setObjectName(QStringLiteral("invalidFrame"));
        setAttribute(Qt::WA_TransparentForMouseEvents);
        field->installEventFilter(this);
    }
    void setShown(bool on) {
        shown_ = on;
        follow();
    }

protected:
    bool eventFilter(QObject*, QEvent* e) override {
        switch (e->type()) {
            case QEvent::Move:
            case QEvent::Resize:
            case QEvent::Show:
            case QEvent::Hide:
                follow();
                break;
            default:
                break;
        }
        return false;
    }
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(QColor(0xe5, 0x39, 0x35), 2));
        p.drawRoundedRect(QRectF(rect()).adjusted(1, 1, -1, -1), 3, 3);
    }

private:
    void follow() {
        setGeometry(field_->geometry().adjusted(-2, -2, 2, 2));
        setVisible(shown_ && field_->isVisibleTo(parentWidget()));
        raise();
    }
    QWidget* field_;
    bool shown_ = false;
};

// A wheel turned over a spin box or a combo scrolls the panel unless the field has the
// focus (clicked or tabbed into): scrolling past a field must not change its value.
class WheelGuard : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* o, QEvent* e) override {
        auto* field = static_cast<QWidget*>(o);
        if (e->type() != QEvent::Wheel || field->hasFocus()) return false;
        // To the scroll bar of the dock's scroll area, which scrolls the panel.
        for (QWidget* w = field->parentWidget(); w; w = w->parentWidget())
            if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
                QApplication::sendEvent(area->verticalScrollBar(), e);
                break;
            }
        return true;
    }
};

}  // namespace

void LabPanel::flagField(QWidget* w, const QStringList& messages, const QString& base_tooltip) {
    const bool invalid = !messages.isEmpty();
    if (w->property("invalid").toBool() != invalid) {
        w->setProperty("invalid", invalid);
        auto* frame = dynamic_cast<FieldFrame*>(w->property("invalidFrame").value<QObject*>());
        if (!frame && invalid && w->parentWidget()) {
            frame = new FieldFrame(w);
            w->setProperty("invalidFrame", QVariant::fromValue<QObject*>(frame));
        }
        if (frame) frame->setShown(invalid);
    }
    w->setToolTip(
        invalid ? messages.join(QLatin1Char('\n')) +
                      (base_tooltip.isEmpty() ? QString() : QStringLiteral("\n\n") + base_tooltip)
                : base_tooltip);
}

void LabPanel::showEvent(QShowEvent* e) {
    if (!wheelGuard_) {
        wheelGuard_ = new WheelGuard(this);
        const auto guard = [this](QWidget* w) {
            w->setFocusPolicy(Qt::StrongFocus);
            w->installEventFilter(wheelGuard_);
        };
        for (auto* w : findChildren<QAbstractSpinBox*>()) guard(w);
        for (auto* w : findChildren<QComboBox*>()) guard(w);
    }
    QWidget::showEvent(e);
}

void LabPanel::addStatusLabels(QVBoxLayout* layout) {
    // Every group above keeps its own height: squeezed to make room for a longer message, it
    // would move the fields inside it under the user's pointer. The dock scrolls instead.
    for (int i = 0; i < layout->count(); ++i)
        if (QWidget* w = layout->itemAt(i)->widget()) {
            QSizePolicy sp = w->sizePolicy();
            sp.setVerticalPolicy(QSizePolicy::Fixed);
            w->setSizePolicy(sp);
        }
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

void LabPanel::setLabelField(QLineEdit* label) {
    label_ = label;
    connect(this, &LabPanel::changed, this, &LabPanel::forgetPresetOnChange);
}

QJsonObject LabPanel::configWithoutLabel() const {
    QJsonObject o = state();
    o.remove(QLatin1String("label"));
    return o;
}

void LabPanel::forgetPresetOnChange() {
    if (presetTitle_.isEmpty() || updating_ || applyingPreset_ || !label_) return;
    if (label_->text() != presetTitle_) {  // the user's own label now
        presetTitle_.clear();
        return;
    }
    if (configWithoutLabel() == presetConfig_) return;
    presetTitle_.clear();
    label_->clear();  // emits changed() again, with no preset left to forget
}

void LabPanel::applyPreset(const QJsonObject& config, const QString& title, QStringList* notes) {
    applyingPreset_ = true;
    QJsonObject c = config;
    if (!c.contains(QLatin1String("label"))) c[QStringLiteral("label")] = title;
    setState(c, notes);
    applyingPreset_ = false;
    presetTitle_ = c.value(QLatin1String("label")).toString();
    presetConfig_ = configWithoutLabel();
}

QJsonObject LabPanel::savedState() const {
    QJsonObject o = state();
    if (!presetTitle_.isEmpty())
        o[QStringLiteral("preset_label")] = QJsonObject{{QStringLiteral("title"), presetTitle_},
                                                        {QStringLiteral("config"), presetConfig_}};
    return o;
}

void LabPanel::restoreState(const QJsonObject& saved) {
    QJsonObject o = saved;
    const QJsonObject origin = o.take(QLatin1String("preset_label")).toObject();
    applyingPreset_ = true;
    setState(o);
    applyingPreset_ = false;
    presetTitle_.clear();
    // Labelled by a preset last time: still so only while the configuration is the preset's.
    if (label_ && !origin.isEmpty() &&
        label_->text() == origin.value(QLatin1String("title")).toString()) {
        presetTitle_ = label_->text();
        presetConfig_ = origin.value(QLatin1String("config")).toObject();
        forgetPresetOnChange();
    }
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
            if (d.total_memory > 0)
                text += tr(" (%1 GiB)").arg(d.total_memory / double(1 << 30), 0, 'f', 0);
            device_->addItem(text, qstr(d.id));
        }
        if (device_->findData(QStringLiteral("cpu")) < 0)
            device_->insertItem(0, tr("cpu"), QStringLiteral("cpu"));
        if (!caps.cuda_available) {
            device_->addItem(tr("cuda"), QStringLiteral("cuda"));
            const int i = device_->count() - 1;
            const QString why = caps.torch_cuda_build
                                    ? tr("No CUDA device found on this machine")
                                    : tr("This LibTorch was built without CUDA (torch %1)")
                                          .arg(qstr(caps.torch_version));
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
    // What the machine changes (an unavailable option dropped) is not the user's change.
    applyingPreset_ = true;
    updateAvailability();
    revalidate();
    applyingPreset_ = false;
    if (!presetTitle_.isEmpty()) presetConfig_ = configWithoutLabel();
}

void LabPanel::showProblems(const QHash<QWidget*, QStringList>& byField,
                            const QStringList& general) {
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
    summary_->setText(
        capsKnown_ || !problems_.isEmpty() ? summary() : tr("Checking what this machine can run…"));
}

}  // namespace ts::ui
