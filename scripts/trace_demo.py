# SPDX-License-Identifier: GPL-2.0
"""The workload drawn in docs/trace-timeline.png (``make trace-png``).

Three streams of device 0: a 512 x 512 matmul on the first, adds and exps
on the second, and a third that waits for an event recorded after the
matmul, then takes its softmax. With two AI cores, the matmul holds one
core while the elementwise ops share the other.
"""

import numpy as np

import davinci
from davinci import ops


def main() -> None:
    rng = np.random.default_rng(0)
    with davinci.Device(0) as dev:
        s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
        a = dev.tensor(rng.standard_normal((512, 512), dtype=np.float32))
        x = dev.tensor(rng.standard_normal((512, 1024), dtype=np.float32))
        c = ops.matmul(a, a, stream=s1)
        done = dev.event()
        done.record(s1)
        for _ in range(4):
            x = ops.exp(ops.add(x, x, stream=s2), stream=s2)
        s3.wait_event(done)
        y = ops.softmax(c, stream=s3)
        for s in (s1, s2, s3):
            s.synchronize()
        y.numpy()


if __name__ == "__main__":
    main()
