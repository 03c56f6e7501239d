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
    // torchrun's agent serves the store at MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE):
    // every rank, rank 0 included, is its client, under the prefix torch's env:// uses
    // ("/worker/attempt_<TORCHELASTIC_RESTART_COUNT>"). Otherwise rank 0 serves it.
    bool agent_store = false;
    std::string store_prefix;
};

// The most ranks a group may have (torchrun's or srun's WORLD_SIZE included).
inline constexpr int kMaxWorldSize = 4096;

// The group as torchrun or srun describe it in the environment; throws std::invalid_argument
// naming the variable that is missing, not a number, or out of range (WORLD_SIZE above
// kMaxWorldSize, a MASTER_ADDR that does not resolve). TRAINSCOPE_RENDEZVOUS_TIMEOUT (seconds)
// sets the rendezvous's limit. SLURM_PROCID / SLURM_NTASKS /
// SLURM_LOCALID stand in for RANK / WORLD_SIZE / LOCAL_RANK under srun.
GroupSpec groupSpecFromEnvironment(CommBackend backend);

// Note [started by torchrun or srun]: `distributed ddp|allreduce` started by torchrun or srun is
// one rank of the run, not its launcher: torchrun sets TORCHELASTIC_RUN_ID beside RANK (always,
// "none" by default), srun sets SLURM_STEP_ID beside SLURM_PROCID for every task of a step. Our
// own local launcher starts `worker`, never `distributed`, and sets neither. A batch script of
// sbatch (no step) is not a rank, nor is a step of one task (SLURM_NTASKS 1: `srun --pty bash`,
// whose shell would otherwise make every run a world of one): they run the local launcher.
struct ExternalLaunch {
    std::string launcher;  // "torchrun" or "srun"
    int node_rank = 0;     // GROUP_RANK (torchrun), SLURM_NODEID (srun)
    std::string host;      // this machine's name
    // "node 1 (gpu-a)": what a rank's lane says of where it ran.
    std::string node() const;
};
std::optional<ExternalLaunch> externalLaunchFromEnvironment();

// A TCP port on loopback that nothing listens on now, below the ephemeral range, for a local
// rendezvous (See Note [a rendezvous port outside the ephemeral range]). Another process could
// take it before rank 0 binds it; the launcher retries then.
int freeLoopbackPort();

}  // namespace ts::dist
