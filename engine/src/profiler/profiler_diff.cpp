// Two profiles' kernel (or op) tables compared (See Note [profile diff] in profiler.h).
// Torch-free.
#include <algorithm>
#include <cmath>
#include <map>

#include "profiler/profiler.h"

namespace ts {

int profiledStepCount(const ProfileResult& r) {
    int n = 0;
    for (const auto& s : r.steps) n += s.warmup ? 0 : 1;
    if (n == 0) n = r.spec.profile_steps;
    return std::max(1, n);
}

namespace {

struct DiffSide {
    double us = 0, calls = 0;
    Category category = Category::Other;
};

// A profile's rows by name, per profiled step.
std::map<std::string, DiffSide> diffSide(const ProfileResult& r, bool kernels) {
    const double steps = profiledStepCount(r);
    std::map<std::string, DiffSide> out;
    if (kernels) {
        for (const auto& k : kernelTable(r.trace.kernels, {}))
            out[k.name] = {k.total_us / steps, static_cast<double>(k.instances) / steps,
                           k.category};
    } else {
        for (const auto& o : opTable(r.trace.ops, {}, r.gpu))
            out[o.name] = {o.cpu_self_us / steps, static_cast<double>(o.calls) / steps,
                           categorize(o.name)};
    }
    return out;
}

}  // namespace

ProfileDiff diffProfiles(const ProfileResult& a, const ProfileResult& b) {
    ProfileDiff d;
    d.kernels = !a.trace.kernels.empty() && !b.trace.kernels.empty();
    d.a_steps = profiledStepCount(a);
    d.b_steps = profiledStepCount(b);
    const auto sa = diffSide(a, d.kernels), sb = diffSide(b, d.kernels);
    for (const auto& [name, x] : sa) {
        ProfileDiffRow row;
        row.name = name;
        row.category = x.category;
        row.in_a = true;
        row.a_us = x.us;
        row.a_calls = x.calls;
        if (auto it = sb.find(name); it != sb.end()) {
            row.in_b = true;
            row.b_us = it->second.us;
            row.b_calls = it->second.calls;
            if (row.a_us > 0) row.ratio = row.b_us / row.a_us;
        } else {
            row.note = "only in A";
        }
        d.rows.push_back(std::move(row));
    }
    for (const auto& [name, x] : sb) {
        if (sa.count(name)) continue;
        ProfileDiffRow row;
        row.name = name;
        row.category = x.category;
        row.in_b = true;
        row.b_us = x.us;
        row.b_calls = x.calls;
        row.note = "only in B";
        d.rows.push_back(std::move(row));
    }
    for (auto& row : d.rows) {
        row.delta_us = row.b_us - row.a_us;
        d.a_total_us += row.a_us;
        d.b_total_us += row.b_us;
    }
    std::stable_sort(d.rows.begin(), d.rows.end(), [](const auto& x, const auto& y) {
        return std::abs(x.delta_us) > std::abs(y.delta_us);
    });
    return d;
}

}  // namespace ts
