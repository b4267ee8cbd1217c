# SPDX-License-Identifier: GPL-2.0
"""The objects behind acl.mdl's int handles: loaded models, model
descriptions and datasets."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from davinci import omfile as F
from davinci.model import Model

from .. import _state as S
from .. import constants as C
from .._state import AclFail

#: omfile format name -> aclFormat
ACL_FORMATS = {"NCHW": C.ACL_FORMAT_NCHW, "NHWC": C.ACL_FORMAT_NHWC,
               "ND": C.ACL_FORMAT_ND, "NC1HWC0": C.ACL_FORMAT_NC1HWC0}


@dataclass
class AclModel:
    """A model loaded on an ACL device (``device``: its S.AclDevice)."""
    id: int
    device: S.AclDevice
    model: Model
    cur_gear: int = -1          # gear of the last execute, -1: none yet


@dataclass
class ModelDesc:
    model: "AclModel | None" = None

    def om(self) -> F.OfflineModel:
        if self.model is None:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "the model description is empty: fill it with "
                          "acl.mdl.get_desc(desc, model_id) first")
        return self.model.model.om


@dataclass
class Dataset:
    buffers: list[int] = field(default_factory=list)   # data buffer handles
    batch: int = 0              # set_dynamic_batch_size's choice
    hw: tuple = ()              # set_dynamic_hw_size's (height, width)


_ids = itertools.count(1)
models: dict[int, AclModel] = {}
descs: dict[int, ModelDesc] = {}
datasets: dict[int, Dataset] = {}


def next_model_id() -> int:
    return next(_ids)


def get_model(model_id) -> AclModel:
    m = models.get(model_id) if isinstance(model_id, int) else None
    if m is not None and S.devices.get(m.device.id) is not m.device:
        models.pop(model_id, None)      # its device was reset
        m = None
    if m is None:
        raise AclFail(C.ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
                      "model id %r is not a loaded model (unloaded, or its "
                      "device was reset): load it with "
                      "acl.mdl.load_from_file" % (model_id,))
    return m


def _lookup(table: dict, h, what: str):
    obj = table.get(h) if isinstance(h, int) else None
    if obj is None:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%r is not a %s" % (h, what))
    return obj


def get_desc(desc) -> ModelDesc:
    return _lookup(descs, desc, "model description from acl.mdl.create_desc")


def get_dataset(dataset) -> Dataset:
    return _lookup(datasets, dataset, "dataset from acl.mdl.create_dataset")


def io_at(ios: list, index, what: str):
    if not isinstance(index, int) or not 0 <= index < len(ios):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "%s index %r outside 0..%d" % (what, index,
                                                     len(ios) - 1))
    return ios[index]
