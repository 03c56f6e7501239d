// The distributed lab's runner with the trained parameters handed back (LibTorch side; the
// tests compare them with one process training the whole global batch).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "distributed/distributed.h"

namespace ts {

// runDdpRank, and this rank's parameters after the last step in `final_parameters`.
std::vector<DdpStepRow> runDdpRank(const DdpSpec& spec, dist::Group& group,
                                   const std::function<void(const DdpStepRow&)>& on_step,
                                   const CancelToken& cancel,
                                   std::vector<at::Tensor>& final_parameters);

}  // namespace ts
