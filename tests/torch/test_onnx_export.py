# SPDX-License-Identifier: GPL-2.0
"""An MLP exported by torch.onnx.export, converted by davinci-atc and run
as an offline model, against torch on the CPU. (The converter and acl.mdl
are tested without torch in tests/conformance on every backend.)"""

import numpy as np
import pytest

import davinci
from davinci import atc
from davinci.model import Model

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")


@pytest.mark.parametrize("flatten", ["module", "view"])
def test_exported_mlp_runs_as_an_offline_model(tmp_path, flatten):
    """nn.Flatten exports as Flatten; x.view(x.size(0), -1) as Shape,
    Gather, Unsqueeze, Concat and Reshape, folded at conversion time."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.flat = torch.nn.Flatten()
            self.fc1 = torch.nn.Linear(64, 32)
            self.fc2 = torch.nn.Linear(32, 10, bias=False)

        def forward(self, x):
            x = self.flat(x) if flatten == "module" else x.view(x.size(0), -1)
            h = torch.relu(self.fc1(x)) * 0.5 + 1.0
            return torch.softmax(self.fc2(h), dim=1)
    net = Net().eval()
    x = torch.randn(5, 1, 8, 8)
    path = str(tmp_path / "mlp.onnx")
    torch.onnx.export(net, (x,), path, input_names=["image"],
                      output_names=["prob"], dynamo=False,
                      dynamic_axes={"image": {0: "batch"}})
    data = atc.convert(path, input_shape="image:-1,1,8,8",
                       dynamic_batch_size="1,5")
    with torch.no_grad():
        want = net(x).numpy()
    with davinci.Device(0) as dev:
        mod = Model(dev, data)
        out, = mod.run([x.numpy()], batch=5)
        one, = mod.run([x[:1].numpy()], batch=1)
        mod.unload()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(one, want[:1], rtol=1e-5, atol=1e-6)


def test_exported_resnet18_runs_as_an_offline_model(tmp_path):
    """A ResNet-18 (the real widths, 64 x 64 input, eval mode) exported by
    torch.onnx.export: Conv, BatchNormalization, Relu, MaxPool, Add,
    GlobalAveragePool, Flatten and Gemm, converted and run through the
    offline-model loader against torch on the CPU and onnxruntime."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tiny_models import ResNet18
    torch.manual_seed(0)
    net = ResNet18().eval()
    with torch.no_grad():           # statistics other than the init's
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.normal_(1, 0.1)
                m.bias.normal_(0, 0.1)
    x = torch.randn(2, 3, 64, 64)
    path = str(tmp_path / "resnet18.onnx")
    torch.onnx.export(net, (x,), path, input_names=["image"],
                      output_names=["logits"], dynamo=False)
    data = atc.convert(path)
    with torch.no_grad():
        want = net(x).numpy()
    with davinci.Device(0) as dev:
        with Model(dev, data) as mod:
            got, = mod.run([x.numpy()])
    rel = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert rel <= 1e-4, rel
    ort = pytest.importorskip("onnxruntime")
    ref, = ort.InferenceSession(path, providers=[
        "CPUExecutionProvider"]).run(None, {"image": x.numpy()})
    rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert rel <= 1e-4, rel
