// Autocast for one device type for the lifetime of a scope, as Python's torch.autocast.
#pragma once

#include <ATen/autocast_mode.h>

#include "core/config.h"

namespace ts {

class AutocastScope {
public:
    AutocastScope(at::DeviceType type, Precision p) : type_(type) {
        if (p == Precision::FP32) return;  // fp32: autocast stays off
        active_ = true;
        prev_enabled_ = at::autocast::is_autocast_enabled(type);
        prev_dtype_ = at::autocast::get_autocast_dtype(type);
        at::autocast::set_autocast_enabled(type, true);
        at::autocast::set_autocast_dtype(type, p == Precision::BF16 ? at::kBFloat16 : at::kHalf);
        at::autocast::increment_nesting();
    }
    ~AutocastScope() {
        if (!active_) return;
        // Casts of the weights are cached for the scope; drop them with it.
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        at::autocast::set_autocast_enabled(type_, prev_enabled_);
        at::autocast::set_autocast_dtype(type_, prev_dtype_);
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    at::DeviceType type_;
    bool active_ = false, prev_enabled_ = false;
    at::ScalarType prev_dtype_ = at::kFloat;
};

}  // namespace ts
