// The interface and the helpers its panels share; this file also keeps moc's output for it.
#include "ui/common/labpanel.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QScrollBar>
#include <QShortcut>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QVariant>

#include "ui/common/dimensionfields.h"
#include "ui/common/dimensions.h"

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

// A state's value at `key`, where "custom/vocab" is "vocab" in the object "custom".
QJsonValue valueAt(const QJsonObject& o, const QString& key) {
    const int slash = key.indexOf(QLatin1Char('/'));
    if (slash < 0) return o.value(key);
    return o.value(key.left(slash)).toObject().value(key.mid(slash + 1));
}

void setAt(QJsonObject& o, const QString& key, const QJsonValue& v) {
    const int slash = key.indexOf(QLatin1Char('/'));
    if (slash < 0) {
        o[key] = v;
        return;
    }
    QJsonObject inner = o.value(key.left(slash)).toObject();
    inner[key.mid(slash + 1)] = v;
    o[key.left(slash)] = inner;
}

bool hasAt(const QJsonObject& o, const QString& key) { return !valueAt(o, key).isUndefined(); }

// A number as a text field shows it: 128, 0.001, 9.89e+14.
QString numberText(double v) { return QString::number(v, 'g', 17); }

bool itemEnabled(QComboBox* box, int i) {
    auto* model = qobject_cast<QStandardItemModel*>(box->model());
    return !model || model->item(i)->isEnabled();
}

}  // namespace

// Note [declared fields]: a panel declares each field once, with addText, addSpin, addCombo,
// addCheck, addChecks, addDevice, addCode or addField: the widget, its label, tooltip, value and
// range, its object name (what tests, showProblems and the wheel guard find it by), its key in
// the state, how the state reads it back (a number written as text or a list written as an
// array is taken too; an unknown or unavailable choice is kept out and said in the notes), and
// that a change revalidates the panel. state() and setState() are the registry's; a lab keeps
// what is its own: which fields the machine allows (updateAvailability), the engine's checks
// (revalidate), the defaults and notes of a state read back (stateLoaded), the job and summary.

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

LabPanel::Field& LabPanel::addField(Field f) {
    if (f.widget) {
        const QString name = f.key.section(QLatin1Char('/'), -1);
        f.widget->setObjectName(name);
        baseTooltips_.insert(f.widget, f.widget->toolTip());
        fields_.insert(name, f.widget);
    }
    registry_.push_back(std::move(f));
    return registry_.back();
}

LabPanel::Field& LabPanel::field(const QString& key) {
    for (Field& f : registry_)
        if (f.key == key) return f;
    qFatal("LabPanel: no field %s", qPrintable(key));
}

QFormLayout* LabPanel::addLabelRow(QVBoxLayout* outer, const QString& placeholder) {
    auto* form = new QFormLayout;
    outer->addLayout(form);
    label_ = addText(form, QStringLiteral("label"), tr("&Label:"), {});
    label_->setPlaceholderText(placeholder);
    connect(this, &LabPanel::changed, this, &LabPanel::forgetPresetOnChange);
    return form;
}

QLineEdit* LabPanel::addText(QFormLayout* form, const QString& key, const QString& label,
                             const QString& value, const QString& tip) {
    auto* e = new QLineEdit(value, this);
    e->setToolTip(tip);
    if (form) form->addRow(label, e);
    connect(e, &QLineEdit::textChanged, this, &LabPanel::fieldChanged);
    addField({key, e, [e, key](QJsonObject& o) { setAt(o, key, e->text()); },
              [e, key](const QJsonObject& o, QStringList*) {
                  // Presets write a number or a list of them as well as text.
                  const QJsonValue v = valueAt(o, key);
                  auto text = [](const QJsonValue& x) {
                      return x.isDouble() ? numberText(x.toDouble()) : x.toString();
                  };
                  if (v.isArray()) {
                      QStringList parts;
                      for (const auto& x : v.toArray()) parts << text(x);
                      e->setText(parts.join(QStringLiteral(", ")));
                  } else if (v.isString() || v.isDouble()) {
                      e->setText(text(v));
                  }
              }});
    return e;
}

QSpinBox* LabPanel::addSpin(QFormLayout* form, const QString& key, const QString& label, int lo,
                            int hi, int value, const QString& tip) {
    auto* s = new QSpinBox(this);
    s->setRange(lo, hi);
    s->setValue(value);
    s->setToolTip(tip);
    s->setAccelerated(true);
    if (form) form->addRow(label, s);
    connect(s, &QSpinBox::valueChanged, this, &LabPanel::fieldChanged);
    addField({key, s, [s, key](QJsonObject& o) { setAt(o, key, s->value()); },
              [s, key](const QJsonObject& o, QStringList*) {
                  // A value from a string too ("128", or a list's first): presets write either.
                  const QJsonValue v = valueAt(o, key);
                  if (v.isDouble()) s->setValue(v.toInt(s->value()));
                  bool ok = false;
                  const int n = v.toString().section(QLatin1Char(','), 0, 0).trimmed().toInt(&ok);
                  if (v.isString() && ok) s->setValue(n);
              }});
    return s;
}

QComboBox* LabPanel::addCombo(QFormLayout* form, const QString& key, const QString& label,
                              const QList<Choice>& choices, const QString& value,
                              const QString& tip) {
    auto* c = new QComboBox(this);
    for (const Choice& ch : choices) {
        c->addItem(ch.text, ch.data);
        if (!ch.tip.isEmpty()) c->setItemData(c->count() - 1, ch.tip, Qt::ToolTipRole);
    }
    c->setCurrentIndex(std::max(0, c->findData(value)));
    c->setToolTip(tip);
    if (form) form->addRow(label, c);
    connect(c, &QComboBox::currentIndexChanged, this, &LabPanel::fieldChanged);
    addField({key, c, [c, key](QJsonObject& o) { setAt(o, key, c->currentData().toString()); },
              [this, c, key](const QJsonObject& o, QStringList* notes) {
                  if (!hasAt(o, key)) return;
                  const QJsonValue v = valueAt(o, key);
                  const QString want = v.isArray() ? stringsOf(v).value(0) : v.toString();
                  const int i = c->findData(want);
                  const QString name = key.section(QLatin1Char('/'), -1);
                  // Until the machine is known, its probe decides.
                  if (i >= 0 && (itemEnabled(c, i) || !capsKnown_))
                      c->setCurrentIndex(i);
                  else if (notes && i < 0)
                      *notes << tr("%1 '%2' is not known here; keeping %3")
                                    .arg(name, want, c->currentData().toString());
                  else if (notes)
                      *notes << tr("%1 '%2' is not available here (%3); using %4")
                                    .arg(name, want, c->itemData(i, Qt::ToolTipRole).toString(),
                                         c->currentData().toString());
              }});
    return c;
}

QCheckBox* LabPanel::addCheck(QFormLayout* form, const QString& key, const QString& text,
                              bool value, const QString& tip) {
    auto* cb = new QCheckBox(text, this);
    cb->setChecked(value);
    cb->setToolTip(tip);
    if (form) form->addRow(QString(), cb);
    connect(cb, &QCheckBox::toggled, this, &LabPanel::fieldChanged);
    addField({key, cb, [cb, key](QJsonObject& o) { setAt(o, key, cb->isChecked()); },
              [cb, key](const QJsonObject& o, QStringList*) {
                  if (hasAt(o, key)) cb->setChecked(valueAt(o, key).toBool());
              }});
    return cb;
}

QGroupBox* LabPanel::addChecks(QFormLayout* form, const QString& key, const QString& label,
                               const QList<Choice>& choices, const QStringList& ticked,
                               int perRow) {
    auto* group = new QGroupBox(this);
    group->setFlat(true);
    auto* grid = new QGridLayout(group);
    grid->setContentsMargins(0, 0, 0, 0);
    auto& boxes = checkRows_[key];
    int i = 0;
    for (const Choice& ch : choices) {
        auto* cb = new QCheckBox(ch.text, group);
        cb->setToolTip(ch.tip);
        cb->setChecked(ticked.contains(ch.data));
        boxes.push_back({ch.data, cb});
        grid->addWidget(cb, perRow > 0 ? i / perRow : 0, perRow > 0 ? i % perRow : i);
        connect(cb, &QCheckBox::toggled, this, &LabPanel::fieldChanged);
        ++i;
    }
    grid->setColumnStretch(perRow > 0 ? perRow : i, 1);
    if (form) form->addRow(label, group);
    addField({key, group,
              [this, key](QJsonObject& o) {
                  setAt(o, key, QJsonArray::fromStringList(this->ticked(key)));
              },
              [this, key](const QJsonObject& o, QStringList* notes) {
                  if (!hasAt(o, key)) return;
                  const QStringList wanted = stringsOf(valueAt(o, key));
                  for (const auto& [data, cb] : checkRows_.value(key))
                      cb->setChecked(wanted.contains(data));
                  for (const QString& w : wanted)
                      if (!checkBox(key, w) && notes)
                          *notes << tr("%1 '%2' is not known here; left out").arg(key, w);
              }});
    return group;
}

QCheckBox* LabPanel::checkBox(const QString& key, const QString& data) const {
    for (const auto& [d, cb] : checkRows_.value(key))
        if (d == data) return cb;
    return nullptr;
}

QStringList LabPanel::ticked(const QString& key) const {
    QStringList out;
    for (const auto& [data, cb] : checkRows_.value(key))
        if (cb->isChecked()) out << data;
    return out;
}

QComboBox* LabPanel::addDevice(QFormLayout* form, const QString& label) {
    makeDeviceCombo(this);
    if (form) form->addRow(label, device_);
    connect(device_, &QComboBox::currentIndexChanged, this, &LabPanel::fieldChanged);
    addField({QStringLiteral("device"), device_,
              [this](QJsonObject& o) {
                  o[QStringLiteral("device")] = device_->currentData().toString();
              },
              [this](const QJsonObject& o, QStringList* notes) {
                  if (!o.contains(QLatin1String("device"))) return;
                  const QString dev = o.value(QLatin1String("device")).toString();
                  const int i = device_->findData(dev);
                  if (i >= 0 && itemEnabled(device_, i)) {
                      device_->setCurrentIndex(i);
                  } else if (capsKnown_ && dev != device_->currentData().toString()) {
                      if (notes)
                          *notes << tr("device '%1' is not available here; using %2")
                                        .arg(dev, device_->currentData().toString());
                  } else if (!capsKnown_ && i < 0) {
                      // Not probed yet: keep the wish, the probe decides.
                      device_->addItem(dev, dev);
                      device_->setCurrentIndex(device_->count() - 1);
                  }
              }});
    return device_;
}

CodeChoice* LabPanel::addCode(QVBoxLayout* outer, bool both, CodeChoice::Purpose purpose) {
    auto* code = new CodeChoice(both, this, purpose);
    outer->addWidget(code);
    connect(code, &CodeChoice::changed, this, &LabPanel::fieldChanged);
    registerFields({{QStringLiteral("code"), code->codeEdit()},
                    {QStringLiteral("python"), code->pythonEdit()}});
    // A state saved before the field has no "sources": TrainScope's model, no code.
    addField({QStringLiteral("sources"), code->sourceBox(),
              [code](QJsonObject& o) {
                  const QJsonObject c = code->state();
                  for (auto it = c.begin(); it != c.end(); ++it) o[it.key()] = it.value();
              },
              [code](const QJsonObject& o, QStringList*) { code->setState(o); }});
    return code;
}

void LabPanel::addDimensions(const DimensionFields& dims) {
    for (const auto& [dim, edit] : dims.edits()) {
        const QString key = dimensionKey(dim);
        connect(edit, &QLineEdit::textChanged, this, &LabPanel::fieldChanged);
        addField({key, edit, [edit, key](QJsonObject& o) { o[key] = edit->text(); },
                  [edit, key](const QJsonObject& o, QStringList*) {
                      if (o.contains(key)) edit->setText(o.value(key).toString());
                  }});
    }
}

QString LabPanel::labelText() const { return label_ ? label_->text().trimmed() : QString(); }

QStringList LabPanel::leftOut(const QJsonObject& state, const QString& key, bool afterHint) const {
    QStringList out;
    if (!capsKnown_) return out;
    for (const QString& w : stringsOf(valueAt(state, key)))
        if (QCheckBox* cb = checkBox(key, w); cb && !cb->isChecked())
            out << tr("%1 left out: %2")
                       .arg(w, afterHint ? cb->toolTip().section(QLatin1Char('\n'), 1)
                                         : cb->toolTip());
    return out;
}

void LabPanel::stateLoaded(const QJsonObject&, QStringList*) {}

QString LabPanel::summary() const {
    if (!problems_.isEmpty())
        return tr("%n problem(s) to fix before Run", "", static_cast<int>(problems_.size()));
    return runSummary();
}

LabJob LabPanel::newJob(const char* lab, const std::string& device, int points) const {
    LabJob job;
    job.lab = QString::fromLatin1(lab);
    job.label = labelText();
    job.point_count = points;
    job.device = device;
    job.environment = [device] { return currentEnvironment(device); };
    return job;
}

void LabPanel::fieldChanged() {
    if (updating_) return;
    updateAvailability();
    revalidate();
}

QJsonObject LabPanel::state() const {
    QJsonObject o;
    for (const Field& f : registry_)
        if (f.save) f.save(o);
    return o;
}

void LabPanel::setState(const QJsonObject& o, QStringList* notes) {
    updating_ = true;
    for (const Field& f : registry_)
        if (f.load && !f.late) f.load(o, notes);
    updateAvailability();
    for (const Field& f : registry_)
        if (f.load && f.late) f.load(o, notes);
    stateLoaded(o, notes);
    updateAvailability();
    updating_ = false;
    revalidate();
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
