#include "nn/optimizer.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "trainscope/kernels/fused_ops.h"

namespace ts {

FusedAdamW::FusedAdamW(std::vector<at::Tensor> params, double lr, double beta1, double beta2,
                       double eps, double weight_decay)
    : params_(std::move(params)),
      lr_(lr),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay) {}

void FusedAdamW::step(const std::optional<at::Tensor>& grad_scale,
                      const std::optional<at::Tensor>& found_inf) {
    if (exp_avg_.empty()) {  // state created on the first step, as PyTorch does
        for (const auto& p : params_) {
            exp_avg_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
            exp_avg_sq_.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
            state_step_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
        }
    }
    std::vector<at::Tensor> p, g, m, v, s, c;
    for (size_t i = 0; i < params_.size(); ++i) {
        const at::Tensor copy = copies_.empty() ? at::Tensor() : copies_[i];
        const at::Tensor& grad = copy.defined() ? copy.grad() : params_[i].grad();
        if (!grad.defined()) continue;
        p.push_back(params_[i]);
        g.push_back(grad);
        m.push_back(exp_avg_[i]);
        v.push_back(exp_avg_sq_[i]);
        s.push_back(state_step_[i]);
        c.push_back(copy);
    }
    if (p.empty()) return;
    at::NoGradGuard no_grad;
    // The fused kernel reads the step count; PyTorch's optimizer advances it beforehand.
    at::_foreach_add_(s, 1);
    if (!copies_.empty()) {
        TORCH_CHECK(!grad_scale && !found_inf,
                    "low-precision weight copies are not updated under a loss scaler");
        kernels::adamWStep(p, g, m, v, s, c, {lr_, beta1_, beta2_, eps_, weight_decay_});
    } else {
        at::_fused_adamw_(p, g, m, v, /*max_exp_avg_sqs=*/{}, s, lr_, beta1_, beta2_, weight_decay_,
                          eps_,
                          /*amsgrad=*/false, /*maximize=*/false, grad_scale, found_inf);
    }
    ++steps_taken_;
}

void FusedAdamW::setLowPrecisionCopies(std::vector<at::Tensor> copies) {
    TORCH_CHECK(copies.empty() || copies.size() == params_.size(), "one copy slot per parameter");
    copies_ = std::move(copies);
}

std::vector<at::Tensor> FusedAdamW::state() const {
    std::vector<at::Tensor> all(exp_avg_);
    all.insert(all.end(), exp_avg_sq_.begin(), exp_avg_sq_.end());
    all.insert(all.end(), state_step_.begin(), state_step_.end());
    return all;
}

void FusedAdamW::zeroGrad() {
    for (auto& p : params_) p.mutable_grad() = at::Tensor();
    for (auto& c : copies_)
        if (c.defined()) c.mutable_grad() = at::Tensor();
}

GradScaler::GradScaler(const at::TensorOptions& options, double init_scale) {
    auto f32 = options.dtype(at::kFloat);
    scale_ = at::full({}, init_scale, f32);
    growth_tracker_ = at::zeros({}, options.dtype(at::kInt));
    found_inf_ = at::zeros({}, f32);
    one_ = at::ones({}, f32);
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const {
    return loss * scale_.to(loss.scalar_type());
}

void GradScaler::step(FusedAdamW& optimizer, const std::vector<at::Tensor>& params) {
    std::vector<at::Tensor> grads;
    for (const auto& p : params)
        if (p.grad().defined()) grads.push_back(p.grad());
    found_inf_.zero_();
    // inv_scale 1: only look for inf/NaN here; the fused step divides by the scale itself.
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, one_);
    optimizer.step(scale_, found_inf_);
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, 2.0, 0.5, 2000);
}

double GradScaler::currentScale() const { return scale_.item<double>(); }

}  // namespace ts
