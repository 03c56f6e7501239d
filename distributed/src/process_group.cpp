#include "trainscope/distributed/process_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef TRAINSCOPE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

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
    // Note [bounded rendezvous]: the store's own timeout does not bound every way a rendezvous
    // can hang (a port held by a program that accepts and never answers, ranks that never
    // come), so the store is made on a thread of its own and waited for with the rendezvous's
    // limit. Past it the thread is left behind, blocked; the caller (a worker) reports the
    // failure and exits.
    const std::string where = spec.master_addr + ":" + std::to_string(spec.master_port);
    struct Made {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        c10::intrusive_ptr<c10d::Store> store;
        std::string error;
    };
    auto made = std::make_shared<Made>();
    std::thread([made, spec] {
        c10::intrusive_ptr<c10d::Store> store;
        std::string error;
        try {
            c10d::TCPStoreOptions options;
            options.port = static_cast<uint16_t>(spec.master_port);
            // Under torchrun the agent serves the store (see Note [started by torchrun or srun]).
            options.isServer = spec.rank == 0 && !spec.agent_store;
            options.numWorkers =
                spec.agent_store ? std::nullopt : std::optional<size_t>(spec.world_size);
            options.waitWorkers = !spec.agent_store;
            options.timeout = std::min(spec.timeout, spec.rendezvous_timeout);
            store = c10::make_intrusive<c10d::TCPStore>(spec.master_addr, options);
            if (!spec.store_prefix.empty())
                store = c10::make_intrusive<c10d::PrefixStore>(spec.store_prefix, store);
            // Every rank in: a count all ranks add to and wait for (the store's clients do not
            // wait for each other by themselves).
            const auto deadline = std::chrono::steady_clock::now() + spec.rendezvous_timeout;
            int64_t arrived = store->add("trainscope/arrived", 1);
            while (arrived < spec.world_size) {
                if (std::chrono::steady_clock::now() > deadline)
                    throw std::runtime_error(std::to_string(arrived) + " of " +
                                             std::to_string(spec.world_size) + " ranks arrived");
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                arrived = store->add("trainscope/arrived", 0);
            }
            store->setTimeout(spec.timeout);  // collectives' set-up waits on the store as long
        } catch (const std::exception& e) {
            error = e.what();
            if (error.empty()) error = "failed";
        }
        std::lock_guard lock(made->m);
        made->store = store;
        made->error = error;
        made->done = true;
        made->cv.notify_all();
    }).detach();
    {
        std::unique_lock lock(made->m);
        if (!made->cv.wait_for(lock, spec.rendezvous_timeout, [&] { return made->done; }))
            throw std::runtime_error(
                who + "rendezvous at " + where + " did not complete in " +
                std::to_string(spec.rendezvous_timeout.count() / 1000) +
                " s (is every rank started, and is the port rank 0's store and not another "
                "program's?)");
        if (!made->error.empty())
            throw std::runtime_error(who + "rendezvous at " + where + " failed: " + made->error);
        g.store = made->store;
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
