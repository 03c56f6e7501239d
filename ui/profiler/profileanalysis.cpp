#include "ui/profiler/profileanalysis.h"

#include <QHash>
#include <QSet>
#include <algorithm>
#include <map>

#include "ui/common/format.h"

namespace ts::ui {

size_t TimelineLane::firstVisible(double from_us) const {
    return static_cast<size_t>(std::lower_bound(max_end.begin(), max_end.end(), from_us) -
                               max_end.begin());
}

int Timeline::spanCount() const {
    size_t n = 0;
    for (const auto& l : lanes) n += l.spans.size();
    return static_cast<int>(n);
}

bool rangeNameLess(const QString& a, const QString& b) {
    // "layer.2" before "layer.10"; plain names in the order a step meets them.
    static const QStringList order = {
        QStringLiteral("forward"),   QStringLiteral("loss"),      QStringLiteral("backward"),
        QStringLiteral("optimizer"), QStringLiteral("embedding"), QStringLiteral("layer"),
        QStringLiteral("norm"),      QStringLiteral("attention"), QStringLiteral("scores"),
        QStringLiteral("softmax"),   QStringLiteral("values"),    QStringLiteral("mlp"),
        QStringLiteral("lm_head")};
    auto key = [&](const QString& s) {
        const QString stem = s.section(QLatin1Char('.'), 0, 0);
        bool ok = false;
        const int n = s.section(QLatin1Char('.'), 1).toInt(&ok);
        const int rank = order.indexOf(stem);
        return std::tuple(rank < 0 ? order.size() : rank, stem, ok ? n : -1, s);
    };
    return key(a) < key(b);
}

namespace {

struct PhaseSpan {
    int64_t start_ns, end_ns;
    int phase;  // 0 forward, 1 backward, 2 optimizer
};

// Lanes of one thread's nested events: an event goes to the first depth where it does not
// overlap the last one placed there (ranges nest, so this is their depth).
void placeNested(std::vector<const ProfiledRange*> events, const QString& label, int64_t origin,
                 Timeline& t, QHash<QString, int>& names, const std::vector<PhaseSpan>& phases) {
    std::sort(events.begin(), events.end(), [](auto* a, auto* b) {
        return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
    });
    std::vector<TimelineLane> depth;
    std::vector<int64_t> lastEnd;
    for (const ProfiledRange* e : events) {
        size_t d = 0;
        while (d < lastEnd.size() && lastEnd[d] > e->start_ns) ++d;
        if (d == lastEnd.size()) {
            lastEnd.push_back(0);
            depth.push_back({});
            depth.back().label = depth.size() == 1 ? label : QString();
        }
        lastEnd[d] = e->end_ns;
        const QString n = qstr(e->name);
        auto it = names.find(n);
        if (it == names.end()) {
            it = names.insert(n, static_cast<int>(t.names.size()));
            t.names.push_back(n);
        }
        int colour = 3;  // other
        for (const PhaseSpan& p : phases)
            if (e->start_ns >= p.start_ns && e->start_ns < p.end_ns) colour = p.phase;
        depth[d].spans.push_back(
            {(e->start_ns - origin) / 1e3, (e->end_ns - origin) / 1e3, *it, colour});
    }
    for (auto& l : depth) t.lanes.push_back(std::move(l));
}

std::shared_ptr<const Timeline> buildTimeline(const ProfileResult& r) {
    auto t = std::make_shared<Timeline>();
    const AttributedTrace& tr = r.trace;
    int64_t origin = INT64_MAX, end = INT64_MIN;
    for (const auto& e : tr.ranges)
        origin = std::min(origin, e.start_ns), end = std::max(end, e.end_ns);
    for (const auto& e : tr.ops)
        origin = std::min(origin, e.start_ns), end = std::max(end, e.end_ns);
    for (const auto& k : tr.kernels)
        origin = std::min(origin, k.start_ns), end = std::max(end, k.start_ns + k.duration_ns);
    if (origin == INT64_MAX) return t;
    t->origin_ns = origin;
    t->end_us = (end - origin) / 1e3;
    QHash<QString, int> names;
    // The phase ranges colour what starts inside them: forward, backward, optimizer.
    std::vector<PhaseSpan> phaseSpans;
    for (const auto& e : tr.ranges) {
        const int p = e.name == "forward"     ? 0
                      : e.name == "backward"  ? 1
                      : e.name == "optimizer" ? 2
                                              : -1;
        if (p < 0) continue;
        phaseSpans.push_back({e.start_ns, e.end_ns, p});
    }
    // CPU: per thread (in order of first event) its ranges by depth, then its top-level ops.
    std::map<uint64_t, int64_t> firstSeen;
    for (const auto& e : tr.ranges) {
        auto [it, fresh] = firstSeen.emplace(e.thread, e.start_ns);
        if (!fresh) it->second = std::min(it->second, e.start_ns);
    }
    for (const auto& o : tr.ops) {
        auto [it, fresh] = firstSeen.emplace(o.thread, o.start_ns);
        if (!fresh) it->second = std::min(it->second, o.start_ns);
    }
    std::vector<std::pair<int64_t, uint64_t>> threads;
    for (const auto& [thread, first] : firstSeen) threads.push_back({first, thread});
    std::sort(threads.begin(), threads.end());
    std::vector<ProfiledRange> opRanges;  // top-level ops as ranges, to place them alike
    opRanges.reserve(tr.ops.size());
    for (const auto& o : tr.ops)
        if (o.top_level) opRanges.push_back({o.name, o.thread, o.start_ns, o.end_ns});
    int cpuIndex = 0;
    for (const auto& [first, thread] : threads) {
        const QString name =
            cpuIndex == 0 ? QObject::tr("CPU main") : QObject::tr("CPU thread %1").arg(cpuIndex);
        ++cpuIndex;
        std::vector<const ProfiledRange*> ranges, ops;
        for (const auto& e : tr.ranges)
            if (e.thread == thread) ranges.push_back(&e);
        for (const auto& e : opRanges)
            if (e.thread == thread) ops.push_back(&e);
        if (!ranges.empty())
            placeNested(ranges, name + QObject::tr(" ranges"), origin, *t, names, phaseSpans);
        if (!ops.empty())
            placeNested(ops, name + QObject::tr(" ops"), origin, *t, names, phaseSpans);
    }
    // GPU: one lane per stream, coloured by category.
    std::map<int64_t, TimelineLane> streams;
    for (const auto& k : tr.kernels) {
        TimelineLane& l = streams[k.stream];
        const QString n = qstr(k.name);
        auto it = names.find(n);
        if (it == names.end()) {
            it = names.insert(n, static_cast<int>(t->names.size()));
            t->names.push_back(n);
        }
        l.spans.push_back({(k.start_ns - origin) / 1e3, (k.start_ns + k.duration_ns - origin) / 1e3,
                           *it, static_cast<int>(categorize(k.name))});
    }
    for (auto& [stream, l] : streams) {
        l.label = QObject::tr("GPU stream %1").arg(stream);
        l.gpu = true;
        std::sort(l.spans.begin(), l.spans.end(),
                  [](const auto& a, const auto& b) { return a.start_us < b.start_us; });
        t->lanes.push_back(std::move(l));
    }
    for (auto& l : t->lanes) {
        l.max_end.resize(l.spans.size());
        double m = -1e300;
        for (size_t i = 0; i < l.spans.size(); ++i)
            l.max_end[i] = m = std::max(m, l.spans[i].end_us);
    }
    return t;
}

}  // namespace

std::vector<TimelineMatch> findSpans(const Timeline& timeline, const QString& text) {
    std::vector<TimelineMatch> out;
    if (text.isEmpty()) return out;
    // The names first (a few thousand), then the spans that carry a matching one.
    std::vector<char> named(timeline.names.size(), 0);
    bool any = false;
    for (size_t i = 0; i < timeline.names.size(); ++i)
        any |= (named[i] = timeline.names[i].contains(text, Qt::CaseInsensitive) ? 1 : 0) != 0;
    if (!any) return out;
    for (size_t l = 0; l < timeline.lanes.size(); ++l) {
        const auto& spans = timeline.lanes[l].spans;
        for (size_t i = 0; i < spans.size(); ++i)
            if (named[static_cast<size_t>(spans[i].name)])
                out.push_back({static_cast<int>(l), i, spans[i].start_us, spans[i].end_us});
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.start_us != b.start_us ? a.start_us < b.start_us : a.lane < b.lane;
    });
    return out;
}

FilteredTables filteredTables(const ProfileResult& r, const EventFilter& filter) {
    return {kernelTable(r.trace.kernels, filter), opTable(r.trace.ops, filter, r.gpu)};
}

ProfileAnalysis analyzeProfile(ProfileResult result) {
    ProfileAnalysis a;
    auto r = std::make_shared<const ProfileResult>(std::move(result));
    a.result = r;
    const FilteredTables all = filteredTables(*r, {});
    a.kernels = all.kernels;
    a.ops = all.ops;
    a.categories = categoryRollup(*r);
    a.phases = phaseTimes(*r);
    a.attention = attentionBreakdown(*r);
    a.activity = stepActivity(*r);
    QSet<QString> seen;
    std::string last;
    auto addPath = [&](const std::string& path) {
        if (path.empty() || path == last) return;
        last = path;
        for (const QString& part : qstr(path).split(QLatin1Char('/'), Qt::SkipEmptyParts))
            seen.insert(part);
    };
    for (const auto& k : r->trace.kernels) addPath(k.range);
    for (const auto& o : r->trace.ops) addPath(o.range);
    a.ranges = QStringList(seen.begin(), seen.end());
    std::sort(a.ranges.begin(), a.ranges.end(), rangeNameLess);
    a.timeline = buildTimeline(*r);
    a.calltree = std::make_shared<const CallTree>(callTree(r->trace));
    return a;
}

}  // namespace ts::ui
