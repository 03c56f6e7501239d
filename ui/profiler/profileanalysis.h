// What the Profile view shows of one profile, computed where it is cheap to wait: in the run's
// worker thread (live runs) or a pool thread (stored runs), never on the UI thread. A 2.7B
// model's step has about a hundred thousand kernels; sorting them into timeline lanes and
// summing them into tables takes longer than a frame.
#pragma once

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "profiler/profiler.h"

namespace ts::ui {

// One rectangle of the timeline: times in µs from the trace's first event.
struct TimelineSpan {
    double start_us = 0, end_us = 0;
    int name = 0;    // index into Timeline::names
    int colour = 0;  // a phase (CPU ranges and ops) or a category (GPU kernels)
};

// One row: a depth of one CPU thread's ranges, its top-level ops, or one GPU stream.
struct TimelineLane {
    QString label;
    bool gpu = false;
    std::vector<TimelineSpan> spans;  // sorted by start
    std::vector<double> max_end;      // running maximum of the ends: finds the visible ones
    // The first span that may show in [from, ..): ends before it all lie left of `from`.
    size_t firstVisible(double from_us) const;
};

struct Timeline {
    std::vector<QString> names;
    std::vector<TimelineLane> lanes;  // CPU lanes first, then GPU streams
    int64_t origin_ns = 0;
    double end_us = 0;
    int spanCount() const;
};

// A span of the timeline whose name holds the search text: the timeline's search.
struct TimelineMatch {
    int lane = 0;
    size_t span = 0;  // index into the lane's spans
    double start_us = 0, end_us = 0;
};
// Every span (CPU ranges, top-level ops, GPU kernels) whose name holds `text`, case-insensitively,
// in time order (ties: lane order); none for an empty text.
std::vector<TimelineMatch> findSpans(const Timeline& timeline, const QString& text);

// The profile with everything the panes show. Tables are of the whole profile; the view
// computes filtered ones (phase, range) in a pool thread.
struct ProfileAnalysis {
    std::shared_ptr<const ProfileResult> result;
    std::vector<KernelRow> kernels;
    std::vector<OpRow> ops;
    std::vector<CategoryRow> categories;
    std::vector<PhaseTime> phases;
    std::vector<AttentionPart> attention;
    std::vector<StepActivity> activity;
    QStringList ranges;  // every component of the events' range paths, in model order
    std::shared_ptr<const Timeline> timeline;
    std::shared_ptr<const CallTree> calltree;
};

ProfileAnalysis analyzeProfile(ProfileResult result);

// The model's range names in the order a layer runs them: "embedding", "layer.0" ...
// "layer.11", "attention", "mlp", ... (numbers compared as numbers).
bool rangeNameLess(const QString& a, const QString& b);

// The tables of one phase and range, for the view's filters.
struct FilteredTables {
    std::vector<KernelRow> kernels;
    std::vector<OpRow> ops;
};
FilteredTables filteredTables(const ProfileResult& r, const EventFilter& filter);

}  // namespace ts::ui

// The steps travel as StepSample items, declared with the shared types (common/metatypes.h).
Q_DECLARE_METATYPE(ts::ui::ProfileAnalysis)
