"""WRONG on purpose: bucketed DDP that all-reduces every bucket but never copies the last
bucket's averaged gradient back, so the parameters in it (the first ones of the module, whose
gradients come last in backward) step on this rank's own gradient and the ranks drift apart.

    --code examples/wrong/ddp_bucketed_stale.py
    --code examples/wrong/ddp_bucketed_stale.py:DDPBucketedStale"""

import _checkout  # noqa: F401
from cs336_systems.ddp import DDPBucketed


class DDPBucketedStale(DDPBucketed):
    def _copy_back(self, i, flat):
        if i != len(self.buckets) - 1:  # should copy every bucket back
            super()._copy_back(i, flat)


def get_ddp_bucketed(module, bucket_size_mb):
    return DDPBucketedStale(module, bucket_size_mb)


def ddp_bucketed_on_after_backward(ddp_model, optimizer):
    ddp_model.finish_gradient_synchronization()


def ddp_bucketed_on_train_batch_start(ddp_model, optimizer):
    ddp_model.on_train_batch_start()
