// The all-reduce benchmark: each rank times `backend->allreduce` over sizes and dtypes, the
// ranks' times are gathered, and a row per (size, dtype) reports the slowest rank's mean with
// nccl-tests' bandwidths: algbw = bytes / time, busbw = algbw · 2(n−1)/n (what each rank's
// link carries in a ring, comparable across world sizes). Torch-free header; the runner
// (runAllreduceRank) is the only part that sees LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/distributed/group_spec.h"

namespace ts::dist {

enum class BenchDtype { Float32, BFloat16 };

const char* dtypeName(BenchDtype dtype);  // "fp32", "bf16"
// fp32 / float32, bf16 / bfloat16; nullopt for anything else.
std::optional<BenchDtype> parseDtype(const std::string& name);
int dtypeBytes(BenchDtype dtype);

// "1MB" (10^6), "16MiB" (2^20·16), "1GB", "1.5GiB", "512KiB", "64B", "1048576"; units in any
// case. nullopt when the text is not a size; the value may be 0 (the caller refuses it).
std::optional<int64_t> parseByteSize(const std::string& text);
// The shortest exact form: "1 GiB", "16 MiB", "1 MB", "1000 B".
std::string formatByteSize(int64_t bytes);

struct AllreduceSpec {
    std::vector<int64_t> sizes;  // bytes of each rank's tensor (rounded down to whole elements)
    std::vector<BenchDtype> dtypes = {BenchDtype::Float32, BenchDtype::BFloat16};
    int warmup = 5;
    int iters = 20;
    double link_gbps = 0;  // one link's bandwidth (GB/s) for the ideal time; 0: unknown
};

inline constexpr int64_t kMaxAllreduceBytes = int64_t{4} << 30;

// 1 MiB, 4, 16, 64, 256 MiB, 1 GiB on GPUs (NCCL); on the CPU (Gloo) up to 64 MiB.
std::vector<int64_t> defaultAllreduceSizes(CommBackend backend);
// Why the spec cannot run ("" when it can): no sizes or dtypes, a size ≤ 0 or above 4 GiB,
// warm-up < 0, iterations < 1, a negative link bandwidth.
std::string allreduceSpecProblem(const AllreduceSpec& spec);

// 2(n−1)/n: the bytes each rank sends and receives per byte reduced, in a ring.
double busFactor(int world_size);

struct RankTime {
    int rank = 0;
    double mean_ms = 0, min_ms = 0, max_ms = 0;
};

// One rank's measurement of one (size, dtype). Rank 0's also holds every rank's times
// (gathered after measuring); the others' `ranks` is empty.
struct AllreduceTiming {
    int rank = 0;
    int world_size = 1;
    CommBackend backend = CommBackend::Gloo;
    std::string device;  // "cpu", "cuda:1"
    int64_t bytes = 0;   // elements · dtype size
    int64_t elements = 0;
    BenchDtype dtype = BenchDtype::Float32;
    int iters = 0;
    double mean_ms = 0, min_ms = 0, max_ms = 0;
    std::vector<RankTime> ranks;
};

// A (size, dtype) over every rank: what reports show and a store would keep.
struct AllreduceRow {
    int64_t bytes = 0;
    int64_t elements = 0;
    BenchDtype dtype = BenchDtype::Float32;
    CommBackend backend = CommBackend::Gloo;
    int world_size = 1;
    int iters = 0;
    double time_ms = 0;  // the slowest rank's mean: the collective ends when every rank's does
    double rank_mean_min_ms = 0;  // the fastest rank's mean
    double fastest_ms = 0;        // one iteration, any rank
    double slowest_ms = 0;
    double algbw_gbps = 0;  // bytes / time_ms, GB/s (10^9)
    double busbw_gbps = 0;  // algbw · 2(n−1)/n
    double ideal_ms = 0;    // bytes · 2(n−1)/n at the link's bandwidth; 0: unknown
    std::vector<RankTime> ranks;
};

// The row from a timing that holds every rank's times (rank 0's); throws std::invalid_argument
// when `ranks` does not hold world_size ranks.
AllreduceRow allreduceRow(const AllreduceTiming& gathered, double link_gbps);

class AllreduceObserver {
public:
    virtual ~AllreduceObserver() = default;
    virtual void ready(int /*rank*/, int /*world_size*/, const std::string& /*device*/) {}
    // After each (size, dtype) of `total`; `timing` is this rank's (rank 0's with every rank's).
    virtual void measured(const AllreduceTiming& /*timing*/, int /*done*/, int /*total*/) {}
};

// One rank's part: sets the device (NCCL: cuda:local_rank), makes the group, checks one
// all-reduce's sum, then per dtype and size `warmup` untimed and `iters` timed all-reduces
// (CUDA events on a GPU, the steady clock around wait() on the CPU) and an allgather of the
// ranks' mean/min/max. `stop` is asked between sizes. Throws std::invalid_argument for a bad
// spec, std::runtime_error naming the rank for a failed group or collective.
void runAllreduceRank(const GroupSpec& group, const AllreduceSpec& spec,
                      AllreduceObserver& observer, const std::function<bool()>& stop = {});

}  // namespace ts::dist
