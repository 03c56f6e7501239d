#include "trainscope/distributed/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef TRAINSCOPE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <stdexcept>

namespace ts::dist {

bool ncclBuilt() {
#ifdef TRAINSCOPE_NCCL
    return true;
#else
    return false;
#endif
}

Group makeGroup(const GroupSpec& spec) {
    const std::string who = "rank " + std::to_string(spec.rank) + ": ";
    if (spec.world_size < 1 || spec.rank < 0 || spec.rank >= spec.world_size)
        throw std::invalid_argument(who + "rank and world size do not fit (" +
                                    std::to_string(spec.rank) + " of " +
                                    std::to_string(spec.world_size) + ")");
    if (spec.master_port <= 0 || spec.master_port > 65535)
        throw std::invalid_argument(who + "no rendezvous port (" +
                                    std::to_string(spec.master_port) + ")");
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
        throw std::runtime_error(who + "rendezvous at " + spec.master_addr + ":" +
                                 std::to_string(spec.master_port) + " failed: " + e.what());
    }
    try {
        if (spec.backend == CommBackend::Gloo) {
            auto options = c10d::ProcessGroupGloo::Options::create();
            options->timeout = spec.timeout;
            options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
                spec.master_addr == "127.0.0.1" || spec.master_addr == "localhost" ? "127.0.0.1"
                                                                                   : ""));
            if (!options->devices.back())
                options->devices.back() = c10d::ProcessGroupGloo::createDefaultDevice();
            g.backend = c10::make_intrusive<c10d::ProcessGroupGloo>(g.store, spec.rank,
                                                                    spec.world_size, options);
        } else {
#ifdef TRAINSCOPE_NCCL
            auto options = c10d::ProcessGroupNCCL::Options::create();
            options->timeout = spec.timeout;
            g.backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(g.store, spec.rank,
                                                                    spec.world_size, options);
#else
            throw std::invalid_argument(
                "this TrainScope was built without NCCL (a CPU LibTorch): use --backend gloo");
#endif
        }
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::exception& e) {
        throw std::runtime_error(who + backendName(spec.backend) +
                                 " process group failed: " + e.what());
    }
    return g;
}

}  // namespace ts::dist
