// Gloo ranks as threads of the test process, meeting on a TCPStore on a free loopback port.
#pragma once

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "trainscope/distributed/process_group.h"

// Note [flight recorder]: c10d's FlightRecorder is one per process and inserts each group into
// a map outside its lock on a group's first collective (FlightRecorderDetail.hpp, LibTorch 2.11),
// so ranks that are threads of one process can corrupt it. Real ranks are processes; here it is
// switched off before main() (it reads the variable once, when first used).
inline const bool kFlightRecorderOff = (::setenv("TORCH_FR_BUFFER_SIZE", "0", 0), true);

// Runs body(group) on `world` threads, one rank each; returns each rank's error ("" if none).
inline std::vector<std::string> runThreadRanks(int world,
                                               const std::function<void(ts::dist::Group&)>& body) {
    const int port = ts::dist::freeLoopbackPort();
    std::vector<std::string> errors(static_cast<size_t>(world));
    std::vector<std::thread> ranks;
    for (int r = 0; r < world; ++r)
        ranks.emplace_back([&, r] {
            try {
                ts::dist::GroupSpec spec;
                spec.rank = r;
                spec.world_size = world;
                spec.master_port = port;
                spec.timeout = std::chrono::seconds(30);
                ts::dist::Group g = ts::dist::makeGroup(spec);
                body(g);
            } catch (const std::exception& e) {
                errors[static_cast<size_t>(r)] = e.what();
            }
        });
    for (auto& t : ranks) t.join();
    return errors;
}

#define EXPECT_NO_RANK_ERRORS(errors) \
    for (size_t r_ = 0; r_ < (errors).size(); ++r_) EXPECT_EQ((errors)[r_], "") << "rank " << r_
