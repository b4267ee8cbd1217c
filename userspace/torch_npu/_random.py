# SPDX-License-Identifier: GPL-2.0
"""``torch.npu.random``: the generator npu random ops draw from.

Every npu device draws from one generator, the CPU's: the device's own
random ops (dropout, uniform_, bernoulli_: Philox4x32-10, NUMERICS.md)
take each draw's key from it, the others run on the CPU (the fallback in
torch_npu._kernels). These functions (Ascend's and torch.cuda's names)
seed it and save and restore its state, which transformers' and
accelerate's checkpoints do.
"""

from __future__ import annotations

import torch

from . import _devices

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all"]

_generator = torch.random.default_generator


def manual_seed(seed: int) -> None:
    """Seed the generator npu random ops use (the CPU generator)."""
    _generator.manual_seed(int(seed))


manual_seed_all = manual_seed


def seed() -> None:
    _generator.seed()


seed_all = seed


def initial_seed() -> int:
    return _generator.initial_seed()


def get_rng_state(device="npu") -> torch.Tensor:
    """The generator's state (a CPU ByteTensor, as torch.cuda's)."""
    return _generator.get_state()


def set_rng_state(new_state: torch.Tensor, device="npu") -> None:
    _generator.set_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    """One state per device (the same: the devices share the
    generator)."""
    return [get_rng_state(i) for i in range(_devices.device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore what :func:`get_rng_state_all` saved; the devices share one
    generator, which takes the last state."""
    for state in new_states:
        set_rng_state(state)
