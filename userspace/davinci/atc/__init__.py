# SPDX-License-Identifier: GPL-2.0
"""davinci-atc: ONNX models -> davinci offline models (``.om``).

    from davinci import atc
    atc.convert_file("mlp.onnx", "mlp", input_shape="x:1,784")

or, as Huawei's ATC is run, ``davinci-atc --model mlp.onnx --framework=5
--output mlp --soc_version=Ascend310``. The file format is
:mod:`davinci.omfile`; ``acl.mdl`` and :class:`davinci.model.Model` load it.
"""

from .builder import ConversionError
from .convert import convert, convert_file, parse_input_shape
from .lower import supported_ops

__all__ = ["convert", "convert_file", "parse_input_shape", "supported_ops",
           "ConversionError"]
