// The torch-free half of the process groups: backend names, the torchrun/srun environment, a
// free loopback port (group_spec.h).
#include "trainscope/distributed/group_spec.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>

namespace ts::dist {

const char* backendName(CommBackend backend) {
    return backend == CommBackend::Nccl ? "nccl" : "gloo";
}

std::optional<CommBackend> parseBackend(const std::string& name) {
    if (name == "gloo") return CommBackend::Gloo;
    if (name == "nccl") return CommBackend::Nccl;
    return std::nullopt;
}

// Note [a rendezvous port outside the ephemeral range]: a port the kernel picks for bind(0) comes
// from the ephemeral range, the same range it picks the source port of every outgoing connection
// from. Rank 1 connects to rank 0's store as soon as it starts, maybe before rank 0 listens; if the
// kernel gives that connection the store's own port as its source, the socket connects to itself
// (TCP's simultaneous open), rank 0's listen fails with EADDRINUSE and rank 1 waits for a store
// that never answers. It happened once in tst_ddp_gpu on 2 x H200. So the port comes from below the
// ephemeral range (read from /proc/sys/net/ipv4/ip_local_port_range), where no outgoing connection
// takes its source port; bind(0) is the fallback when nothing there is free.
namespace {

int bindLoopback(int port) {  // the bound port, or -1
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof addr;
    int bound = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        bound = ntohs(addr.sin_port);
    ::close(fd);
    return bound;
}

int ephemeralLow() {
    std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0;
    int high = 0;
    if (in >> low >> high && low > 1024 && low <= 65535) return low;
    return 32768;  // Linux's default
}

}  // namespace

int freeLoopbackPort() {  // See Note [a rendezvous port outside the ephemeral range]
    const int high = ephemeralLow() - 1;
    const int low = std::max(10000, high - 12000);
    if (high > low) {
        std::random_device seed;
        std::mt19937 pick(seed());
        const int span = high - low + 1;
        const int start = static_cast<int>(pick() % static_cast<unsigned>(span));
        for (int i = 0; i < 256; ++i) {
            const int port = low + (start + i * 97) % span;
            if (bindLoopback(port) == port) return port;
        }
    }
    const int port = bindLoopback(0);
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
        throw std::invalid_argument(
            std::string(name) +
            " is not set (a distributed run started by torchrun or srun sets it)");
    }
    try {
        size_t end = 0;
        const int x = std::stoi(*v, &end);
        if (end != v->size() || x < 0) throw std::invalid_argument("");
        return x;
    } catch (const std::exception&) {
        throw std::invalid_argument(std::string(used) + "='" + *v +
                                    "' is not a non-negative whole number");
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
    if (spec.world_size > kMaxWorldSize)
        throw std::invalid_argument("WORLD_SIZE " + std::to_string(spec.world_size) +
                                    " is more than the " + std::to_string(kMaxWorldSize) +
                                    " ranks a group may have");
    if (spec.master_port < 1 || spec.master_port > 65535)
        throw std::invalid_argument("MASTER_PORT " + std::to_string(spec.master_port) +
                                    " is not a TCP port (1 to 65535)");
    // An address that cannot resolve would be retried until the rendezvous's timeout.
    {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const int rc = ::getaddrinfo(spec.master_addr.c_str(), nullptr, &hints, &found);
        if (found) ::freeaddrinfo(found);
        if (rc != 0)
            throw std::invalid_argument("MASTER_ADDR '" + spec.master_addr +
                                        "' does not resolve (" + ::gai_strerror(rc) + ")");
    }
    if (const auto t = env("TRAINSCOPE_RENDEZVOUS_TIMEOUT")) {
        char* end = nullptr;
        const double s = std::strtod(t->c_str(), &end);
        if (end == t->c_str() || *end != '\0' || !(s > 0) || s > 86400)
            throw std::invalid_argument("TRAINSCOPE_RENDEZVOUS_TIMEOUT='" + *t +
                                        "' is not a number of seconds (above 0, at most 86400)");
        spec.rendezvous_timeout = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
    }
    // See Note [started by torchrun or srun]: torch's env:// connects every rank to the agent's
    // store under this prefix; a rank 0 that served its own would find the port taken.
    if (const auto agent = env("TORCHELASTIC_USE_AGENT_STORE");
        agent && (*agent == "True" || *agent == "true" || *agent == "1")) {
        spec.agent_store = true;
        spec.store_prefix = "/worker/attempt_" +
                            std::to_string(intFromEnv("TORCHELASTIC_RESTART_COUNT", nullptr, 0));
    }
    if (spec.rank >= spec.world_size)
        throw std::invalid_argument("RANK " + std::to_string(spec.rank) +
                                    " is not below WORLD_SIZE " + std::to_string(spec.world_size));
    return spec;
}

std::string ExternalLaunch::node() const {
    return "node " + std::to_string(node_rank) + (host.empty() ? "" : " (" + host + ")");
}

std::optional<ExternalLaunch> externalLaunchFromEnvironment() {
    ExternalLaunch launch;
    if (env("TORCHELASTIC_RUN_ID") && env("RANK")) {
        launch.launcher = "torchrun";
        launch.node_rank = intFromEnv("GROUP_RANK", nullptr, 0);
    } else if (env("SLURM_STEP_ID") && env("SLURM_PROCID") &&
               intFromEnv("SLURM_NTASKS", nullptr, 1) > 1) {
        launch.launcher = "srun";
        launch.node_rank = intFromEnv("SLURM_NODEID", nullptr, 0);
    } else {
        return std::nullopt;
    }
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) launch.host = host;
    return launch;
}

}  // namespace ts::dist
