// Process groups from torch's c10d: NCCL on GPUs, Gloo on the CPU, rendezvous through a
// TCPStore (rank 0 serves it). A local launch names the port; torchrun or srun name it in the
// usual environment (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK).
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace ts::dist {

enum class CommBackend { Gloo, Nccl };

const char* backendName(CommBackend backend);
// "gloo" or "nccl"; nullopt for anything else.
std::optional<CommBackend> parseBackend(const std::string& name);

struct GroupSpec {
    CommBackend backend = CommBackend::Gloo;
    int rank = 0;
    int world_size = 1;
    int local_rank = 0;  // the GPU this rank uses (NCCL)
    std::string master_addr = "127.0.0.1";
    int master_port = 0;
    std::chrono::milliseconds timeout{std::chrono::seconds(120)};
};

// The group as torchrun or srun describe it in the environment; throws std::invalid_argument
// naming the variable that is missing or not a number. SLURM_PROCID / SLURM_NTASKS /
// SLURM_LOCALID stand in for RANK / WORLD_SIZE / LOCAL_RANK under srun.
GroupSpec groupSpecFromEnvironment(CommBackend backend);

// A TCP port on loopback that nothing listens on now (the kernel's choice), for a local
// rendezvous. Another process could take it before rank 0 binds it; the launcher retries then.
int freeLoopbackPort();

// Whether this build can make NCCL groups (a CUDA LibTorch with c10d's NCCL backend).
bool ncclBuilt();

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
