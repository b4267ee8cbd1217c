# SPDX-License-Identifier: GPL-2.0
"""Transformers trained on npu with no CPU fallback: a 2-layer
nn.TransformerEncoder, a GPT-style decoder (token and position Embedding,
LayerNorm, a qkv Linear, scaled_dot_product_attention(is_causal=True),
GELU(tanh), cross_entropy) and transformers' BertForMaskedLM and
GPT2LMHeadModel from tiny configs, each one forward, backward and AdamW
step in a fresh process (fallback_ops() starts empty) that leaves
fallback_ops() empty, against the same model on CPU torch (the same
state_dict; model.to("npu") keeps tied weights tied): the loss within
1e-4 and every gradient allclose at float32 tolerance (rtol 1.3e-6, atol
1e-5), and every updated parameter at that tolerance against CPU AdamW's
step from the device's gradients. (Against the CPU's own step it is not:
AdamW's first step is lr * g / (|g| + eps), and a gradient that is zero
but for rounding, as a key projection's bias's, moves by up to lr on one
side and not on the other.)"""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
USERSPACE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "userspace")

CHILD = r"""
import copy, json, sys, warnings
import torch, torch_npu
import torch.nn as nn
import torch.nn.functional as F
torch.set_num_threads(1)
warnings.simplefilter("ignore")
torch.manual_seed(0)
which = sys.argv[1]


class Block(nn.Module):
    def __init__(s, d=32, h=4):
        super().__init__()
        s.ln1 = nn.LayerNorm(d)
        s.qkv = nn.Linear(d, 3 * d)
        s.o = nn.Linear(d, d)
        s.ln2 = nn.LayerNorm(d)
        s.mlp = nn.Sequential(nn.Linear(d, 4 * d),
                              nn.GELU(approximate="tanh"),
                              nn.Linear(4 * d, d))
        s.h = h

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=2)
        q, k, v = [t.view(B, T, s.h, C // s.h).transpose(1, 2)
                   for t in (q, k, v)]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + s.o(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + s.mlp(s.ln2(x))


class GPT(nn.Module):
    def __init__(s, V=50, d=32):
        super().__init__()
        s.tok = nn.Embedding(V, d)
        s.pos = nn.Embedding(16, d)
        s.blocks = nn.Sequential(Block(), Block())
        s.ln = nn.LayerNorm(d)
        s.head = nn.Linear(d, V, bias=False)

    def forward(s, idx):
        T = idx.shape[1]
        x = s.tok(idx) + s.pos(torch.arange(T, device=idx.device))
        return s.head(s.ln(s.blocks(x)))


if which == "encoder":
    m = nn.TransformerEncoder(nn.TransformerEncoderLayer(
        32, 4, 64, dropout=0.0, batch_first=True), 2)
    x = torch.randn(2, 8, 32)
    def loss(m, x): return m(x).square().mean()
elif which == "gpt":
    m = GPT()
    x = torch.randint(0, 50, (2, 8))
    def loss(m, x): return F.cross_entropy(m(x)[:, :-1].reshape(-1, 50),
                                           x[:, 1:].reshape(-1))
else:
    sys.path.insert(0, sys.argv[2])
    from tiny_models import tiny_bert, tiny_gpt2
    m = tiny_bert() if which == "bert" else tiny_gpt2()
    x = torch.randint(0, 100, (2, 8))
    def loss(m, x): return m(input_ids=x, labels=x).loss

m.train()                   # (no dropout: p = 0, the draws would differ)
cpu = copy.deepcopy(m)
ref = copy.deepcopy(m)      # the CPU step from the device's gradients
dev = copy.deepcopy(m)
dev.load_state_dict(cpu.state_dict())
dev = dev.to("npu")
tied = [n for n, p in cpu.named_parameters()]
assert [n for n, p in dev.named_parameters()] == tied, "ties broken"
losses, grads = {}, {}
for name, model, inp in (("cpu", cpu, x), ("npu", dev, x.to("npu"))):
    l = loss(model, inp)
    l.backward()
    losses[name] = l.item()
    grads[name] = {n: p.grad.detach().cpu().clone()
                   for n, p in model.named_parameters()
                   if p.grad is not None}
torch.optim.AdamW(dev.parameters(), lr=1e-3).step()
for n, p in ref.named_parameters():
    p.grad = grads["npu"][n].clone() if n in grads["npu"] else None
torch.optim.AdamW(ref.parameters(), lr=1e-3).step()
torch.npu.synchronize()
gc, gn = grads["cpu"], grads["npu"]
assert set(gc) == set(gn) and gc, (sorted(gc), sorted(gn))
pr = {n: p.detach() for n, p in ref.named_parameters()}
pn = {n: p.detach().cpu() for n, p in dev.named_parameters()}
bad = []
for kind, a, b in (("grad", gc, gn), ("param", pr, pn)):
    for n in a:
        if not torch.allclose(b[n], a[n], rtol=1.3e-6, atol=1e-5):
            bad.append("%s %s: %g" % (kind, n,
                                      (b[n] - a[n]).abs().max().item()))
print(json.dumps({"fallback": sorted(torch_npu.fallback_ops()),
                  "loss_cpu": losses["cpu"], "loss_npu": losses["npu"],
                  "bad": bad,
                  "grads": len(gc)}))
"""

MODELS = ["encoder", "gpt", "bert", "gpt2"]


@pytest.mark.parametrize("which", MODELS)
def test_training_step_on_npu_matches_cpu_with_no_fallback(npu, which):
    if which in ("bert", "gpt2"):
        pytest.importorskip("transformers")
    # this checkout's torch_npu, not the one installed in the venv
    env = dict(os.environ, PYTHONPATH=USERSPACE + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", CHILD, which, HERE],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["fallback"] == [], (
        "%s's training step ran these ops on the CPU: %s"
        % (which, got["fallback"]))
    lc, ln = got["loss_cpu"], got["loss_npu"]
    assert abs(ln - lc) <= 1e-4 * abs(lc), (lc, ln)
    assert not got["bad"], got["bad"]
    assert got["grads"] > 10
