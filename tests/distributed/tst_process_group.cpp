// c10d groups from C++: Gloo ranks as threads of this process, rendezvous on a TCPStore.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>

#include "thread_ranks.h"
#include "trainscope/distributed/process_group.h"

using namespace ts::dist;

TEST(ProcessGroup, GlooAllReduceSumsOverThreadRanks) {
    const int world = 3;
    std::vector<at::Tensor> results(world);
    const auto errors = runThreadRanks(world, [&](Group& g) {
        std::vector<at::Tensor> t{torch::full({5}, float(g.rank + 1))};
        g.backend->allreduce(t)->wait();
        results[g.rank] = t[0];
    });
    EXPECT_NO_RANK_ERRORS(errors);
    for (int r = 0; r < world; ++r)
        EXPECT_TRUE(torch::equal(results[r], torch::full({5}, 6.0f))) << "rank " << r;
}

TEST(ProcessGroup, EnvironmentAsTorchrunSetsIt) {
    ::setenv("RANK", "1", 1);
    ::setenv("WORLD_SIZE", "4", 1);
    ::setenv("LOCAL_RANK", "1", 1);
    ::setenv("MASTER_ADDR", "10.0.0.2", 1);
    ::setenv("MASTER_PORT", "29500", 1);
    auto spec = groupSpecFromEnvironment(CommBackend::Gloo);
    EXPECT_EQ(spec.rank, 1);
    EXPECT_EQ(spec.world_size, 4);
    EXPECT_EQ(spec.master_addr, "10.0.0.2");
    EXPECT_EQ(spec.master_port, 29500);
    ::setenv("RANK", "4", 1);
    EXPECT_THROW(groupSpecFromEnvironment(CommBackend::Gloo), std::invalid_argument);
    ::setenv("RANK", "x", 1);
    try {
        groupSpecFromEnvironment(CommBackend::Gloo);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("RANK='x'"), std::string::npos) << e.what();
    }
    ::unsetenv("MASTER_PORT");
    ::setenv("RANK", "0", 1);
    EXPECT_THROW(groupSpecFromEnvironment(CommBackend::Gloo), std::invalid_argument);
}

TEST(ProcessGroup, BackendNames) {
    EXPECT_EQ(parseBackend("gloo"), CommBackend::Gloo);
    EXPECT_EQ(parseBackend("nccl"), CommBackend::Nccl);
    EXPECT_FALSE(parseBackend("mpi"));
}

// See Note [a rendezvous port outside the ephemeral range]: no outgoing connection can take the
// port as its source, so a rank that connects early cannot connect to itself.
TEST(ProcessGroup, RendezvousPortIsBelowTheEphemeralRange) {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 32768;
    int high = 60999;
    range >> low >> high;
    for (int i = 0; i < 20; ++i) {
        const int port = freeLoopbackPort();
        EXPECT_GE(port, 10000);
        EXPECT_LT(port, low) << "a port in the ephemeral range " << low << "-" << high;
    }
}
