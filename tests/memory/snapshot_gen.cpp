// Writes the snapshot pickle of a long synthetic allocator trace (synthetic_trace.h's
// longTrace) for the tests that load it outside TrainScope (test_memory_viz.py).
//   snapshot_gen STEPS LAYERS FILE     prints the number of trace entries written
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "memory/memory_pickle.h"
#include "synthetic_trace.h"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: snapshot_gen STEPS LAYERS FILE\n");
        return 2;
    }
    const auto t = ts::testing::longTrace(std::atoi(argv[1]), std::atoi(argv[2]));
    const std::string bytes = ts::memorySnapshotPickle(t);
    std::ofstream out(argv[3], std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        std::fprintf(stderr, "could not write %s\n", argv[3]);
        return 1;
    }
    // The trace's events and the "snapshot" entry that ends it.
    std::printf("%zu entries, %zu bytes\n", t.events.size() + 1, bytes.size());
    return 0;
}
