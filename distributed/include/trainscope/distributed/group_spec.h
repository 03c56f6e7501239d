// What a process group is made from, torch-free (the launcher's, the CLI's and the window's
// headers include it; process_group.h makes the group). A local launch names the port;
// torchrun or srun name it in the usual environment (MASTER_ADDR, MASTER_PORT, RANK,
// WORLD_SIZE, LOCAL_RANK).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace ts::dist {

enum class CommBackend { Gloo, Nccl };

const char* backendName(CommBackend backend);
// "gloo" or "nccl"; nullopt for anything else.
std::optional<CommBackend> parseBackend(const std::string& name);

// Whether this build can make NCCL groups (a CUDA LibTorch with c10d's NCCL backend).
bool ncclBuilt();

struct GroupSpec {
    CommBackend backend = CommBackend::Gloo;
    int rank = 0;
    int world_size = 1;
    int local_rank = 0;  // the GPU this rank uses (NCCL)
    std::string master_addr = "127.0.0.1";
    int master_port = 0;
    std::chrono::milliseconds timeout{std::chrono::seconds(120)};
    // How long the rendezvous may take (every rank reaching rank 0's store); past it makeGroup
    // gives up with a message (a port held by another program, ranks that never come).
    std::chrono::milliseconds rendezvous_timeout{std::chrono::seconds(60)};
};

// The most ranks a group may have (torchrun's or srun's WORLD_SIZE included).
inline constexpr int kMaxWorldSize = 4096;

// The group as torchrun or srun describe it in the environment; throws std::invalid_argument
// naming the variable that is missing, not a number, or out of range (WORLD_SIZE above
// kMaxWorldSize, a MASTER_ADDR that does not resolve). TRAINSCOPE_RENDEZVOUS_TIMEOUT (seconds)
// sets the rendezvous's limit. SLURM_PROCID / SLURM_NTASKS /
// SLURM_LOCALID stand in for RANK / WORLD_SIZE / LOCAL_RANK under srun.
GroupSpec groupSpecFromEnvironment(CommBackend backend);

// A TCP port on loopback that nothing listens on now (the kernel's choice), for a local
// rendezvous. Another process could take it before rank 0 binds it; the launcher retries then.
int freeLoopbackPort();

}  // namespace ts::dist
