// Process groups from torch's c10d: NCCL on GPUs, Gloo on the CPU, rendezvous through a
// TCPStore (rank 0 serves it). What a group is made from is group_spec.h (torch-free).
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "trainscope/distributed/group_spec.h"

namespace ts::dist {

struct Group {
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::Backend> backend;
    int rank = 0;
    int world_size = 1;
};

// Connects to (rank 0: serves) the TCPStore and makes the backend. Throws std::runtime_error
// with the rank and the reason when the rendezvous or the backend fails (a timeout among them).
Group makeGroup(const GroupSpec& spec);

}  // namespace ts::dist
