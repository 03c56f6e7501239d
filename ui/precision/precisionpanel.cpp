#include "ui/precision/precisionpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "runtime/environment.h"
#include "ui/common/checkrow.h"
#include "ui/common/format.h"
#include "ui/precision/precisionmodels.h"

namespace ts::ui {

namespace {

// The engine's observer, forwarded to the job's: progress and log lines as they come.
class Forwarder final : public Observer {
public:
    explicit Forwarder(JobObserver& out) : out_(out) {}
    void progress(double fraction, double eta) override { out_.progress(fraction, eta); }
    void log(LogLevel level, const std::string& message) override { out_.log(level, message); }

private:
    JobObserver& out_;
};

const QList<Precision> kTrainPrecisions = {Precision::FP32, Precision::BF16, Precision::FP16};

QString g17(double v) { return QString::number(v, 'g', 17); }

}  // namespace

QString PrecisionPanel::studyKey(Study s) {
    switch (s) {
        case Study::Accumulate:
            return QStringLiteral("accumulate");
        case Study::Autocast:
            return QStringLiteral("autocast");
        case Study::Train:
            return QStringLiteral("train");
    }
    return {};
}

PrecisionPanel::PrecisionPanel(QWidget* parent) : LabPanel(parent) {
    registerPrecisionMetaTypes();
    build();
    revalidate();
}

void PrecisionPanel::build() {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    auto* top = new QFormLayout;
    label_ = new QLineEdit(this);
    label_->setPlaceholderText(tr("optional; shown in the log and exports"));
    study_ = new QComboBox(this);
    study_->addItem(tr("accumulation: a sum in low precision"), studyKey(Study::Accumulate));
    study_->addItem(tr("autocast inspector: the dtypes of a model"), studyKey(Study::Autocast));
    study_->addItem(tr("training numerics: fp32, bf16, fp16 with loss scaling"),
                    studyKey(Study::Train));
    study_->setToolTip(tr("Which of the precision lab's three experiments runs"));
    top->addRow(tr("&Label:"), label_);
    top->addRow(tr("&Study:"), study_);
    outer->addLayout(top);

    pages_ = new QStackedWidget(this);
    // Accumulation.
    auto* acc = new QGroupBox(tr("Accumulation"), pages_);
    auto* af = new QFormLayout(acc);
    addend_ = new QLineEdit(acc);
    addend_->setToolTip(tr("What is added at every step (stored in each variant's addend format)"));
    count_ = new QLineEdit(acc);
    count_->setToolTip(tr("How many times it is added (1..%1)").arg(kMaxAccumulationCount));
    accFormats_ = new QGroupBox(acc);
    accFormats_->setFlat(true);
    auto* fr = new QHBoxLayout(accFormats_);
    fr->setContentsMargins(0, 0, 0, 0);
    auto* fp32 = new QCheckBox(QStringLiteral("fp32"), accFormats_);
    fp32->setChecked(true);
    fp32->setEnabled(false);
    fp32->setToolTip(tr("The fp32 sum is always computed: the others are read against it"));
    accFp16_ = new QCheckBox(QStringLiteral("fp16"), accFormats_);
    accFp16_->setToolTip(tr(
        "fp16 += fp16, fp32 += fp16 and fp32 += fp16 with an explicit cast (the course's four)"));
    accBf16_ = new QCheckBox(QStringLiteral("bf16"), accFormats_);
    accBf16_->setToolTip(tr("The same three sums in bf16"));
    fr->addWidget(fp32);
    fr->addWidget(accFp16_);
    fr->addWidget(accBf16_);
    fr->addStretch();
    checkTorch_ = new QCheckBox(tr("recompute each sum with LibTorch tensors"), acc);
    af->addRow(tr("&Addend:"), addend_);
    af->addRow(tr("&Count:"), count_);
    af->addRow(tr("Formats:"), accFormats_);
    af->addRow(QString(), checkTorch_);
    pages_->addWidget(acc);
    // Autocast inspector.
    auto* cast = new QGroupBox(tr("Autocast inspector"), pages_);
    auto* cf = new QFormLayout(cast);
    model_ = new QComboBox(cast);
    model_->addItem(tr("toy (Linear → ReLU → LayerNorm → Linear)"), QStringLiteral("toy"));
    for (const std::string& n : modelPresetNames())
        model_->addItem(tr("LM %1").arg(qstr(n)), qstr(n));
    castDtype_ = new QComboBox(cast);
    for (Precision p : {Precision::BF16, Precision::FP16})
        castDtype_->addItem(qstr(toString(p)), qstr(toString(p)));
    castDtype_->setToolTip(tr("The dtype autocast casts to"));
    inFeatures_ = new QSpinBox(cast);
    outFeatures_ = new QSpinBox(cast);
    batch_ = new QSpinBox(cast);
    context_ = new QSpinBox(cast);
    for (QSpinBox* s : {inFeatures_, outFeatures_, batch_, context_}) s->setRange(0, 65536);
    context_->setToolTip(tr("The LM's context length"));
    cf->addRow(tr("&Model:"), model_);
    cf->addRow(tr("Autocast &dtype:"), castDtype_);
    cf->addRow(tr("&In features:"), inFeatures_);
    cf->addRow(tr("&Out features:"), outFeatures_);
    cf->addRow(tr("&Batch:"), batch_);
    cf->addRow(tr("Conte&xt length:"), context_);
    pages_->addWidget(cast);
    // Training numerics.
    auto* train = new QGroupBox(tr("Training numerics"), pages_);
    auto* tf = new QFormLayout(train);
    trainPrecisionBox_ = makeCheckRow(train, kTrainPrecisions, trainPrecisions_);
    steps_ = new QLineEdit(train);
    steps_->setToolTip(tr("Optimizer steps per precision (1..%1)").arg(kMaxTrainNumericsSteps));
    lr_ = new QLineEdit(train);
    lr_->setToolTip(tr("AdamW's learning rate"));
    initScale_ = new QLineEdit(train);
    initScale_->setToolTip(
        tr("The fp16 loss scaler's first scale (PyTorch's default 65536); a huge one shows "
           "overflow and skipped steps"));
    trainBatch_ = new QSpinBox(train);
    trainBatch_->setRange(0, 65536);
    tf->addRow(tr("&Precisions:"), trainPrecisionBox_);
    tf->addRow(tr("&Steps:"), steps_);
    tf->addRow(tr("Learning &rate:"), lr_);
    tf->addRow(tr("Initial loss &scale:"), initScale_);
    tf->addRow(tr("Batc&h:"), trainBatch_);
    pages_->addWidget(train);
    outer->addWidget(pages_);

    auto* runBox = new QGroupBox(tr("Execution"), this);
    auto* rform = new QFormLayout(runBox);
    makeDeviceCombo(runBox);
    rform->addRow(tr("D&evice:"), device_);
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);

    registerFields({{QStringLiteral("study"), study_},
                    {QStringLiteral("addend"), addend_},
                    {QStringLiteral("count"), count_},
                    {QStringLiteral("formats"), accFormats_},
                    {QStringLiteral("model"), model_},
                    {QStringLiteral("autocast_dtype"), castDtype_},
                    {QStringLiteral("in_features"), inFeatures_},
                    {QStringLiteral("out_features"), outFeatures_},
                    {QStringLiteral("batch"), batch_},
                    {QStringLiteral("context"), context_},
                    {QStringLiteral("precisions"), trainPrecisionBox_},
                    {QStringLiteral("steps"), steps_},
                    {QStringLiteral("lr"), lr_},
                    {QStringLiteral("init_scale"), initScale_},
                    {QStringLiteral("train_batch"), trainBatch_},
                    {QStringLiteral("device"), device_}});

    // Defaults: the engine's, which are the course's.
    const AccumulationSpec a;
    addend_->setText(g17(a.addend));
    count_->setText(QString::number(a.count));
    accFp16_->setChecked(a.fp16);
    accBf16_->setChecked(a.bf16);
    checkTorch_->setChecked(a.check_torch);
    const AutocastSpec c;
    inFeatures_->setValue(static_cast<int>(c.in_features));
    outFeatures_->setValue(static_cast<int>(c.out_features));
    batch_->setValue(static_cast<int>(c.batch));
    context_->setValue(static_cast<int>(c.context_length));
    const TrainNumericsSpec t;
    for (Precision p : t.precisions) trainPrecisions_[p]->setChecked(true);
    steps_->setText(QString::number(t.steps));
    lr_->setText(g17(t.lr));
    initScale_->setText(g17(t.init_scale));
    trainBatch_->setValue(static_cast<int>(t.batch));

    auto changed = [this] {
        if (updating_) return;
        updateAvailability();
        revalidate();
    };
    for (QLineEdit* e : {label_, addend_, count_, steps_, lr_, initScale_})
        connect(e, &QLineEdit::textChanged, this, changed);
    for (QCheckBox* cb : {accFp16_, accBf16_, checkTorch_})
        connect(cb, &QCheckBox::toggled, this, changed);
    for (auto* cb : trainPrecisions_) connect(cb, &QCheckBox::toggled, this, changed);
    for (QSpinBox* sb : {inFeatures_, outFeatures_, batch_, context_, trainBatch_})
        connect(sb, &QSpinBox::valueChanged, this, changed);
    for (QComboBox* cb : {study_, model_, castDtype_, device_})
        connect(cb, &QComboBox::currentIndexChanged, this, changed);
    installRunShortcut();
    setLabelField(label_);
    updateAvailability();
}

PrecisionPanel::Study PrecisionPanel::study() const {
    const QString k = study_->currentData().toString();
    if (k == studyKey(Study::Autocast)) return Study::Autocast;
    if (k == studyKey(Study::Train)) return Study::Train;
    return Study::Accumulate;
}

void PrecisionPanel::updateAvailability() {
    const bool was = updating_;
    updating_ = true;
    const Study s = study();
    pages_->setCurrentIndex(static_cast<int>(s));
    // The sums are computed on the CPU whatever the device: the device field says so.
    const bool deviceMatters = s != Study::Accumulate;
    device_->setEnabled(deviceMatters);
    const bool lm = model_->currentData().toString() != QLatin1String("toy");
    for (QSpinBox* sb : {inFeatures_, outFeatures_}) sb->setEnabled(!lm);
    context_->setEnabled(lm);
    // What the chosen device cannot compute in is disabled, with the engine's reason.
    const std::string device = device_->currentData().toString().toStdString();
    auto why = [&](Precision p) -> QString {
        if (!capsKnown_ || p == Precision::FP32) return {};
        QStringList msgs;
        for (const auto& m : checkRunnable(RunNeeds{device, {p}, {}})) msgs << qstr(m);
        return msgs.join(QLatin1Char('\n'));
    };
    auto* castModel = qobject_cast<QStandardItemModel*>(castDtype_->model());
    for (int i = 0; i < castDtype_->count(); ++i) {
        const QString reason =
            why(*parsePrecision(castDtype_->itemData(i).toString().toStdString()));
        if (castModel) castModel->item(i)->setEnabled(reason.isEmpty());
        castDtype_->setItemData(i, reason.isEmpty() ? QVariant() : QVariant(reason),
                                Qt::ToolTipRole);
    }
    if (castModel && !castModel->item(castDtype_->currentIndex())->isEnabled())
        for (int i = 0; i < castDtype_->count(); ++i)
            if (castModel->item(i)->isEnabled()) castDtype_->setCurrentIndex(i);
    for (Precision p : kTrainPrecisions) {
        const QString reason = why(p);
        QCheckBox* cb = trainPrecisions_[p];
        cb->setEnabled(reason.isEmpty());
        cb->setToolTip(reason);
        if (!reason.isEmpty()) cb->setChecked(false);
    }
    updating_ = was;
}

void PrecisionPanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    auto add = [&](QWidget* w, const QString& m) {
        if (w && !byField[w].contains(m))
            byField[w] << m;
        else if (!w && !general.contains(m))
            general << m;
    };
    // Map the engine's words to the field they name.
    auto route = [&](const std::vector<std::string>& errors,
                     const QList<QPair<QString, QWidget*>>& keys) {
        for (const auto& e : errors) {
            const QString msg = qstr(e);
            QWidget* target = nullptr;
            for (const auto& [k, w] : keys)
                if (msg.contains(k)) {
                    target = w;
                    break;
                }
            if (target && byField.contains(target)) continue;  // already flagged as unparsable
            add(target, msg);
        }
    };
    auto parseDouble = [&](QLineEdit* e, const QString& what, double* out) {
        bool ok = false;
        const double v = e->text().trimmed().toDouble(&ok);
        if (!ok)
            add(e, tr("%1: '%2' is not a number").arg(what, e->text().trimmed()));
        else
            *out = v;
    };
    auto parseInt = [&](QLineEdit* e, const QString& what, int64_t* out) {
        bool ok = false;
        const qlonglong v = e->text().trimmed().toLongLong(&ok);
        if (!ok)
            add(e, tr("%1: '%2' is not a whole number").arg(what, e->text().trimmed()));
        else
            *out = v;
    };
    const std::string device = device_->currentData().toString().toStdString();
    switch (study()) {
        case Study::Accumulate: {
            AccumulationSpec s;
            parseDouble(addend_, tr("Addend"), &s.addend);
            parseInt(count_, tr("Count"), &s.count);
            s.fp16 = accFp16_->isChecked();
            s.bf16 = accBf16_->isChecked();
            s.check_torch = checkTorch_->isChecked();
            route(validateAccumulationSpec(s),
                  {{QStringLiteral("addend"), addend_}, {QStringLiteral("count"), count_}});
            accumulation_ = s;
            break;
        }
        case Study::Autocast: {
            AutocastSpec s;
            s.model = model_->currentData().toString().toStdString();
            s.dtype = parsePrecision(castDtype_->currentData().toString().toStdString())
                          .value_or(Precision::BF16);
            s.device = device;
            s.in_features = inFeatures_->value();
            s.out_features = outFeatures_->value();
            s.batch = batch_->value();
            s.context_length = context_->value();
            route(validateAutocastSpec(s), {{QStringLiteral("model"), model_},
                                            {QStringLiteral("autocast dtype"), castDtype_},
                                            {QStringLiteral("device"), device_},
                                            {QStringLiteral("in features"), inFeatures_},
                                            {QStringLiteral("out features"), outFeatures_},
                                            {QStringLiteral("batch"), batch_},
                                            {QStringLiteral("context length"), context_}});
            if (capsKnown_) {
                std::vector<std::string> runnable = checkRunnable(RunNeeds{device, {s.dtype}, {}});
                route(runnable, {{QStringLiteral("device '"), device_}, {QString(), castDtype_}});
            }
            autocast_ = s;
            break;
        }
        case Study::Train: {
            TrainNumericsSpec s;
            s.precisions.clear();
            for (Precision p : kTrainPrecisions)
                if (trainPrecisions_[p]->isChecked()) s.precisions.push_back(p);
            int64_t steps = s.steps;
            parseInt(steps_, tr("Steps"), &steps);
            // Beyond an int the engine's spec cannot hold the value to name it: say it here.
            if (steps < 1 || steps > kMaxTrainNumericsSteps)
                add(steps_, tr("steps %1 is not in 1..%2").arg(steps).arg(kMaxTrainNumericsSteps));
            else
                s.steps = static_cast<int>(steps);
            parseDouble(lr_, tr("Learning rate"), &s.lr);
            parseDouble(initScale_, tr("Initial loss scale"), &s.init_scale);
            s.batch = trainBatch_->value();
            s.device = device;
            route(validateTrainNumericsSpec(s), {{QStringLiteral("precision"), trainPrecisionBox_},
                                                 {QStringLiteral("steps"), steps_},
                                                 {QStringLiteral("learning rate"), lr_},
                                                 {QStringLiteral("loss scale"), initScale_},
                                                 {QStringLiteral("batch"), trainBatch_},
                                                 {QStringLiteral("device"), device_}});
            if (capsKnown_)
                route(checkRunnable(RunNeeds{device, s.precisions, {}}),
                      {{QStringLiteral("device '"), device_}, {QString(), trainPrecisionBox_}});
            train_ = s;
            break;
        }
    }
    showProblems(byField, general);
    // showProblems() puts each valid field's registered tooltip back: add why a field is
    // disabled or unused here.
    const bool lm = model_->currentData().toString() != QLatin1String("toy");
    const QList<QPair<QWidget*, QString>> reasons = {
        {device_, study() == Study::Accumulate ? tr("The sums are computed on the CPU (the "
                                                    "arithmetic here and LibTorch's CPU tensors)")
                                               : tr("Where the model runs")},
        {inFeatures_,
         lm ? tr("The toy model's size; an LM has its own") : tr("The toy model's input features")},
        {outFeatures_,
         lm ? tr("The toy model's size; an LM has its own") : tr("The toy model's classes")},
        {context_, lm ? tr("The LM's context length") : tr("Only an LM has a context length")}};
    for (const auto& [w, tip] : reasons)
        if (!byField.contains(w)) w->setToolTip(tip);
    Q_EMIT changed();
}

QString PrecisionPanel::summary() const {
    if (!problems_.isEmpty())
        return tr("%n problem(s) to fix before Run", "", static_cast<int>(problems_.size()));
    switch (study()) {
        case Study::Accumulate:
            return tr("%1 sums of %2 × %3")
                .arg(accumulationVariants(accumulation_.fp16, accumulation_.bf16).size())
                .arg(accumulation_.count)
                .arg(g17(accumulation_.addend));
        case Study::Autocast:
            return tr("autocast %1 of the %2 model on %3")
                .arg(qstr(toString(autocast_.dtype)), qstr(autocast_.model),
                     qstr(autocast_.device));
        case Study::Train: {
            QStringList p;
            for (Precision x : train_.precisions) p << qstr(toString(x));
            return tr("%1 steps in %2 on %3")
                .arg(train_.steps)
                .arg(p.join(QStringLiteral(", ")), qstr(train_.device));
        }
    }
    return {};
}

std::optional<LabJob> PrecisionPanel::makeJob() const {
    if (!problems_.isEmpty() || !capsKnown_) return std::nullopt;
    LabJob job;
    job.lab = QString::fromLatin1(kPrecisionLab);
    job.label = label_->text().trimmed();
    switch (study()) {
        case Study::Accumulate: {
            job.point_count = static_cast<int>(
                accumulationVariants(accumulation_.fp16, accumulation_.bf16).size());
            job.device = "cpu";
            job.spec_json = accumulationSpecJson(accumulation_);
            job.run = [spec = accumulation_](JobObserver& obs, const CancelToken&,
                                             ResultStore* store, int64_t runId) {
                Forwarder forward(obs);
                for (const AccumulationResult& r : runAccumulation(spec, forward, store, runId)) {
                    obs.log(LogLevel::Info, r.variant.name() + ": " +
                                                QString::number(r.value, 'f', 4).toStdString());
                    obs.item(QVariant::fromValue(r));
                }
            };
            break;
        }
        case Study::Autocast: {
            job.point_count = 1;
            job.device = autocast_.device;
            job.spec_json = autocastSpecJson(autocast_);
            job.run = [spec = autocast_](JobObserver& obs, const CancelToken&, ResultStore* store,
                                         int64_t runId) {
                Forwarder forward(obs);
                const AutocastReport report = runAutocastInspector(spec, forward, store, runId);
                obs.log(LogLevel::Info,
                        "autocast: " + std::to_string(report.records.size()) + " tensors recorded");
                obs.item(QVariant::fromValue(report));
            };
            break;
        }
        case Study::Train: {
            job.point_count = static_cast<int>(train_.precisions.size());
            job.device = train_.device;
            job.spec_json = trainNumericsSpecJson(train_);
            job.run = [spec = train_](JobObserver& obs, const CancelToken& cancel,
                                      ResultStore* store, int64_t runId) {
                Forwarder forward(obs);
                for (const TrainNumericsCurve& c :
                     runTrainNumerics(spec, forward, cancel, store, runId)) {
                    obs.log(LogLevel::Info,
                            std::string(toString(c.precision)) + ": " +
                                std::string(toString(c.status)) +
                                (c.steps.empty()
                                     ? std::string()
                                     : ", final loss " +
                                           QString::number(c.finalLoss(), 'f', 4).toStdString()));
                    obs.item(QVariant::fromValue(c));
                }
            };
            break;
        }
    }
    const std::string device = job.device;
    job.environment = [device] { return currentEnvironment(device); };
    return job;
}

QJsonObject PrecisionPanel::state() const {
    QJsonObject o;
    o[QStringLiteral("label")] = label_->text();
    o[QStringLiteral("study")] = study_->currentData().toString();
    o[QStringLiteral("addend")] = addend_->text();
    o[QStringLiteral("count")] = count_->text();
    QJsonArray formats;
    if (accFp16_->isChecked()) formats << QStringLiteral("fp16");
    if (accBf16_->isChecked()) formats << QStringLiteral("bf16");
    o[QStringLiteral("formats")] = formats;
    o[QStringLiteral("check_torch")] = checkTorch_->isChecked();
    o[QStringLiteral("model")] = model_->currentData().toString();
    o[QStringLiteral("autocast_dtype")] = castDtype_->currentData().toString();
    o[QStringLiteral("in_features")] = inFeatures_->value();
    o[QStringLiteral("out_features")] = outFeatures_->value();
    o[QStringLiteral("batch")] = batch_->value();
    o[QStringLiteral("context")] = context_->value();
    QJsonArray precisions;
    for (Precision p : kTrainPrecisions)
        if (trainPrecisions_[p]->isChecked()) precisions << qstr(toString(p));
    o[QStringLiteral("precisions")] = precisions;
    o[QStringLiteral("steps")] = steps_->text();
    o[QStringLiteral("lr")] = lr_->text();
    o[QStringLiteral("init_scale")] = initScale_->text();
    o[QStringLiteral("train_batch")] = trainBatch_->value();
    o[QStringLiteral("device")] = device_->currentData().toString();
    return o;
}

void PrecisionPanel::setState(const QJsonObject& o, QStringList* notes) {
    updating_ = true;
    auto has = [&](const char* k) { return o.contains(QLatin1String(k)); };
    auto val = [&](const char* k) { return o.value(QLatin1String(k)); };
    auto text = [&](const char* k, QLineEdit* e) {
        if (has(k)) e->setText(val(k).isDouble() ? g17(val(k).toDouble()) : val(k).toString());
    };
    auto spin = [&](const char* k, QSpinBox* s) {
        if (has(k)) s->setValue(val(k).toInt());
    };
    auto combo = [&](const char* k, QComboBox* c, const QString& what) {
        if (!has(k)) return;
        const int i = c->findData(val(k).toString());
        if (i >= 0)
            c->setCurrentIndex(i);
        else if (notes)
            *notes << tr("%1 '%2' is not one of this panel's; kept %3")
                          .arg(what, val(k).toString(), c->currentData().toString());
    };
    if (has("label")) label_->setText(val("label").toString());
    combo("study", study_, tr("experiment"));
    text("addend", addend_);
    text("count", count_);
    if (has("formats")) {
        const QStringList f = stringsOf(val("formats"));
        accFp16_->setChecked(f.contains(QStringLiteral("fp16")));
        accBf16_->setChecked(f.contains(QStringLiteral("bf16")));
    }
    if (has("check_torch")) checkTorch_->setChecked(val("check_torch").toBool());
    combo("model", model_, tr("model"));
    spin("in_features", inFeatures_);
    spin("out_features", outFeatures_);
    spin("batch", batch_);
    spin("context", context_);
    const QStringList wanted = stringsOf(val("precisions"));
    if (has("precisions"))
        for (Precision p : kTrainPrecisions)
            trainPrecisions_[p]->setChecked(wanted.contains(qstr(toString(p))));
    text("steps", steps_);
    text("lr", lr_);
    text("init_scale", initScale_);
    spin("train_batch", trainBatch_);
    if (has("device")) {
        const QString dev = val("device").toString();
        auto* model = qobject_cast<QStandardItemModel*>(device_->model());
        const int i = device_->findData(dev);
        if (i >= 0 && (!model || model->item(i)->isEnabled()))
            device_->setCurrentIndex(i);
        else if (notes && capsKnown_)
            *notes << tr("device '%1' is not available here; using %2")
                          .arg(dev, device_->currentData().toString());
    }
    // The dtype after the device: what the device cannot compute in is disabled first.
    const QString castWanted = val("autocast_dtype").toString();
    updateAvailability();
    combo("autocast_dtype", castDtype_, tr("autocast dtype"));
    auto* castModel = qobject_cast<QStandardItemModel*>(castDtype_->model());
    const int ci = castDtype_->findData(castWanted);
    if (has("autocast_dtype") && ci >= 0 && castModel && !castModel->item(ci)->isEnabled()) {
        updateAvailability();  // moves off the disabled dtype
        if (notes && capsKnown_)
            *notes << tr("%1 left out: %2")
                          .arg(castWanted, castDtype_->itemData(ci, Qt::ToolTipRole).toString());
    }
    if (notes && capsKnown_)
        for (Precision p : kTrainPrecisions)
            if (wanted.contains(qstr(toString(p))) && !trainPrecisions_[p]->isChecked())
                *notes
                    << tr("%1 left out: %2").arg(qstr(toString(p)), trainPrecisions_[p]->toolTip());
    updating_ = false;
    revalidate();
}

// ---------------------------------------------------------------- stored specs

QString PrecisionPanel::describeSpec(const QJsonObject& s) {
    const QString command = s.value(QLatin1String("command")).toString();
    const QString dot = QStringLiteral(" · ");
    if (command == QLatin1String("precision accumulate")) {
        QStringList formats{QStringLiteral("fp32")};
        if (s.value(QLatin1String("fp16")).toBool()) formats << QStringLiteral("fp16");
        if (s.value(QLatin1String("bf16")).toBool()) formats << QStringLiteral("bf16");
        return QObject::tr("accumulation: %1 × %2")
                   .arg(s.value(QLatin1String("count")).toInteger())
                   .arg(g17(s.value(QLatin1String("addend")).toDouble())) +
               dot + formats.join(QStringLiteral(", "));
    }
    if (command == QLatin1String("precision autocast"))
        return QObject::tr("autocast: %1 model").arg(s.value(QLatin1String("model")).toString()) +
               dot + s.value(QLatin1String("dtype")).toString() + dot +
               s.value(QLatin1String("device")).toString();
    if (command == QLatin1String("precision train"))
        return QObject::tr("training: %1")
                   .arg(jsonListText(s.value(QLatin1String("precisions")))
                            .join(QStringLiteral(", "))) +
               dot + QObject::tr("%1 steps").arg(s.value(QLatin1String("steps")).toInteger()) +
               dot + QObject::tr("lr %1").arg(g17(s.value(QLatin1String("lr")).toDouble())) + dot +
               QObject::tr("loss scale %1")
                   .arg(g17(s.value(QLatin1String("init_scale")).toDouble())) +
               dot + s.value(QLatin1String("device")).toString();
    return QObject::tr("precision run (%1)")
        .arg(command.isEmpty() ? QObject::tr("unknown experiment") : command);
}

QJsonObject PrecisionPanel::stateFromSpec(const QJsonObject& s) {
    const QString command = s.value(QLatin1String("command")).toString();
    QJsonObject o;
    auto copy = [&](const char* from, const char* to) {
        if (s.contains(QLatin1String(from))) o[QLatin1String(to)] = s.value(QLatin1String(from));
    };
    if (command == QLatin1String("precision accumulate")) {
        o[QStringLiteral("study")] = studyKey(Study::Accumulate);
        o[QStringLiteral("addend")] = g17(s.value(QLatin1String("addend")).toDouble());
        o[QStringLiteral("count")] = QString::number(s.value(QLatin1String("count")).toInteger());
        QJsonArray formats;
        if (s.value(QLatin1String("fp16")).toBool()) formats << QStringLiteral("fp16");
        if (s.value(QLatin1String("bf16")).toBool()) formats << QStringLiteral("bf16");
        o[QStringLiteral("formats")] = formats;
    } else if (command == QLatin1String("precision autocast")) {
        o[QStringLiteral("study")] = studyKey(Study::Autocast);
        copy("model", "model");
        copy("dtype", "autocast_dtype");
        copy("in_features", "in_features");
        copy("out_features", "out_features");
        copy("batch", "batch");
        copy("context_length", "context");
        copy("device", "device");
    } else if (command == QLatin1String("precision train")) {
        o[QStringLiteral("study")] = studyKey(Study::Train);
        copy("precisions", "precisions");
        o[QStringLiteral("steps")] = QString::number(s.value(QLatin1String("steps")).toInteger());
        o[QStringLiteral("lr")] = g17(s.value(QLatin1String("lr")).toDouble());
        o[QStringLiteral("init_scale")] = g17(s.value(QLatin1String("init_scale")).toDouble());
        copy("batch", "train_batch");
        copy("device", "device");
    }
    return o;
}

}  // namespace ts::ui
