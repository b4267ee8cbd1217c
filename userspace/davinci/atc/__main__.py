# SPDX-License-Identifier: GPL-2.0
"""davinci-atc's command line, with Huawei ATC's flags."""

from __future__ import annotations

import argparse
import os
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
    p.add_argument("--model", help="the ONNX model file")
    p.add_argument("--singleop", default=None,
                   help="ATC's single-op JSON: compile each operator into "
                        "a model file in the --output directory, for "
                        "acl.op.set_model_dir")
    p.add_argument("--framework", type=int, default=5,
                   help="5 (ONNX), the only source framework supported")
    p.add_argument("--output", required=True,
                   help="output path; .om is appended (--singleop: a "
                        "directory)")
    p.add_argument("--soc_version", default="davinci",
                   help="recorded in the model (any value is accepted)")
    p.add_argument("--input_shape", default=None,
                   help='"name:d0,d1;name2:..." (-1: the dynamic batch)')
    p.add_argument("--dynamic_batch_size", default=None,
                   help='batch sizes of a dynamic-batch model, "1,2,4,8"')
    p.add_argument("--input_format", default="ND",
                   help="ND, NCHW or NHWC (recorded for 4-D inputs)")
    p.add_argument("--insert_op_conf", default=None,
                   help="an AIPP config (aipp_op { ... }): its stage goes "
                        "in front of the model, whose input becomes the u8 "
                        "picture")
    p.add_argument("--output_type", default=None,
                   help='FP32, FP16, UINT8 ... for every output, or '
                        '"node:index:FP16;..." for some')
    p.add_argument("--dynamic_image_size", default=None,
                   help='image sizes of a model whose inputs\' height and '
                        'width are -1 in --input_shape, "112,112;224,224"')
    p.add_argument("--log", default="null", help="accepted, ignored")
    return p


def _singleop(json_path: str, out_dir: str) -> int:
    """ATC's --singleop: one model file per operator, each checked as
    acl.op checks the operator it describes."""
    from acl import singleop
    try:
        with open(json_path, encoding="utf-8") as f:
            models = singleop.compile_json(f.read())
        os.makedirs(out_dir, exist_ok=True)
        for name, data in models:
            with open(os.path.join(out_dir, name), "wb") as f:
                f.write(data)
    except (singleop.SpecError, OSError) as exc:
        print("davinci-atc: ATC run failed: %s: %s" % (json_path, exc),
              file=sys.stderr)
        return 1
    for name, _ in models:
        print("davinci-atc: wrote %s" % os.path.join(out_dir, name))
    print("ATC run success, welcome to the next use.")
    return 0


def main(argv: "list[str] | None" = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.singleop is not None:
        if args.model is not None:
            parser.error("--singleop and --model are two kinds of run: "
                         "give one")
        return _singleop(args.singleop, args.output)
    if args.model is None:
        parser.error("--model (an ONNX file) or --singleop (a single-op "
                     "JSON) is required")
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
                            input_format=args.input_format,
                            insert_op_conf=args.insert_op_conf,
                            output_type=args.output_type,
                            dynamic_image_size=args.dynamic_image_size)
    except (ConversionError, OSError) as exc:
        print("davinci-atc: ATC run failed: %s" % exc, file=sys.stderr)
        return 1
    print("ATC run success, welcome to the next use. (wrote %s)" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
