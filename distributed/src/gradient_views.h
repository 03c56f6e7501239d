// Private to distributed/: gradients as views into a strategy's flat buffers, and how they get
// there (See Note [gradients as bucket views]; See Note [a bucket's gradients in one copy] in
// ddp.cpp), for the bucketed strategies and zero1's flat buffers alike.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace ts::dist {

// TRAINSCOPE_DDP_FILL=add: the old fill, each gradient its zeroed view from backward's start and
// AccumulateGrad adding into it; timed against the default by scripts/ddp-overhead-evidence.sh.
inline bool fillByAdding() {
    const char* v = std::getenv("TRAINSCOPE_DDP_FILL");
    return v && std::string(v) == "add";
}

// The gradients of params[i] for i in `members` put into views[i]: the ones backward left as
// tensors of their own in one batched copy (_foreach_copy_: a launch or two on a GPU), the slots
// of parameters backward gave none zeroed; every gradient its view after. Returns how many were
// copied.
inline int gradientsIntoViews(const std::vector<at::Tensor>& params,
                              const std::vector<at::Tensor>& views,
                              const std::vector<int>& members) {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> into, from;
    for (int member : members) {
        const auto i = static_cast<size_t>(member);
        at::Tensor& g = const_cast<at::Tensor&>(params[i]).mutable_grad();
        if (g.defined() && g.is_same(views[i])) continue;
        if (g.defined()) {
            into.push_back(views[i]);
            from.push_back(g);
        } else {
            views[i].zero_();
        }
        g = views[i];
    }
    if (!into.empty()) at::_foreach_copy_(into, from);
    return static_cast<int>(into.size());
}

// Every parameter's gradient dropped, so that AccumulateGrad keeps the one backward gives.
inline void dropGradients(const std::vector<at::Tensor>& params) {
    for (const auto& p : params) const_cast<at::Tensor&>(p).mutable_grad() = at::Tensor();
}

}  // namespace ts::dist
