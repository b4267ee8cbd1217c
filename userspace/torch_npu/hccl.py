# SPDX-License-Identifier: GPL-2.0
"""The "hccl" process group: collectives on npu tensors, over gloo.

``torch.distributed.init_process_group("hccl")`` (the name Ascend users
type) makes one of these per group. It has no transport of its own: each
collective waits for the device, stages the npu tensors through host memory,
runs gloo's collective on the host copies, and copies the results back to
the device. CPU tensors go to gloo directly. Every collective completes
before it returns; the Work it returns is already done.
"""

from __future__ import annotations

from datetime import timedelta

import torch
import torch.distributed as dist
# a Work from a completed Future: what PyTorch's own Python process groups
# return (torch.testing._internal.distributed.multi_threaded_pg)
from torch._C._distributed_c10d import _create_work_from_future

__all__ = ["HcclProcessGroup"]


def _done(result) -> dist.Work:
    fut: torch.futures.Future = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


def _to_host(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [t.cpu() if t.device.type == "npu" else t for t in tensors]


def _back(tensors: list[torch.Tensor], host: list[torch.Tensor]) -> None:
    for t, h in zip(tensors, host):
        if t is not h:
            t.copy_(h)


class HcclProcessGroup(dist.ProcessGroup):
    """A process group for npu tensors that stages them through gloo."""

    def __init__(self, store: dist.Store, rank: int, size: int,
                 timeout: timedelta):
        super().__init__(rank, size)
        self.gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self) -> str:     # noqa: N802 (the c10d name)
        return "hccl"

    def allreduce(self, tensors, opts):
        host = _to_host(tensors)
        self.gloo.allreduce(host, opts).wait()
        _back(tensors, host)
        return _done(tensors)

    def broadcast(self, tensors, opts):
        host = _to_host(tensors)
        self.gloo.broadcast(host, opts).wait()
        _back(tensors, host)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts):
        outs = [_to_host(o) for o in output_tensors]
        self.gloo.allgather(outs, _to_host(input_tensors), opts).wait()
        for o, h in zip(output_tensors, outs):
            _back(o, h)
        return _done(output_tensors)

    def all_gather_single(self, output, input, opts):
        # all_gather_into_tensor: gather into views of one host tensor
        host = output.cpu()
        self.gloo.allgather([list(host.chunk(self.size()))],
                            _to_host([input]), opts).wait()
        output.copy_(host)
        return _done([output])

    def reduce_scatter(self, output_tensors, input_tensors, opts):
        # gloo has no reduce_scatter: all-reduce every chunk, keep ours
        chunks = [_to_host(i) for i in input_tensors]
        for c in chunks:
            for t in c:         # one tensor a call: gloo sums a list's
                self.gloo.allreduce([t], _reduce_opts(opts)).wait()
        rank = self.rank()
        for out, c in zip(output_tensors, chunks):
            out.copy_(c[rank])
        return _done(output_tensors)

    def reduce_scatter_single(self, output, input, opts):
        host = input.cpu()
        self.gloo.allreduce([host], _reduce_opts(opts)).wait()
        output.copy_(host.chunk(self.size())[self.rank()])
        return _done([output])

    def barrier(self, opts):
        self.gloo.barrier(opts).wait()
        return _done(None)

    def __repr__(self) -> str:
        return "<torch_npu.hccl rank %d of %d>" % (self.rank(), self.size())


def _reduce_opts(opts) -> dist.AllreduceOptions:
    o = dist.AllreduceOptions()
    o.reduceOp = opts.reduceOp
    return o


def _create(store, rank, size, timeout) -> HcclProcessGroup:
    return HcclProcessGroup(store, rank, size, timeout)


def register() -> None:
    """Make "hccl" a torch.distributed backend for npu (and CPU) tensors."""
    if "hccl" not in dist.Backend.backend_list:
        dist.Backend.register_backend("hccl", _create,
                                      devices=["npu", "cpu"])
