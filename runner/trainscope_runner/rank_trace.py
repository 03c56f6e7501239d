"""One rank's trace for the distributed lab's --trace-steps, on the Python strategies (fsdp2,
torch-ddp, yours-*), as the C++ ranks write theirs (See Note [one trace of every rank],
engine/src/distributed/rank_traces.h): Kineto, through torch.profiler, over the rank's first
trace_steps measured steps, each in a "ProfilerStep#N" range (N counts warm-up steps too, as the
rows do); CPU ops with their shapes and, on CUDA, every stream's kernels, NCCL's among them. The
trace is written as <trace_dir>/rank-<rank>.json with the "distributedInfo" and "trainscope"
metadata the C++ ranks add, for the launching process to merge with the other ranks'. A trace
that cannot be written is said on standard error (the run's log) and the steps go on: the merge
then names the rank whose trace is missing."""

import json
import os
import sys


class RankTrace:
    def __init__(self, ddp, rank, world, backend, strategy, device):
        import torch
        self.torch = torch
        self.steps = int(ddp.get("trace_steps", 0) or 0)
        self.dir = str(ddp.get("trace_dir", "") or "")
        self.first = int(ddp.get("warmup_steps", 2))
        self.rank, self.world, self.backend, self.strategy = rank, world, backend, strategy
        self.device = torch.device(device)
        self.profiler = None
        self.range = None

    def before_step(self, i):
        """Starts the profiler before the first measured step; opens step i's range while on."""
        if self.steps > 0 and self.dir and i == self.first and self.profiler is None:
            activities = [self.torch.profiler.ProfilerActivity.CPU]
            if self.device.type == "cuda":
                activities.append(self.torch.profiler.ProfilerActivity.CUDA)
            self.profiler = self.torch.profiler.profile(activities=activities, record_shapes=True)
            self.profiler.start()
        if self.profiler is not None:
            self.range = self.torch.profiler.record_function(f"ProfilerStep#{i}")
            self.range.__enter__()

    def after_step(self, i):
        """Closes step i's range; stops and writes after the last traced step."""
        self._close_range()
        if self.profiler is not None and i + 1 == self.first + self.steps:
            self.finish()

    def _close_range(self):
        if self.range is not None:
            self.range.__exit__(None, None, None)
            self.range = None

    def finish(self):
        """Stops and writes what was traced (steps stopped early: the ones that ran)."""
        if self.profiler is None:
            return
        profiler, self.profiler = self.profiler, None
        path = os.path.join(self.dir, f"rank-{self.rank}.json")
        part = path + ".part"
        try:
            self._close_range()
            if self.device.type == "cuda":
                self.torch.cuda.synchronize(self.device)
            profiler.stop()
            os.makedirs(self.dir, exist_ok=True)
            profiler.export_chrome_trace(part)
            with open(part) as f:
                trace = json.load(f)
            trace["distributedInfo"] = {"rank": self.rank, "world_size": self.world, "backend": self.backend}
            trace["trainscope"] = {"device": str(self.device), "strategy": self.strategy,
                                   "traced_steps": self.steps, "first_step": self.first}
            with open(part, "w") as f:
                json.dump(trace, f)
            os.replace(part, path)
        except Exception as e:  # noqa: BLE001 - the steps' rows matter more than the trace
            print(f"rank {self.rank}: the trace was not written: {e}", file=sys.stderr, flush=True)
            try:
                os.remove(part)
            except OSError:
                pass
