#include "trainscope/distributed/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef TRAINSCOPE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace ts::dist {

const char* backendName(CommBackend backend) { return backend == CommBackend::Nccl ? "nccl" : "gloo"; }

std::optional<CommBackend> parseBackend(const std::string& name) {
    if (name == "gloo") return CommBackend::Gloo;
    if (name == "nccl") return CommBackend::Nccl;
    return std::nullopt;
}

bool ncclBuilt() {
#ifdef TRAINSCOPE_NCCL
    return true;
#else
    return false;
#endif
}

int freeLoopbackPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("no socket for a rendezvous port");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    if (port <= 0) throw std::runtime_error("no free port on 127.0.0.1 for the rendezvous");
    return port;
}

namespace {

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

int intFromEnv(const char* name, const char* fallback_name, std::optional<int> default_value) {
    auto v = env(name);
    const char* used = name;
    if (!v && fallback_name) {
        v = env(fallback_name);
        used = fallback_name;
    }
    if (!v) {
        if (default_value) return *default_value;
        throw std::invalid_argument(std::string(name) + " is not set (a distributed run started by torchrun or srun sets it)");
    }
    try {
        size_t end = 0;
        const int x = std::stoi(*v, &end);
        if (end != v->size() || x < 0) throw std::invalid_argument("");
        return x;
    } catch (const std::exception&) {
        throw std::invalid_argument(std::string(used) + "='" + *v + "' is not a non-negative whole number");
    }
}

}  // namespace

GroupSpec groupSpecFromEnvironment(CommBackend backend) {
    GroupSpec spec;
    spec.backend = backend;
    spec.rank = intFromEnv("RANK", "SLURM_PROCID", std::nullopt);
    spec.world_size = intFromEnv("WORLD_SIZE", "SLURM_NTASKS", std::nullopt);
    spec.local_rank = intFromEnv("LOCAL_RANK", "SLURM_LOCALID", 0);
    spec.master_addr = env("MASTER_ADDR").value_or("127.0.0.1");
    spec.master_port = intFromEnv("MASTER_PORT", nullptr, std::nullopt);
    if (spec.world_size < 1) throw std::invalid_argument("WORLD_SIZE must be at least 1");
    if (spec.rank >= spec.world_size)
        throw std::invalid_argument("RANK " + std::to_string(spec.rank) + " is not below WORLD_SIZE " +
                                    std::to_string(spec.world_size));
    return spec;
}

Group makeGroup(const GroupSpec& spec) {
    const std::string who = "rank " + std::to_string(spec.rank) + ": ";
    if (spec.world_size < 1 || spec.rank < 0 || spec.rank >= spec.world_size)
        throw std::invalid_argument(who + "rank and world size do not fit (" + std::to_string(spec.rank) + " of " +
                                    std::to_string(spec.world_size) + ")");
    if (spec.master_port <= 0 || spec.master_port > 65535)
        throw std::invalid_argument(who + "no rendezvous port (" + std::to_string(spec.master_port) + ")");
    Group g;
    g.rank = spec.rank;
    g.world_size = spec.world_size;
    try {
        c10d::TCPStoreOptions options;
        options.port = static_cast<uint16_t>(spec.master_port);
        options.isServer = spec.rank == 0;
        options.numWorkers = spec.world_size;
        options.waitWorkers = true;
        options.timeout = spec.timeout;
        g.store = c10::make_intrusive<c10d::TCPStore>(spec.master_addr, options);
    } catch (const std::exception& e) {
        throw std::runtime_error(who + "rendezvous at " + spec.master_addr + ":" + std::to_string(spec.master_port) +
                                 " failed: " + e.what());
    }
    try {
        if (spec.backend == CommBackend::Gloo) {
            auto options = c10d::ProcessGroupGloo::Options::create();
            options->timeout = spec.timeout;
            options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
                spec.master_addr == "127.0.0.1" || spec.master_addr == "localhost" ? "127.0.0.1" : ""));
            if (!options->devices.back()) options->devices.back() = c10d::ProcessGroupGloo::createDefaultDevice();
            g.backend = c10::make_intrusive<c10d::ProcessGroupGloo>(g.store, spec.rank, spec.world_size, options);
        } else {
#ifdef TRAINSCOPE_NCCL
            auto options = c10d::ProcessGroupNCCL::Options::create();
            options->timeout = spec.timeout;
            g.backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(g.store, spec.rank, spec.world_size, options);
#else
            throw std::invalid_argument("this TrainScope was built without NCCL (a CPU LibTorch): use --backend gloo");
#endif
        }
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::exception& e) {
        throw std::runtime_error(who + backendName(spec.backend) + " process group failed: " + e.what());
    }
    return g;
}

}  // namespace ts::dist
