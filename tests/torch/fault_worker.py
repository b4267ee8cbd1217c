# SPDX-License-Identifier: GPL-2.0
"""A model training on npu:1 while the device is lost or reset under it
(test_faults.py runs this in a child process). Prints what the next sync
raised; the device is reset (healthy) again before it exits."""

import sys
import time

import torch
from torch import nn

import torch_npu  # noqa: F401
from davinci.manager import Manager, ManagerPermissionError


def main(kind: str) -> int:
    dev = torch.device("npu:1")
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(),
                          nn.Linear(64, 4)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(64, 32).to(dev), torch.randint(0, 4, (64,)).to(dev)
    mgr = Manager()
    try:
        mgr.inject(1, "throttle", level=0)
    except ManagerPermissionError:
        print("no fault privilege")
        return 0
    try:
        for step in range(1000):
            opt.zero_grad()
            loss = nn.CrossEntropyLoss()(model(x), y)
            loss.backward()
            opt.step()
            if step == 3:
                if kind == "lost":
                    mgr.inject(1, "lost")
                else:
                    mgr.reset(1)
            torch.npu.synchronize(dev)
        print("no exception after the %s" % kind)
        return 1
    except Exception as e:          # noqa: BLE001 (reported to the test)
        print("raised %s: %s" % (type(e).__name__, e))
        return 0
    finally:
        t0 = time.monotonic()
        mgr.reset(1)
        while mgr.info(1).health_name != "OK" and \
                time.monotonic() - t0 < 10:
            time.sleep(0.05)
        mgr.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
