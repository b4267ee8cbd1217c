# SPDX-License-Identifier: GPL-2.0
"""Autograd: an MLP on scikit-learn's digits trained on npu:0 follows the
CPU's loss curve from the same weights and reaches its accuracy."""

import copy

import pytest
import torch
from torch import nn

STEPS = 25
#: loss curves agree to this (float32 sums in another order on the device)
LOSS_TOL = 1e-5


@pytest.fixture(scope="module")
def digits():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_digits()
    return (torch.tensor(d.data, dtype=torch.float32) / 16,
            torch.tensor(d.target))


def _train(model, device, make_opt, X, Y):
    m = copy.deepcopy(model).to(device)
    opt = make_opt(m.parameters())
    lossf = nn.CrossEntropyLoss()
    Xd, Yd = X.to(device), Y.to(device)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = lossf(m(Xd), Yd)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        acc = (m(Xd).argmax(1).cpu() == Y).float().mean().item()
    return losses, acc, [p.detach().cpu() for p in m.parameters()]


@pytest.mark.parametrize("make_opt", [
    lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: torch.optim.Adam(p, lr=0.01),
], ids=["sgd-momentum", "adam"])
def test_mlp_matches_cpu(npu, digits, make_opt):
    X, Y = digits
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    lc, ac, pc = _train(model, "cpu", make_opt, X, Y)
    ln, an, pn = _train(model, "npu", make_opt, X, Y)
    assert ln[-1] < ln[0] * 0.7                       # it learned
    for a, b in zip(lc, ln):
        assert abs(a - b) <= LOSS_TOL * max(1.0, abs(a)), (lc, ln)
    assert abs(ac - an) <= 1 / len(Y) * 2
    for a, b in zip(pc, pn):
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)
