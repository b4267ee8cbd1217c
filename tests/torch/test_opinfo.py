# SPDX-License-Identifier: GPL-2.0
"""PyTorch's OpInfo database on npu against CPU torch (opinfo_worker.py):
every entry's sample inputs, in-place variants and error inputs. The walk
runs in a process of its own, so an op that kills it is named."""

import json
import os
import subprocess
import sys

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "opinfo_worker.py")
USERSPACE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "userspace")


def test_opinfo_samples_match_the_cpu(npu, clean):
    env = dict(os.environ, PYTHONPATH=USERSPACE + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, WORKER], env=env,
                          capture_output=True, text=True, timeout=1200)
    lines = [json.loads(line) for line in proc.stdout.splitlines()
             if line.startswith("{")]
    started = [x["start"] for x in lines if "start" in x]
    done = any(x.get("done") for x in lines)
    assert done and proc.returncode == 0, (
        "the walk died (exit %d) in OpInfo %r:\n%s" % (
            proc.returncode, started[-1] if started else None,
            proc.stderr[-3000:]))
    results = [x for x in lines if "op" in x]
    wrong = [x for x in results if x["failures"]]
    fell_back = next(x for x in lines if x.get("done"))["fallback_ops"]
    print("\nOpInfo on npu: %d entries, %d samples, %d of them unsupported "
          "(sparse); %d ATen ops ran on the CPU through the fallback; %d "
          "entries wrong" % (
              len(results), sum(x["samples"] for x in results),
              sum(x["unsupported"] for x in results), len(fell_back),
              len(wrong)))
    assert not wrong, "\n".join(
        "%s%s: %d of %d samples: %s" % (
            x["op"], "." + x["variant"] if x["variant"] else "",
            x["failures"], x["samples"], "; ".join(x["problems"]))
        for x in wrong)
