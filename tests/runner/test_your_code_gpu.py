#!/usr/bin/env python3
"""The user's attention and DDP classes on the GPU machine: the example checkout's PyTorch and
Triton FlashAttention pass the float64 gate and are timed on a GPU (bf16 and fp32, causal), the
wrong Triton variant fails it; on 2 GPUs (NCCL) the example's DDP classes, sharded optimizer and
the 2026 edition's DDP and FSDP pass the course's check beside PyTorch's DDP and TrainScope's
bucketed strategy, with each rank's memory measured. Exit 77 (skipped) without a GPU; the NCCL
part is skipped with one GPU. See Note [attention in Python]; see Note [your DDP classes].
Usage: test_your_code_gpu.py path/to/trainscope-cli"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from runner_server import share_runner_server  # noqa: E402

CLI = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKOUT = os.path.join(ROOT, "examples", "course-checkout")
CHECKOUT_2026 = os.path.join(ROOT, "examples", "course-checkout-2026")
WRONG = os.path.join(ROOT, "examples", "wrong")


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


class YourCodeGpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.env = {**os.environ, "TRAINSCOPE_DB": os.path.join(self.tmp.name, "results.db"),
                    "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}

    def tearDown(self):
        self.tmp.cleanup()

    def cli(self, *args, timeout=900):
        return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=self.env)

    def lines(self, p):
        return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]

    def test_the_checkouts_attention_on_the_gpu(self):
        p = self.cli("attention", "--code", CHECKOUT, "--impl", "sdpa,torch-compile", "--device", "cuda",
                     "--seq", "256,1024", "--head-dim", "64", "--batch", "2", "--heads", "4", "--dtype", "bf16,fp32",
                     "--causal", "--pass", "forward,backward,forward-backward", "--warmup", "2", "--steps", "5",
                     "--jsonl")
        self.assertEqual(p.returncode, 0, p.stderr)
        cells = self.lines(p)
        self.assertEqual(len(cells), 4 * 4)
        for c in cells:
            self.assertEqual(c["status"], "ok", c)
            self.assertLessEqual(c["err_out"], c["tolerance"])
            self.assertLessEqual(c["err_grad"], c["tolerance"])
            self.assertGreater(c["forward_backward_ms"], 0)
            self.assertGreater(c["peak_memory"], 0, "memory is measured on a GPU")
            self.assertGreater(c["memory_before_backward"], 0)
        triton = [c for c in cells if c["impl"] == "yours-triton"]
        self.assertEqual(len(triton), 4)
        # Triton's first call compiles the kernel: said apart from the step.
        self.assertGreater(max(c["first_call_ms"] for c in triton), max(c["forward_ms"] for c in triton))

    def test_the_wrong_triton_kernel_fails_the_gate(self):
        p = self.cli("attention", "--code", os.path.join(WRONG, "attention_triton_no_scale.py"), "--impl",
                     "yours-triton", "--device", "cuda", "--seq", "256", "--head-dim", "64", "--dtype", "bf16",
                     "--jsonl")
        self.assertEqual(p.returncode, 3, p.stderr)
        [c] = self.lines(p)
        self.assertEqual(c["status"], "failed")
        self.assertIn("wrong result", c["error"])

    def test_the_classes_on_two_gpus_with_nccl(self):
        if gpu_count() < 2:
            self.skipTest("needs 2 GPUs")
        common = ["--world", "2", "--backend", "nccl", "--size", "small", "--context-length", "256", "--batch",
                  "4", "--precision", "bf16", "--warmup", "2", "--steps", "5", "--format", "json",
                  "--timeout", "300"]
        p = self.cli("distributed", "ddp", "--code", CHECKOUT, "--strategy",
                     "yours-individual,yours-bucketed,torch-ddp,bucketed", "--shard", "both", *common)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = self.lines(p)
        self.assertEqual(len(points), 8)
        for q in points:
            self.assertEqual(q["status"], "ok", q)
            if q["strategy"] != "bucketed":
                self.assertTrue(q["check"]["passed"], q["check"])
            self.assertGreater(q["memory_peak"], 0)
        p = self.cli("distributed", "ddp", "--code", CHECKOUT_2026, "--strategy", "yours", *common)
        self.assertEqual(p.returncode, 0, p.stderr)
        for q in self.lines(p):
            self.assertTrue(q["check"]["passed"], q["check"])

    def test_on_nccl_a_wrong_class_fails_the_check_and_a_hang_is_stopped(self):
        if gpu_count() < 2:
            self.skipTest("needs 2 GPUs")
        common = ["--world", "2", "--backend", "nccl", "--size", "tiny", "--context-length", "64", "--batch", "2",
                  "--precision", "fp32", "--warmup", "1", "--steps", "2", "--format", "json"]
        p = self.cli("distributed", "ddp", "--code", os.path.join(WRONG, "ddp_not_averaged.py"), "--strategy",
                     "yours-individual", *common, "--timeout", "300")
        self.assertEqual(p.returncode, 3, p.stderr)
        [q] = self.lines(p)
        self.assertFalse(q["check"]["passed"], q["check"])
        self.assertIn("wrong result", q["error"])
        # A collective on rank 0 only: NCCL waits on the GPU for a rank that never comes; the
        # rank timeout stops both ranks and names one, and no rank outlives the run.
        with open(os.path.join(self.tmp.name, "lonely.py"), "w") as f:
            f.write("import torch\nimport torch.distributed as dist\n\n"
                    "class Lonely(torch.nn.Module):\n"
                    "    def __init__(self, module):\n        super().__init__()\n        self.module = module\n\n"
                    "    def forward(self, *args, **kwargs):\n        return self.module(*args, **kwargs)\n\n"
                    "def get_ddp_individual_parameters(module):\n    return Lonely(module)\n\n"
                    "def ddp_individual_parameters_on_after_backward(model, optimizer):\n"
                    "    if dist.get_rank() == 0:\n        dist.all_reduce(torch.zeros(1, device='cuda'))\n")
        started = time.time()
        p = self.cli("distributed", "ddp", "--code", os.path.join(self.tmp.name, "lonely.py"), "--strategy",
                     "yours-individual", *common, "--timeout", "20")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertLess(time.time() - started, 180)
        self.assertRegex(p.stderr, r"rank [01]")
        left = subprocess.run(["pgrep", "-f", "lonely.py"], capture_output=True, text=True).stdout
        self.assertEqual(left.strip(), "", "no rank outlives the run")


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    if gpu_count() == 0:
        print("no GPU: skipped")
        sys.exit(77)
    share_runner_server(CLI)  # See Note [the runner server]: its children start CUDA themselves
    unittest.main()
