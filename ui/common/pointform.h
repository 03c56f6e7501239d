// The fields of one training point (core/point.h) as a lab's panel asks for it: the model size
// (a preset, or custom dimensions), context, batch, mode, precision, attention and the point's
// other dimensions, declared once (see Note [declared fields]) for the profiler's and the memory
// lab's panels; the benchmark's panel shares the custom dimensions. The panel keeps its device,
// warm-up, code and its own fields.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QStringList>
#include <memory>

#include "core/point.h"
#include "ui/common/labpanel.h"

class QComboBox;
class QFormLayout;
class QGroupBox;
class QSpinBox;

namespace ts::ui {

class DimensionFields;

// A model's own dimensions ("custom/vocab" ... in the state), in a group of their own.
struct CustomModelFields {
    QGroupBox* box = nullptr;
    QSpinBox *vocab = nullptr, *dModel = nullptr, *dFf = nullptr, *layers = nullptr,
             *heads = nullptr;
    void applyTo(ModelConfig& m) const;
    // The field an engine message names (vocab_size, d_model, num_heads, ...), or null.
    QWidget* fieldFor(const QString& message) const;
};

class PointForm {
public:
    struct Options {
        bool custom = false;      // a "custom" size with its dimensions
        bool probe = false;       // what the device cannot run disabled, with the engine's reason
        bool dimensions = false;  // the point's other dimensions (checkpointing), a value each
        QList<AttentionImpl> attentions = {AttentionImpl::Naive, AttentionImpl::Sdpa,
                                           AttentionImpl::Tiled, AttentionImpl::Flash};
    };
    PointForm(LabPanel* panel, QFormLayout* form, const Options& options);
    ~PointForm();

    static CustomModelFields addCustomModel(LabPanel* panel, QWidget* parent);

    // The point the fields make, on the panel's device (warm-up, steps and source are the
    // panel's); a dimension that does not parse adds its problem under its field.
    PointConfig point(QHash<QWidget*, QStringList>& problems) const;
    // The field of this form an engine message names, or null.
    QWidget* fieldFor(const QString& message) const;
    // With `probe`: each precision and attention tried on the panel's device with a tiny point.
    void updateAvailability();
    QComboBox* attention() const { return attention_; }

    // A point's JSON (core/point_json.h) as the form's state, with the panel's "device",
    // "warmup" and code fields.
    static QJsonObject stateFromPoint(const QJsonObject& point, bool dimensions);

private:
    LabPanel* panel_;
    Options options_;
    QComboBox *size_, *mode_, *precision_, *attention_;
    QSpinBox *context_, *batch_;
    CustomModelFields custom_;
    std::unique_ptr<DimensionFields> dims_;
};

}  // namespace ts::ui
