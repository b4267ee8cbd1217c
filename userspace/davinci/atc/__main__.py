# SPDX-License-Identifier: GPL-2.0
"""davinci-atc's command line, with Huawei ATC's flags."""

from __future__ import annotations

import argparse
import sys

from .builder import ConversionError
from .convert import convert_file

#: ATC's --framework values
_FRAMEWORKS = {0: "Caffe", 1: "MindSpore", 3: "TensorFlow", 5: "ONNX"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="davinci-atc",
        description="Convert an ONNX model into a davinci offline model "
                    "(.om) that acl.mdl loads.")
    p.add_argument("--model", required=True, help="the ONNX model file")
    p.add_argument("--framework", type=int, default=5,
                   help="5 (ONNX), the only source framework supported")
    p.add_argument("--output", required=True,
                   help="output path; .om is appended")
    p.add_argument("--soc_version", default="davinci",
                   help="recorded in the model (any value is accepted)")
    p.add_argument("--input_shape", default=None,
                   help='"name:d0,d1;name2:..." (-1: the dynamic batch)')
    p.add_argument("--dynamic_batch_size", default=None,
                   help='batch sizes of a dynamic-batch model, "1,2,4,8"')
    p.add_argument("--input_format", default="ND",
                   help="ND, NCHW or NHWC (recorded for 4-D inputs)")
    p.add_argument("--log", default="null", help="accepted, ignored")
    return p


def main(argv: "list[str] | None" = None) -> int:
    args = _parser().parse_args(argv)
    if args.framework != 5:
        print("davinci-atc: --framework=%d (%s) is not supported: export the "
              "model to ONNX and use --framework=5" % (
                  args.framework, _FRAMEWORKS.get(args.framework, "unknown")),
              file=sys.stderr)
        return 2
    try:
        path = convert_file(args.model, args.output,
                            input_shape=args.input_shape,
                            dynamic_batch_size=args.dynamic_batch_size,
                            soc_version=args.soc_version,
                            input_format=args.input_format)
    except (ConversionError, OSError) as exc:
        print("davinci-atc: ATC run failed: %s" % exc, file=sys.stderr)
        return 1
    print("ATC run success, welcome to the next use. (wrote %s)" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
