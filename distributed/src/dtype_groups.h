// Private to distributed/: parameters grouped by dtype and device, for flat buffers (one buffer
// holds one dtype).
#pragma once

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace ts::dist {

// The indices `members` of `params` grouped by (dtype, device), groups in order of first
// appearance, each group in the order of `members`.
inline std::vector<std::vector<int>> groupByDtype(const std::vector<at::Tensor>& params,
                                                  const std::vector<int>& members) {
    std::vector<std::vector<int>> groups;
    std::vector<std::pair<at::ScalarType, at::Device>> keys;
    for (int i : members) {
        const auto& p = params[static_cast<size_t>(i)];
        const std::pair<at::ScalarType, at::Device> key{p.scalar_type(), p.device()};
        auto it = std::find(keys.begin(), keys.end(), key);
        if (it == keys.end()) {
            keys.push_back(key);
            groups.emplace_back();
            it = keys.end() - 1;
        }
        groups[static_cast<size_t>(it - keys.begin())].push_back(i);
    }
    return groups;
}

inline std::vector<std::vector<int>> groupByDtype(const std::vector<at::Tensor>& params) {
    std::vector<int> all(params.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return groupByDtype(params, all);
}

}  // namespace ts::dist
