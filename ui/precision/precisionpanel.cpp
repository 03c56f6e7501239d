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
#include "ui/common/format.h"
#include "ui/precision/precisionmodels.h"

namespace ts::ui {

namespace {

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
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    QFormLayout* top = addLabelRow(outer, tr("optional; shown in the log and exports"));
    study_ = addCombo(
        top, QStringLiteral("study"), tr("&Study:"),
        {{tr("accumulation: a sum in low precision"), studyKey(Study::Accumulate), {}},
         {tr("autocast inspector: the dtypes of a model"), studyKey(Study::Autocast), {}},
         {tr("training numerics: fp32, bf16, fp16 with loss scaling"), studyKey(Study::Train), {}}},
        studyKey(Study::Accumulate), tr("Which of the precision lab's three experiments runs"));
    pages_ = new QStackedWidget(this);

    // Accumulation; the defaults are the engine's, which are the course's.
    const AccumulationSpec a;
    auto* acc = new QGroupBox(tr("Accumulation"), pages_);
    auto* af = new QFormLayout(acc);
    addend_ = addText(af, QStringLiteral("addend"), tr("&Addend:"), g17(a.addend),
                      tr("What is added at every step (stored in each variant's addend format)"));
    count_ = addText(af, QStringLiteral("count"), tr("&Count:"), QString::number(a.count),
                     tr("How many times it is added (1..%1)").arg(kMaxAccumulationCount));
    QStringList formats{QStringLiteral("fp32")};
    if (a.fp16) formats << QStringLiteral("fp16");
    if (a.bf16) formats << QStringLiteral("bf16");
    accFormats_ = addChecks(
        af, QStringLiteral("formats"), tr("Formats:"),
        {{QStringLiteral("fp32"), QStringLiteral("fp32"),
          tr("The fp32 sum is always computed: the others are read against it")},
         {QStringLiteral("fp16"), QStringLiteral("fp16"),
          tr("fp16 += fp16, fp32 += fp16 and fp32 += fp16 with an explicit cast (the course's "
             "four)")},
         {QStringLiteral("bf16"), QStringLiteral("bf16"), tr("The same three sums in bf16")}},
        formats);
    checkBox(QStringLiteral("formats"), QStringLiteral("fp32"))->setEnabled(false);
    field(QStringLiteral("formats")).save = [this](QJsonObject& o) {
        QStringList f = ticked(QStringLiteral("formats"));
        f.removeAll(QStringLiteral("fp32"));  // always computed
        o[QStringLiteral("formats")] = QJsonArray::fromStringList(f);
    };
    accFp16_ = checkBox(QStringLiteral("formats"), QStringLiteral("fp16"));
    accBf16_ = checkBox(QStringLiteral("formats"), QStringLiteral("bf16"));
    checkTorch_ = addCheck(af, QStringLiteral("check_torch"),
                           tr("recompute each sum with LibTorch tensors"), a.check_torch);
    pages_->addWidget(acc);

    // Autocast inspector.
    const AutocastSpec c;
    auto* cast = new QGroupBox(tr("Autocast inspector"), pages_);
    auto* cf = new QFormLayout(cast);
    QList<Choice> models{
        {tr("toy (Linear → ReLU → LayerNorm → Linear)"), QStringLiteral("toy"), {}}};
    for (const std::string& n : modelPresetNames())
        models.push_back({tr("LM %1").arg(qstr(n)), qstr(n), {}});
    model_ = addCombo(cf, QStringLiteral("model"), tr("&Model:"), models, QStringLiteral("toy"));
    castDtype_ = addCombo(cf, QStringLiteral("autocast_dtype"), tr("Autocast &dtype:"),
                          choicesOf(QList<Precision>{Precision::BF16, Precision::FP16}),
                          QStringLiteral("bf16"), tr("The dtype autocast casts to"));
    field(QStringLiteral("autocast_dtype")).late = true;  // what the device computes in
    auto spin = [&](const char* key, const QString& label, int64_t value) {
        return addSpin(cf, QLatin1String(key), label, 0, 65536, static_cast<int>(value));
    };
    inFeatures_ = spin("in_features", tr("&In features:"), c.in_features);
    outFeatures_ = spin("out_features", tr("&Out features:"), c.out_features);
    batch_ = spin("batch", tr("&Batch:"), c.batch);
    context_ = spin("context", tr("Conte&xt length:"), c.context_length);
    context_->setToolTip(tr("The LM's context length"));
    registerFields({{QStringLiteral("context"), context_}});  // with its tooltip
    pages_->addWidget(cast);

    // Training numerics.
    const TrainNumericsSpec t;
    auto* train = new QGroupBox(tr("Training numerics"), pages_);
    auto* tf = new QFormLayout(train);
    QStringList precisions;
    for (Precision p : t.precisions) precisions << qstr(toString(p));
    trainPrecisionBox_ = addChecks(tf, QStringLiteral("precisions"), tr("&Precisions:"),
                                   choicesOf(kTrainPrecisions), precisions);
    for (Precision p : kTrainPrecisions)
        trainPrecisions_[p] = checkBox(QStringLiteral("precisions"), qstr(toString(p)));
    steps_ = addText(tf, QStringLiteral("steps"), tr("&Steps:"), QString::number(t.steps),
                     tr("Optimizer steps per precision (1..%1)").arg(kMaxTrainNumericsSteps));
    lr_ = addText(tf, QStringLiteral("lr"), tr("Learning &rate:"), g17(t.lr),
                  tr("AdamW's learning rate"));
    initScale_ =
        addText(tf, QStringLiteral("init_scale"), tr("Initial loss &scale:"), g17(t.init_scale),
                tr("The fp16 loss scaler's first scale (PyTorch's default 65536); a huge "
                   "one shows overflow and skipped steps"));
    trainBatch_ = addSpin(tf, QStringLiteral("train_batch"), tr("Batc&h:"), 0, 65536,
                          static_cast<int>(t.batch));
    pages_->addWidget(train);
    outer->addWidget(pages_);

    auto* runBox = new QGroupBox(tr("Execution"), this);
    addDevice(new QFormLayout(runBox), tr("D&evice:"));
    outer->addWidget(runBox);
    outer->addStretch();
    addStatusLabels(outer);
    installRunShortcut();
    updateAvailability();
    revalidate();
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

QString PrecisionPanel::runSummary() const {
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
    LabJob job = newJob(kPrecisionLab, "cpu", 1);
    switch (study()) {
        case Study::Accumulate: {
            job.point_count = static_cast<int>(
                accumulationVariants(accumulation_.fp16, accumulation_.bf16).size());
            job.device = "cpu";
            job.spec_json = accumulationSpecJson(accumulation_);
            job.run = [spec = accumulation_](JobObserver& obs, const CancelToken&,
                                             ResultStore* store, int64_t runId) {
                for (const AccumulationResult& r : runAccumulation(spec, obs, store, runId)) {
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
                const AutocastReport report = runAutocastInspector(spec, obs, store, runId);
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
                for (const TrainNumericsCurve& c :
                     runTrainNumerics(spec, obs, cancel, store, runId)) {
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
    job.environment = [device = job.device] { return currentEnvironment(device); };
    return job;
}

void PrecisionPanel::stateLoaded(const QJsonObject& o, QStringList* notes) {
    checkBox(QStringLiteral("formats"), QStringLiteral("fp32"))->setChecked(true);
    // What the device cannot compute in was dropped (updateAvailability): said so.
    if (notes) *notes << leftOut(o, QStringLiteral("precisions"), false);
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
