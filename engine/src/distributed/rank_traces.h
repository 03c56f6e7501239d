// Every rank's kernels on one timeline: each rank of a traced DDP point writes Kineto's Chrome
// trace of its profiled steps (runtime/kineto.h, from the rank's worker), and the launching
// process merges them into one Chrome / Perfetto trace, a process track per rank. Torch-free.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ts {

// Note [one trace of every rank]: `traces[r]` is rank r's Chrome trace as Kineto writes it
// ({"traceEvents": [...], "baseTimeNanoseconds": ..., "distributedInfo": ..., ...}). In the
// merged trace:
// - Rank r is one process, pid r, named "rank r" (process_sort_index r, its device as the
//   process's label where the trace's "trainscope" metadata names it). Everything of the rank
//   goes under it: the host threads (CPU ops, autograd's backward, the collectives' ops) first,
//   then the rank's other processes of Kineto's trace as threads, each named with its process's
//   name ("GPU 0 stream 7": the compute stream and NCCL's stream side by side). Threads are
//   numbered anew per rank (1, 2, ...): process by process as Kineto's metadata and events first
//   name them, within one the thread with the most events first (the main thread above Gloo's,
//   the compute stream above NCCL's).
// - Timestamps are on one clock. Kineto writes each event's "ts" in µs after its trace's
//   "baseTimeNanoseconds"; each rank's events are shifted by its base less the smallest base, so
//   that every ts is µs after that one. Ranks on one host read one clock (CLOCK_REALTIME
//   through Kineto), so the shift makes them comparable as they are. Ranks of several hosts
//   would also need the hosts' clock offsets (NTP's error, often 0.1–1 ms): not done here; the
//   first collective of the profiled steps, which every rank leaves at about the same moment,
//   would be the anchor to align on.
// - Flow arrows (ph s/t/f: CPU op → its kernel, forward op → its backward) and async events keep
//   their pairs: a numeric id becomes id + r·stride (stride: one more than the largest numeric
//   id of any rank), a string id "r<rank>:" + id, so no two ranks' arrows share an id.
// - Kineto's own process and thread metadata (process_name, process_labels, *_sort_index) are
//   replaced by the above; any other top-level key of rank 0's trace is kept, and the ranks'
//   "distributedInfo" are listed under "ranks".
// Throws std::invalid_argument when a trace has no "traceEvents" array.
nlohmann::json mergeRankTraces(std::vector<nlohmann::json> traces);

// Rank `rank`'s trace file in a point's folder of rank traces.
std::string rankTraceFile(const std::string& dir, int rank);
// Reads `world_size` ranks' traces from `dir` (rankTraceFile), merges them and writes the merged
// trace to `out` (whole or not at all). Throws std::runtime_error naming the file that is
// missing or does not read.
void mergeRankTraceFiles(const std::string& dir, int world_size, const std::string& out);
// Removes the ranks' traces from `dir`, and `dir` when that leaves it empty. Plain remove(3):
// the std::filesystem::remove_all that LibTorch's libtorch.so exports (and the dynamic linker
// binds a process with LibTorch to) jumps to a null pointer.
void removeRankTraceFiles(const std::string& dir, int world_size);

// Where point `point` (0-based) of run `run_id` keeps its merged trace: the folder beside the
// store `store_path` named after it ("results.db" → "results.traces/"), the file
// "run-<id>-point-<point + 1>.json"; `dir`, when given, instead of that folder. Without a store
// (run_id 0) "ddp-trace-point-<point + 1>.json" in `dir`, else in the current folder.
std::string mergedTracePath(const std::string& dir, const std::string& store_path, int64_t run_id,
                            int point);

}  // namespace ts
