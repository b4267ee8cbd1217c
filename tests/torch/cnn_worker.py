# SPDX-License-Identifier: GPL-2.0
"""A whole CNN on npu and on the CPU from the same initial weights, in a
fresh process (torch_npu.fallback_ops() starts empty), for
tests/torch/test_cnn.py:

    python cnn_worker.py digits|resnet18 RESULT.pt

saves a dict of both runs' results and the ops that ran on the CPU."""

from __future__ import annotations

import copy
import sys
import warnings

import torch
from torch import nn

import torch_npu

from tiny_models import ResNet18

torch.set_num_threads(1)
warnings.simplefilter("ignore")     # the fallback's one-time warnings


def digits_cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


EPOCHS, BATCH, TRAIN = 3, 100, 1400


def train_digits(model: nn.Module, device: str, X, Y) -> dict:
    """EPOCHS of SGD momentum over the first TRAIN digits in batches
    (slices: no indexing op), then the accuracy on the rest in eval
    mode (batch norm's running statistics)."""
    m = copy.deepcopy(model).to(device)
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
    Xd, Yd = X.to(device), Y.to(device)
    losses = []
    for _ in range(EPOCHS):
        for i in range(0, TRAIN, BATCH):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(Xd[i:i + BATCH]),
                                               Yd[i:i + BATCH])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    m.eval()
    with torch.no_grad():
        logits = m(Xd[TRAIN:]).cpu()
    return {"losses": losses,
            "accuracy": (logits.argmax(1) == Y[TRAIN:]).float().mean().item(),
            "state": {k: v.cpu() for k, v in m.state_dict().items()}}


def step_resnet(model: nn.Module, device: str, x, y) -> dict:
    """A forward in training mode, cross entropy, backward and one SGD
    momentum step."""
    m = copy.deepcopy(model).to(device)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    out = m(x.to(device))
    nn.functional.cross_entropy(out, y.to(device)).backward()
    opt.step()
    return {"out": out.detach().cpu(),
            "grads": {n: p.grad.cpu() for n, p in m.named_parameters()},
            "state": {k: v.cpu() for k, v in m.state_dict().items()}}


def main(which: str, path: str) -> None:
    torch.manual_seed(0)
    if which == "digits":
        from sklearn.datasets import load_digits
        d = load_digits()
        perm = torch.randperm(len(d.target))
        X = (torch.tensor(d.data, dtype=torch.float32) / 16).reshape(
            -1, 1, 8, 8)[perm].contiguous()
        Y = torch.tensor(d.target)[perm].contiguous()
        model = digits_cnn()
        runs = {dev: train_digits(model, dev, X, Y)
                for dev in ("cpu", "npu")}
    else:
        model = ResNet18()
        # 64 x 64: layer4's batch norms see 2 x 2 x 2 values per channel
        # (at 32 x 32 only 2, whose normalised values are +-1 whatever
        # the input: the gradients through them are rounding noise)
        x, y = torch.randn(2, 3, 64, 64), torch.tensor([1, 7])
        runs = {dev: step_resnet(model, dev, x, y) for dev in ("cpu", "npu")}
        runs["init"] = {k: v.clone() for k, v in model.state_dict().items()}
    torch.npu.synchronize()
    runs["fallback_ops"] = sorted(torch_npu.fallback_ops())
    torch.save(runs, path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
