// A ring all-reduce written on c10d's point-to-point send and recv, the algorithm the course
// (§8.1) and nccl-tests' bus bandwidth describe: a reduce-scatter of N−1 steps, then an
// all-gather of N−1 steps, each rank sending one chunk of 1/N of the tensor a step to the next
// rank of the ring and receiving one from the previous. It moves 2·(N−1)/N of the tensor's
// bytes out of each rank, which is what the planner's W is measured against.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

#include "trainscope/distributed/process_group.h"

namespace ts::dist {

// Chunk `c` of `n` over `elements`: [first, first + count), sizes differing by at most one
// (the first elements % n chunks are one longer); some are empty when elements < n.
std::pair<int64_t, int64_t> ringChunk(int64_t elements, int n, int c);

// Sums `tensor` (contiguous, on the group's device) over the group's ranks, in place, with
// send/recv only. Every rank calls it with a tensor of the same size and dtype. The partial
// sums are added in the tensor's dtype, in ring order: chunk c is summed starting from rank
// c + 1. Throws std::invalid_argument for a tensor that is not contiguous, std::runtime_error
// naming the step when a send or receive fails.
void ringAllReduce(Group& group, at::Tensor& tensor);

}  // namespace ts::dist
