// What a per-rank worker writes on stdout, one JSON object a line, and what the launcher's
// caller reads back. Every line has "event" and "rank":
//   {"event":"ready","rank":0,"world_size":2,"backend":"gloo","device":"cpu"}
//   {"event":"progress","rank":0,"done":3,"total":8,"what":"16 MiB bf16"}
//   {"event":"result","rank":0,"experiment":"allreduce",...AllreduceTiming...}
//   {"event":"error","rank":1,"message":"..."}            (then exit 3)
// A new experiment adds its own "experiment" to "result" lines. Torch-free.
#pragma once

#include <optional>
#include <string>

#include "trainscope/distributed/allreduce_bench.h"

namespace ts::dist {

std::string readyLine(int rank, int world_size, CommBackend backend, const std::string& device);
std::string progressLine(int rank, int done, int total, const std::string& what);
std::string errorLine(int rank, const std::string& message);
std::string allreduceResultLine(const AllreduceTiming& timing);

struct WorkerLine {
    std::string event;  // ready, progress, result, error, or a newer worker's
    int rank = -1;
    std::string message;  // error
    int done = 0, total = 0;
    std::string what;                          // progress
    std::string experiment;                    // result
    std::optional<AllreduceTiming> allreduce;  // result of "allreduce"
};

// nullopt for a line that is not a JSON object with an "event" (a stray print); a result line
// whose fields do not read is an error line saying so.
std::optional<WorkerLine> parseWorkerLine(const std::string& line);

}  // namespace ts::dist
