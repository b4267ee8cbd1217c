# SPDX-License-Identifier: GPL-2.0
"""Autograd: an MLP on scikit-learn's digits trained on npu:0 follows the
CPU's loss curve from the same weights and reaches its accuracy."""

import copy
import json
import os
import subprocess
import sys

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


USERSPACE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "userspace")

#: ATen ops a training step may still run on the CPU. Empty: the forward
#: (linear, relu, log_softmax), CrossEntropyLoss (nll_loss), the backward
#: and SGD/Adam's updates all have device kernels. (Outside the step, an
#: accuracy check's argmax and == on int64/bool still fall back: the device
#: has no int64 or bool dtype.)
STEP_CPU_ALLOWED: frozenset[str] = frozenset()

#: a fresh process (fallback_ops() starts empty) runs training steps
STEP_CHILD = r"""
import json, sys, warnings
import torch
import torch_npu
from torch import nn
torch.set_num_threads(1)
warnings.simplefilter("ignore")
torch.manual_seed(0)
X = torch.rand(96, 64).to("npu")
Y = torch.randint(0, 10, (96,)).to("npu")
model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
model = model.to("npu")
make = {"sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
        "adam": lambda p: torch.optim.Adam(p, lr=0.01)}[sys.argv[1]]
opt = make(model.parameters())
for _ in range(3):
    opt.zero_grad()
    nn.CrossEntropyLoss()(model(X), Y).backward()
    opt.step()
torch.npu.synchronize()
print(json.dumps(sorted(torch_npu.fallback_ops())))
"""


@pytest.mark.parametrize("opt", ["sgd-momentum", "adam"])
def test_training_step_stays_on_the_device(npu, opt):
    # this checkout's torch_npu, not the one installed in the venv
    env = dict(os.environ, PYTHONPATH=USERSPACE + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", STEP_CHILD, opt],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    ran_on_cpu = set(json.loads(r.stdout.strip().splitlines()[-1]))
    assert ran_on_cpu <= STEP_CPU_ALLOWED, (
        "a training step with %s ran these ops on the CPU: %s"
        % (opt, sorted(ran_on_cpu - STEP_CPU_ALLOWED)))
