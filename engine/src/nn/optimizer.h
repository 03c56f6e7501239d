// AdamW and fp16 loss scaling over LibTorch's fused kernels: one multi-tensor launch for
// the whole model instead of a dozen kernels per parameter (torch::optim::AdamW's loop).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

namespace ts {

class FusedAdamW {
public:
    FusedAdamW(std::vector<at::Tensor> params, double lr, double beta1 = 0.9, double beta2 = 0.999,
               double eps = 1e-8, double weight_decay = 0.01);
    // With grad_scale, gradients are divided by it inside the kernel; with found_inf set
    // (non-zero), the step is skipped. Parameters without a gradient are left alone.
    void step(const std::optional<at::Tensor>& grad_scale = std::nullopt,
              const std::optional<at::Tensor>& found_inf = std::nullopt);
    // Drops the gradients (set to none, as PyTorch's zero_grad does by default).
    void zeroGrad();
    int64_t stepCount() const { return steps_taken_; }
    // Sets the host's count of steps: a CUDA graph's replay steps on the device (the counters
    // in state(), which the fused kernel reads) without passing through step().
    void setStepCount(int64_t steps) { steps_taken_ = steps; }
    // AdamW's state: both moments and the step counters (empty before the first step).
    std::vector<at::Tensor> state() const;
    // Low-precision copies of the parameters (one slot per parameter, undefined where there is
    // none): where set, the gradient is the copy's and step() writes the updated parameter into
    // the copy too, in our fused kernel (see Note [low-precision weight copies] in
    // kernels/src/fused_ops.cu). Not with a loss scaler.
    void setLowPrecisionCopies(std::vector<at::Tensor> copies);

private:
    std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_, state_step_, copies_;
    double lr_, beta1_, beta2_, eps_, weight_decay_;
    int64_t steps_taken_ = 0;
};

// Dynamic loss scaling for fp16 training (PyTorch's GradScaler defaults: 2^16, ×2 after
// 2000 clean steps, ×0.5 on overflow).
class GradScaler {
public:
    explicit GradScaler(const at::TensorOptions& options, double init_scale = 65536.0);
    at::Tensor scale(const at::Tensor& loss) const;
    // Checks the gradients for inf/NaN, steps (skipping on overflow) and updates the scale.
    void step(FusedAdamW& optimizer, const std::vector<at::Tensor>& params);
    double currentScale() const;

private:
    at::Tensor scale_, growth_tracker_, found_inf_, one_;
};

}  // namespace ts
