// Classroom presets: ready experiments compiled in from resources/presets/*.json. A preset
// holds a panel state (the same format the panel saves), an optional smaller state for
// machines without a GPU, and which view to show.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace ts::ui {

struct ClassroomPreset {
    QString id;             // file name without .json
    QString title;          // "Warm-up matters"
    QString description;    // what to look at, for the teacher
    QString experiment;     // panel id, "bench"
    QJsonObject config;     // panel state
    QJsonObject cpuConfig;  // overrides when no CUDA device is present
    int order = 100;        // position in the menu
    // Runs on a CUDA device (or NCCL ranks) and has no CPU variant: on a machine without a GPU
    // it is disabled with the reason rather than loaded to run for minutes and show nothing.
    bool gpuOnly() const;
    QJsonObject
        view;  // {"tab": "speedup", "dimension": "precision", "baseline": "fp32", "x": "size"}
};

// Registers the compiled-in resources (presets, icon); safe to call again.
void ensureResources();

// Every preset in `dir` (default: the compiled-in ones), ordered by their "order" field.
QList<ClassroomPreset> loadPresets(const QString& dir = QStringLiteral(":/presets"));
std::optional<ClassroomPreset> findPreset(const QString& id);
// A preset from a JSON file; nullopt with `error` set when it is not one.
std::optional<ClassroomPreset> readPreset(const QString& path, QString* error = nullptr);
// Why a gpuOnly() preset cannot load on a machine without a CUDA device, in one sentence.
QString gpuOnlyReason(const ClassroomPreset& preset);

}  // namespace ts::ui
