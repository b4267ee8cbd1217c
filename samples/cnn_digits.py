#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A CNN on the NPU end to end: a small ResNet (convolutions, batch norm,
a residual block, max and global average pooling) trained on npu:0 with
``import torch_npu`` against the same model trained on the CPU, every op
a device task (``torch_npu.fallback_ops()`` empty); then the trained model
exported to ONNX, converted with davinci-atc and classifying the test
digits through acl.mdl, as Ascend's classification samples do, against
the host's predictions. Data: scikit-learn's bundled 8x8 digits. Exit 0
when both agree with the host."""
import copy
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
from torch import nn

import acl
import torch_npu
from _common import check
from acl_model import Net
from torch_digits import data

EPOCHS = 2
BATCH = 64


class Block(nn.Module):
    """ResNet's basic block: conv, batch norm, ReLU, conv, batch norm, and
    the input added back."""

    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c),
            nn.ReLU(), nn.Conv2d(c, c, 3, padding=1, bias=False),
            nn.BatchNorm2d(c))

    def forward(self, x):
        return torch.relu(self.body(x) + x)


def resnet():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
        nn.ReLU(), Block(16), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def train(model, device, x, y):
    model = copy.deepcopy(model).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    lossf = nn.CrossEntropyLoss()
    x, y = x.to(device), y.to(device)
    t0 = time.perf_counter()
    for _ in range(EPOCHS):
        for i in range(0, len(x), BATCH):
            opt.zero_grad()
            loss = lossf(model(x[i:i + BATCH]), y[i:i + BATCH])
            loss.backward()
            opt.step()
    return model, loss.item(), time.perf_counter() - t0


def classify_offline(model, images):
    """The model through ONNX, davinci-atc and acl.mdl: probabilities."""
    model = copy.deepcopy(model).cpu().eval()
    n = len(images)
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "digits_resnet.onnx")
        torch.onnx.export(nn.Sequential(model, nn.Softmax(1)),
                          (torch.zeros(n, 1, 8, 8),), onnx_path,
                          input_names=["image"], output_names=["prob"],
                          dynamo=False)
        from davinci.atc import convert_file
        print("   davinci-atc --model digits_resnet.onnx --framework=5 "
              "--output digits_resnet --input_shape=image:%d,1,8,8" % n)
        om = convert_file(onnx_path, os.path.join(tmp, "digits_resnet"),
                          soc_version="Ascend310")
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(0), "acl.rt.set_device")
        context, ret = acl.rt.create_context(0)
        check(ret, "acl.rt.create_context")
        net = Net(om)
        probs = net.run(images.numpy())
        net.release()
        check(acl.rt.destroy_context(context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(0), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")
    return probs


def main() -> int:
    warnings.simplefilter("ignore")
    x, y, xt, yt = data()
    x, xt = x.reshape(-1, 1, 8, 8), xt.reshape(-1, 1, 8, 8)
    torch.manual_seed(0)
    model = resnet()
    cpu, loss_c, t_c = train(model, "cpu", x, y)
    npu, loss_n, t_n = train(model, "npu:0", x, y)
    with torch.no_grad():
        acc_c = (cpu.eval()(xt).argmax(1) == yt).float().mean().item()
        pred_n = npu.eval()(xt.to("npu:0")).cpu().argmax(1)
    acc_n = (pred_n == yt).float().mean().item()
    fell_back = torch_npu.fallback_ops()
    print("   cpu:   loss %.4f  test accuracy %.3f  (%d epochs, %.2f s)"
          % (loss_c, acc_c, EPOCHS, t_c))
    print("   npu:0: loss %.4f  test accuracy %.3f  (%d epochs, %.2f s); "
          "ops on the CPU: %s" % (loss_n, acc_n, EPOCHS, t_n,
                                  ", ".join(fell_back) or "none"))
    probs = classify_offline(npu, xt)
    with torch.no_grad():
        host = torch.softmax(npu.cpu()(xt), 1).numpy()
    agree = float((probs.argmax(1) == host.argmax(1)).mean())
    print("   acl.mdl: %d digits, accuracy %.3f, the same class as the host "
          "for %.1f%%; max |p_npu - p_host| = %.2e"
          % (len(xt), float((probs.argmax(1) == yt.numpy()).mean()),
             100 * agree, float(np.abs(probs - host).max())))
    ok = abs(acc_n - acc_c) <= 0.02 and acc_n > 0.9 and agree == 1.0
    print("   same result as the host" if ok else "   DIFFERENT from the host")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
