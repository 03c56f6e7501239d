"""The warm-up and measured steps as Nsight Systems sees them, as TrainScope's own steps
(See Note [capture ranges], engine/src/runtime/step_ranges.h): NVTX ranges "warmup" and "measured"
around them and "step N" around each, and with cuda_profiler_range on a CUDA device
cudaProfilerStart/Stop around the measured ones. The NVTX ranges are pushed wherever torch has
NVTX (its CUDA builds, with or without a GPU), as the C++ labs push theirs; a torch without it
(a CPU-only build) runs the steps without ranges."""
import contextlib


class StepRanges:
    def __init__(self, device, cuda_profiler_range=False):
        import torch
        self.torch = torch
        self.device = torch.device(device)
        cuda = self.device.type == "cuda"
        self.profiler = cuda and bool(cuda_profiler_range)
        try:
            torch.cuda.nvtx.range_push("trainscope")  # a CPU-only torch raises here
            torch.cuda.nvtx.range_pop()
            self.nvtx = True
        except Exception:  # noqa: BLE001 - any failure means no NVTX: steps run without ranges
            self.nvtx = False
        self.open = None
        self.in_step = False

    def _push(self, name):
        if self.nvtx:
            self.torch.cuda.nvtx.range_push(name)

    def _pop(self):
        if self.nvtx:
            self.torch.cuda.nvtx.range_pop()

    def begin(self, i, warmup):
        """Opens step i's range ("warmup" or "measured" first when the step starts one)."""
        want = "warmup" if warmup else "measured"
        if self.open != want:
            self.finish()
            if want == "measured" and self.profiler:
                self.torch.cuda.profiler.start()
            self._push(want)
            self.open = want
        self._push(f"step {i}")
        self.in_step = True

    def end(self):
        """Closes the step's range."""
        if self.in_step:
            self._pop()
            self.in_step = False

    @contextlib.contextmanager
    def step(self, i, warmup):
        self.begin(i, warmup)
        try:
            yield
        finally:
            self.end()

    def finish(self):
        """Closes "warmup" or "measured" (and stops the CUDA profiler after the device's work)."""
        self.end()  # a step that raised
        if self.open is None:
            return
        self._pop()
        if self.open == "measured" and self.profiler:
            # The steps' last kernels inside the capture. Called on the way out of a step that
            # raised too: an error here would hide the step's own (the user's traceback), which
            # says what went wrong; the C++ StepRanges ignores it the same way.
            try:
                self.torch.cuda.synchronize(self.device)
                self.torch.cuda.profiler.stop()
            except Exception:  # noqa: BLE001
                pass
        self.open = None
