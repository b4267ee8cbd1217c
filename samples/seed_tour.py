"""The seed article's four capabilities, one after another, on a davinci NPU.

Device management, memory management (allocate, host-to-device,
device-to-host), task scheduling (a VectorAdd task on a stream and its
synchronisation) and interrupts (a notification raised by the device and
taken by the host). Runs on whatever backend discovery finds.
"""
import time

import numpy as np

import davinci


def step(title: str):
    """Print a step's title, then how long its body took."""
    class _Step:
        def __enter__(self):
            print("== %s" % title, flush=True)
            self.t0 = time.perf_counter()

        def __exit__(self, *exc):
            print("   (%.1f ms)" % ((time.perf_counter() - self.t0) * 1e3),
                  flush=True)
    return _Step()


def main() -> None:
    with step("device management"):
        backend = davinci.backend()
        count = davinci.device_count()
        print("   backend: %s, %d device(s)" % (backend.describe(), count))
        dev = davinci.Device(0)
        v, info = dev.version, dev.info
        print("   davinci0: %s serial %s, %d AI cores, HBM %d MiB, health %s"
              % (info.name, info.serial, info.aicores, info.hbm_total >> 20,
                 info.health_name))
        print("   driver %s, ABI %d.%d, backend %s"
              % (v.driver_version, v.abi_major, v.abi_minor, v.backend))

    n = 1 << 20
    with step("memory: allocate, host-to-device, device-to-host"):
        x_host = np.random.default_rng(0).standard_normal(n, np.float32)
        y_host = np.random.default_rng(1).standard_normal(n, np.float32)
        x = dev.tensor(x_host)
        y = dev.tensor(y_host)
        print("   two buffers of %d float32 at device addresses %#x, %#x"
              % (n, x.dev_addr, y.dev_addr))
        back = x.numpy()
        assert np.array_equal(back, x_host)
        mem = dev.mem_info()
        print("   round trip exact; HBM used %.1f MiB of %d MiB"
              % (mem.used / 2**20, mem.total >> 20))

    with step("task scheduling: VectorAdd on a stream"):
        stream = dev.stream()
        z = dev.empty(n, "float32")
        davinci.ops.add(x, y, out=z, stream=stream)
        stream.synchronize(timeout=30)
        assert np.array_equal(z.numpy(), x_host + y_host)
        done = stream.completion(stream.query().completed_seq)
        took = " in %.3f ms of device time" % (done.duration_ns / 1e6) \
            if done else ""
        print("   z = x + y over %d elements%s; equal to numpy's" % (n, took))

    with step("interrupts: the device notifies the host"):
        seq = stream.notify(user_data=0xC0FFEE)
        note = dev.wait_notification(timeout=10)
        assert note is not None and note.user_data == 0xC0FFEE
        print("   notification for task %d of stream %d, user data %#x"
              % (seq, stream.stream_id, note.user_data))

    dev.close()


if __name__ == "__main__":
    main()
