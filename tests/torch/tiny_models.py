# SPDX-License-Identifier: GPL-2.0
"""The models the torch tests and the export tests share, in plain torch
(no torch_npu import): torchvision's ResNet-18, which does not import
here, and transformers' BERT and GPT-2 from tiny configs (no download).

tests/torch/cnn_worker.py trains the ResNet-18 on npu,
tests/torch/test_transformers_train.py the transformers, and
tests/conformance/test_atc_export.py exports them to ONNX for davinci-atc.
"""

from __future__ import annotations

import torch
from torch import nn


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions with batch norm, and a
    1x1 convolution with batch norm on the shortcut where the shape
    changes."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False),
                nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet18(nn.Module):
    """torchvision's resnet18 (BasicBlock, [2, 2, 2, 2], widths 64 to
    512), which does not import here."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride),
                                        BasicBlock(cout, cout, 1)))
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.layers(x))
        return self.fc(torch.flatten(x, 1))


def tiny_bert(head: bool = True) -> nn.Module:
    """transformers' BertForMaskedLM (or, ``head`` false, BertModel): 2
    layers of hidden 32 and 2 heads over a vocabulary of 100, no
    dropout."""
    import transformers
    config = transformers.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=32, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0)
    return (transformers.BertForMaskedLM if head
            else transformers.BertModel)(config)


def tiny_gpt2() -> nn.Module:
    """transformers' GPT2LMHeadModel: 2 layers of 32 and 2 heads over a
    vocabulary of 100 and 32 positions, no dropout."""
    import transformers
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
