"""PyTorch on the NPU: an MLP trained on npu:0 with ``import torch_npu``.

The same script as for an Ascend NPU: the model, the data and the optimizer
live on "npu"; the device runs the matmuls, elementwise ops and the
optimizer's updates, and ops without a device kernel run on the CPU (one
warning each, silenced here). The same model trained from the same weights
on the CPU reaches the same test accuracy. Data: scikit-learn's bundled 8x8
digits (no download).
"""
import copy
import sys
import time
import warnings

import torch
from sklearn.datasets import load_digits
from torch import nn

import torch_npu  # noqa: F401  (registers the npu device and torch.npu)

STEPS = 30


def data():
    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16
    y = torch.tensor(d.target)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    split = int(len(x) * 0.8)
    return x[:split], y[:split], x[split:], y[split:]


def train(model, device, x, y, xt, yt):
    model = copy.deepcopy(model).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    lossf = nn.CrossEntropyLoss()
    x, y = x.to(device), y.to(device)
    t0 = time.perf_counter()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
    final = loss.item()
    seconds = time.perf_counter() - t0
    with torch.no_grad():
        pred = model(xt.to(device)).argmax(1).cpu()
    return final, (pred == yt).float().mean().item(), seconds


def main() -> int:
    warnings.simplefilter("ignore")
    x, y, xt, yt = data()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    print("npu devices: %d (%s)" % (torch.npu.device_count(),
                                    torch.npu.get_device_name(0)))
    loss_c, acc_c, t_c = train(model, "cpu", x, y, xt, yt)
    loss_n, acc_n, t_n = train(model, "npu:0", x, y, xt, yt)
    print("cpu:   loss %.4f  test accuracy %.3f  (%d steps, %.2f s)"
          % (loss_c, acc_c, STEPS, t_c))
    print("npu:0: loss %.4f  test accuracy %.3f  (%d steps, %.2f s)"
          % (loss_n, acc_n, STEPS, t_n))
    print("device memory: %d bytes allocated, %d reserved"
          % (torch.npu.memory_allocated(), torch.npu.memory_reserved()))
    ok = acc_n > 0.9 and abs(acc_n - acc_c) < 0.01 and \
        abs(loss_n - loss_c) < 1e-4
    print("same result as the CPU" if ok else "DIFFERENT from the CPU")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
