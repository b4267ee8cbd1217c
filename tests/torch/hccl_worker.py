# SPDX-License-Identifier: GPL-2.0
"""One rank of test_hccl.py, launched by torchrun: collectives on npu
tensors through the "hccl" process group, then one DDP step checked against
the single-process full-batch step. Exits non-zero on any mismatch."""

import torch
import torch.distributed as dist
from torch import nn

import torch_npu  # noqa: F401  (registers npu and hccl)


def collectives(rank: int, n: int, dev: torch.device) -> None:
    t = torch.full((4,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    assert torch.equal(t.cpu(), torch.full((4,), float(n * (n + 1) // 2)))
    b = torch.full((3,), float(rank), device=dev)
    dist.broadcast(b, src=n - 1)
    assert torch.equal(b.cpu(), torch.full((3,), float(n - 1)))
    outs = [torch.empty(2, device=dev) for _ in range(n)]
    dist.all_gather(outs, torch.full((2,), float(rank), device=dev))
    for i, o in enumerate(outs):
        assert o.device == dev and torch.equal(o.cpu(), torch.full((2,), i))
    flat = torch.empty(2 * n, device=dev)
    dist.all_gather_into_tensor(flat, torch.full((2,), float(rank),
                                                 device=dev))
    assert torch.equal(flat.cpu(), torch.arange(n).repeat_interleave(2)
                       .float())
    out = torch.empty(2, device=dev)
    dist.reduce_scatter(out, [torch.full((2,), float(rank + i), device=dev)
                              for i in range(n)])
    want = sum(r + rank for r in range(n))
    assert torch.equal(out.cpu(), torch.full((2,), float(want))), out
    dist.reduce_scatter_tensor(out, torch.arange(2 * n, dtype=torch.float32,
                                                 device=dev))
    assert torch.equal(out.cpu(), n * torch.arange(2 * rank, 2 * rank + 2)
                       .float())
    dist.barrier()


def ddp_step(rank: int, n: int, dev: torch.device) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    X, Y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    ref.load_state_dict(model.state_dict())
    ref = ref.to(dev)
    ddp = nn.parallel.DistributedDataParallel(model.to(dev),
                                              device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    nn.CrossEntropyLoss()(ddp(X.chunk(n)[rank].to(dev)),
                          Y.chunk(n)[rank].to(dev)).backward()
    opt.step()
    ropt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    nn.CrossEntropyLoss()(ref(X.to(dev)), Y.to(dev)).backward()
    ropt.step()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        assert p.device == dev
        torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(),
                                   rtol=1e-6, atol=1e-7)


def main() -> None:
    dist.init_process_group("hccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "hccl"
    torch.npu.set_device(rank)
    dev = torch.device("npu", rank)
    collectives(rank, n, dev)
    ddp_step(rank, n, dev)
    dist.destroy_process_group()
    print("rank %d ok" % rank)


if __name__ == "__main__":
    main()
