#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Offline-model classification, shaped like Ascend's pyACL classification
samples: the digits MLP of mlp_digits.py is exported to ONNX, converted
with davinci-atc, then loaded and run with acl.mdl (load the model, make
its description and datasets, copy the images in, execute, read the
probabilities, print the top classes, free everything). Exit 0 when the
NPU's accuracy is the host's."""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

import acl
from _common import check   # check(ret, what): exit 1 unless ACL_SUCCESS
from mlp_digits import infer_host, load_data, train

BATCH = 16
#: fewer than mlp_digits.py: the sample is about the model, not training
EPOCHS = 100


def export_onnx(path, w1, b1, w2, b2):
    """The trained MLP as an ONNX graph, as torch.onnx.export writes one:
    Gemm, Relu, Gemm, Softmax with a dynamic batch."""
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["image", "w1", "b1"], ["h"], name="fc1"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2"),
         helper.make_node("Softmax", ["logits"], ["prob"], name="softmax",
                          axis=-1)],
        "digits_mlp",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                       ["batch", 64])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT,
                                       ["batch", 10])],
        [numpy_helper.from_array(a, n) for n, a in
         (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         path)


def atc(onnx_path, om_base):
    """davinci-atc, as Ascend users run atc (here through its Python API,
    which the command below runs too)."""
    from davinci.atc import convert_file
    print("   davinci-atc --model %s --framework=5 --output %s "
          "--soc_version=Ascend310 --input_shape=image:%d,64"
          % (os.path.basename(onnx_path), os.path.basename(om_base), BATCH))
    return convert_file(onnx_path, om_base, soc_version="Ascend310",
                        input_shape="image:%d,64" % BATCH)


class Net:
    """The classification samples' model wrapper: load, datasets, run."""

    def __init__(self, model_path):
        self.model_id, ret = acl.mdl.load_from_file(model_path)
        check(ret, "acl.mdl.load_from_file")
        self.desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self.desc, self.model_id), "acl.mdl.get_desc")
        self.input = self._dataset(acl.mdl.get_num_inputs(self.desc),
                                   acl.mdl.get_input_size_by_index)
        self.output = self._dataset(acl.mdl.get_num_outputs(self.desc),
                                    acl.mdl.get_output_size_by_index)

    def _dataset(self, count, size_of):
        dataset = acl.mdl.create_dataset()
        for i in range(count):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            check(ret, "acl.rt.malloc")
            buf = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, buf)
            check(ret, "acl.mdl.add_dataset_buffer")
        return dataset

    def run(self, images):
        buf = acl.mdl.get_dataset_buffer(self.input, 0)
        images = np.ascontiguousarray(images, np.float32)
        check(acl.rt.memcpy(acl.get_data_buffer_addr(buf),
                            acl.get_data_buffer_size(buf),
                            acl.util.numpy_to_ptr(images), images.nbytes,
                            acl.ACL_MEMCPY_HOST_TO_DEVICE), "memcpy H2D")
        check(acl.mdl.execute(self.model_id, self.input, self.output),
              "acl.mdl.execute")
        dims, ret = acl.mdl.get_cur_output_dims(self.desc, 0)
        check(ret, "acl.mdl.get_cur_output_dims")
        out = np.empty(dims["dims"], np.float32)
        buf = acl.mdl.get_dataset_buffer(self.output, 0)
        check(acl.rt.memcpy(acl.util.numpy_to_ptr(out), out.nbytes,
                            acl.get_data_buffer_addr(buf), out.nbytes,
                            acl.ACL_MEMCPY_DEVICE_TO_HOST), "memcpy D2H")
        return out

    def release(self):
        for dataset in (self.input, self.output):
            for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                buf = acl.mdl.get_dataset_buffer(dataset, i)
                check(acl.rt.free(acl.get_data_buffer_addr(buf)),
                      "acl.rt.free")
                check(acl.destroy_data_buffer(buf), "destroy_data_buffer")
            check(acl.mdl.destroy_dataset(dataset), "destroy_dataset")
        check(acl.mdl.destroy_desc(self.desc), "acl.mdl.destroy_desc")
        check(acl.mdl.unload(self.model_id), "acl.mdl.unload")


def main():
    x_train, y_train, x_test, y_test = load_data()
    weights = train(x_train, y_train, epochs=EPOCHS)
    n = len(x_test) // BATCH * BATCH
    x_test, y_test = x_test[:n], y_test[:n]
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "digits_mlp.onnx")
        export_onnx(onnx_path, *weights)
        om_path = atc(onnx_path, os.path.join(tmp, "digits_mlp"))

        check(acl.init(), "acl.init")
        check(acl.rt.set_device(0), "acl.rt.set_device")
        context, ret = acl.rt.create_context(0)
        check(ret, "acl.rt.create_context")
        net = Net(om_path)
        probs = np.concatenate([net.run(x_test[i:i + BATCH])
                                for i in range(0, n, BATCH)])
        net.release()
        check(acl.rt.destroy_context(context), "acl.rt.destroy_context")
        check(acl.rt.reset_device(0), "acl.rt.reset_device")
        check(acl.finalize(), "acl.finalize")

    top = np.argsort(-probs[0])[:3]
    print("   image 0 (a %d): top-3 classes %s, probabilities %s"
          % (y_test[0], top.tolist(), np.round(probs[0][top], 4).tolist()))
    host = infer_host(x_test, *weights)
    npu_acc = float((probs.argmax(1) == y_test).mean())
    host_acc = float((host.argmax(1) == y_test).mean())
    print("   %d digits in %d executes: NPU accuracy %.2f%%, host %.2f%%; "
          "max |p_npu - p_host| = %.2e" % (n, n // BATCH, 100 * npu_acc,
                                           100 * host_acc,
                                           float(np.abs(probs - host).max())))
    return 0 if npu_acc == host_acc else 1


if __name__ == "__main__":
    sys.exit(main())
