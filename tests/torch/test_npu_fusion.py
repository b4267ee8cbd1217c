# SPDX-License-Identifier: GPL-2.0
"""torch_npu.npu_fusion_attention against CPU torch's
scaled_dot_product_attention, and the torch_npu names transformers and
accelerate use when they find an NPU."""

import json
import math
import os
import subprocess
import sys

import pytest
import torch

F = torch.nn.functional
USERSPACE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "userspace")
LAYOUTS = ["BNSD", "BSND", "BSH", "SBH"]
STATS = "npu_fusion_attention (softmax_max, softmax_sum)"


def _to_layout(x: torch.Tensor, layout: str) -> torch.Tensor:
    """A [B, N, S, D] tensor in ``layout`` (contiguous)."""
    b, n, s, d = x.shape
    if layout == "BSND":
        return x.transpose(1, 2).contiguous()
    if layout == "BSH":
        return x.transpose(1, 2).reshape(b, s, n * d)
    if layout == "SBH":
        return x.permute(2, 0, 1, 3).reshape(s, b, n * d)
    return x.contiguous()


def _from_layout(x: torch.Tensor, layout: str, n: int) -> torch.Tensor:
    if layout == "BSND":
        return x.transpose(1, 2)
    if layout == "BSH":
        b, s, h = x.shape
        return x.view(b, s, n, h // n).transpose(1, 2)
    if layout == "SBH":
        s, b, h = x.shape
        return x.view(s, b, n, h // n).permute(1, 2, 0, 3)
    return x


def _reference(q, k, v, hidden=None, scale=1.0, pse=None):
    """Ascend's formula on [B, N, S, D] CPU float32 tensors through SDPA:
    softmax(scale * (q k^T + pse), hidden positions out) v."""
    mask = None
    if pse is not None:
        mask = scale * pse
    if hidden is not None:
        mask = (torch.zeros(()) if mask is None else mask).masked_fill(
            hidden, -math.inf)
    return F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, scale=scale,
        enable_gqa=q.shape[1] != k.shape[1])


def _stats_reference(q, k, hidden, scale):
    g = q.shape[1] // k.shape[1]
    s = scale * q @ k.repeat_interleave(g, 1).transpose(-1, -2)
    if hidden is not None:
        s = s.masked_fill(hidden, -math.inf)
    m = s.amax(-1, keepdim=True)
    return m.squeeze(-1), (s - m).exp().sum(-1)


def _inputs(b=2, n=3, sq=5, skv=7, d=4, n_kv=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    n_kv = n_kv or n
    return (torch.randn(b, n, sq, d, generator=g),
            torch.randn(b, n_kv, skv, d, generator=g),
            torch.randn(b, n_kv, skv, d, generator=g))


def _random_hidden(sq, skv, seed=1):
    h = torch.rand(sq, skv, generator=torch.Generator().manual_seed(seed)) \
        < 0.4
    h[:, 0] = False                 # every row sees something
    return h


def _tol(dtype):
    return {} if dtype == torch.float32 else {"atol": 3e-3, "rtol": 3e-3}


def _run(npu, layout, q, k, v, dtype, **kwargs):
    """npu_fusion_attention on npu copies of [B, N, S, D] q, k, v in
    ``layout``; returns its results and the npu leaves."""
    n = q.shape[1]
    leaves = [_to_layout(x, layout).to(dtype).npu().requires_grad_()
              for x in (q, k, v)]
    res = npu.npu_fusion_attention(*leaves, n, layout, **kwargs)
    return res, leaves


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_matches_sdpa(npu, layout, masked, dtype):
    q, k, v = _inputs()
    hidden = _random_hidden(5, 7) if masked else None
    q, k, v = (x.to(dtype).float() for x in (q, k, v))   # one rounding
    res, leaves = _run(npu, layout, q, k, v, dtype, scale=0.3,
                       atten_mask=hidden.npu() if masked else None)
    out, smax, ssum, sout, seed, offset, numels = res
    assert out.device.type == "npu" and out.dtype == dtype
    assert out.shape == _to_layout(torch.empty(2, 3, 5, 4), layout).shape
    assert (seed, offset, numels) == (0, 0, 0) and sout.numel() == 0
    qc, kc, vc = (x.clone().requires_grad_() for x in (q, k, v))
    want = _reference(qc, kc, vc, hidden, 0.3)
    got = _from_layout(out.cpu().float(), layout, 3)
    torch.testing.assert_close(got, want, **_tol(dtype))
    # Ascend's softmax statistics: float32 [B, N, Sq, 8]
    m, s = _stats_reference(q, k, hidden, 0.3)
    assert smax.shape == ssum.shape == (2, 3, 5, 8)
    assert smax.dtype == ssum.dtype == torch.float32
    torch.testing.assert_close(smax.cpu(), m[..., None].expand(2, 3, 5, 8))
    torch.testing.assert_close(ssum.cpu(), s[..., None].expand(2, 3, 5, 8))
    # backward
    grad = torch.randn(want.shape, generator=torch.Generator().manual_seed(3))
    want.backward(grad)
    out.backward(_to_layout(grad, layout).to(dtype).npu())
    for leaf, ref in zip(leaves, (qc, kc, vc)):
        assert leaf.grad.dtype == dtype
        torch.testing.assert_close(
            _from_layout(leaf.grad.cpu().float(), layout, 3), ref.grad,
            **_tol(dtype))


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (2, 3)])
def test_mask_shapes(npu, shape):
    """11SS, B1SS and BNSS masks (True: hidden) apply per batch and head."""
    q, k, v = _inputs()
    g = torch.Generator().manual_seed(5)
    hidden = torch.rand(*shape, 5, 7, generator=g) < 0.4
    hidden[..., 0] = False
    res, _ = _run(npu, "BNSD", q, k, v, torch.float32,
                  atten_mask=hidden.to(torch.uint8).npu(), scale=0.5)
    torch.testing.assert_close(res[0].cpu(), _reference(q, k, v, hidden, 0.5))


def _sparse_hidden(mode, sq, skv, pre=0, nxt=0):
    ones = torch.ones(sq, skv, dtype=torch.bool)
    if mode == 2:                   # causal from the top-left corner
        return ones.triu(1)
    if mode == 3:                   # causal from the bottom-right corner
        return ones.triu(skv - sq + 1)
    # band around the diagonal from the bottom-right corner
    return ones.triu(skv - sq + nxt + 1) | ones.tril(skv - sq - pre - 1)


@pytest.mark.parametrize("sq,skv", [(6, 6), (4, 7)])
@pytest.mark.parametrize("mode,pre,nxt", [(2, 0, 0), (3, 0, 0), (4, 2, 1)])
def test_sparse_modes_with_the_compressed_mask(npu, mode, pre, nxt, sq,
                                               skv):
    q, k, v = _inputs(sq=sq, skv=skv)
    compressed = torch.ones(2048, 2048, dtype=torch.bool).triu(1)
    res, leaves = _run(npu, "BSND", q, k, v, torch.float32,
                       atten_mask=compressed.npu(), sparse_mode=mode,
                       pre_tockens=pre, next_tockens=nxt, scale=0.25)
    hidden = _sparse_hidden(mode, sq, skv, pre, nxt)
    torch.testing.assert_close(_from_layout(res[0].cpu(), "BSND", 3),
                               _reference(q, k, v, hidden, 0.25))


def test_no_mask_means_every_position_is_seen(npu):
    """Without atten_mask, sparse_mode and the token counts change
    nothing (Ascend's rule)."""
    q, k, v = _inputs()
    res, _ = _run(npu, "BNSD", q, k, v, torch.float32, sparse_mode=3,
                  pre_tockens=0, next_tockens=0)
    torch.testing.assert_close(res[0].cpu(), _reference(q, k, v))


def test_fully_hidden_rows_give_zeros(npu):
    q, k, v = _inputs()
    hidden = _random_hidden(5, 7)
    hidden[2] = True
    res, _ = _run(npu, "BNSD", q, k, v, torch.float32, atten_mask=hidden.npu())
    out = res[0].cpu()
    assert torch.equal(out[:, :, 2], torch.zeros(2, 3, 4))
    torch.testing.assert_close(out, _reference(q, k, v, hidden))


@pytest.mark.parametrize("layout", ["BSND", "BSH", "BNSD"])
def test_grouped_query_heads(npu, layout):
    q, k, v = _inputs(n=4, n_kv=2)
    res, leaves = _run(npu, layout, q, k, v, torch.float32, scale=0.4)
    qc, kc, vc = (x.clone().requires_grad_() for x in (q, k, v))
    want = _reference(qc, kc, vc, scale=0.4)
    torch.testing.assert_close(_from_layout(res[0].cpu(), layout, 4), want)
    want.sum().backward()
    res[0].sum().backward()
    for leaf, ref, n in zip(leaves, (qc, kc, vc), (4, 2, 2)):
        torch.testing.assert_close(_from_layout(leaf.grad.cpu(), layout, n),
                                   ref.grad)


@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (2, 3, 1, 7), (1, 3, 5, 7)])
def test_position_bias(npu, shape):
    """pse is added before the scale: scale * (q k^T + pse)."""
    q, k, v = _inputs()
    pse = torch.randn(*shape, generator=torch.Generator().manual_seed(7))
    pse_n = pse.npu().requires_grad_()
    hidden = _random_hidden(5, 7)
    res, leaves = _run(npu, "BNSD", q, k, v, torch.float32, pse=pse_n,
                       atten_mask=hidden.npu(), scale=0.5)
    pse_c = pse.clone().requires_grad_()
    want = _reference(q, k, v, hidden, 0.5, pse_c)
    torch.testing.assert_close(res[0].cpu(), want)
    want.sum().backward()
    res[0].sum().backward()
    torch.testing.assert_close(pse_n.grad.cpu(), pse_c.grad)


def _varlen(lengths, n, d, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(sum(lengths), n, d, generator=g)


@pytest.mark.parametrize("mode", [0, 2, 3])
def test_varlen_tnd(npu, mode):
    """TND: sequences of different lengths packed along T; each attends
    to its own keys only."""
    lq, lkv, n, d = [3, 5, 2], [4, 5, 6], 2, 4
    q, k, v = _varlen(lq, n, d, 1), _varlen(lkv, n, d, 2), \
        _varlen(lkv, n, d, 3)
    leaves = [x.npu().requires_grad_() for x in (q, k, v)]
    cq, ckv = torch.tensor(lq).cumsum(0), torch.tensor(lkv).cumsum(0)
    mask = None
    if mode == 2 or mode == 3:
        mask = torch.ones(2048, 2048, dtype=torch.bool).triu(1).npu()
    out, smax, ssum = npu.npu_fusion_attention(
        *leaves, n, "TND", atten_mask=mask, scale=0.5, sparse_mode=mode,
        actual_seq_qlen=cq.tolist(), actual_seq_kvlen=ckv.tolist())[:3]
    assert out.shape == (10, n, d) and smax.shape == (10, n, 8)
    qc, kc, vc = (x.clone().requires_grad_() for x in (q, k, v))
    wants, q0, k0 = [], 0, 0
    for sq, skv in zip(lq, lkv):
        seg = [x[a:a + s].transpose(0, 1)[None]
               for x, a, s in ((qc, q0, sq), (kc, k0, skv), (vc, k0, skv))]
        hidden = _sparse_hidden(mode, sq, skv) if mask is not None else None
        wants.append(_reference(*seg, hidden, 0.5)[0].transpose(0, 1))
        q0, k0 = q0 + sq, k0 + skv
    want = torch.cat(wants)
    torch.testing.assert_close(out.cpu(), want)
    want.sum().backward()
    out.sum().backward()
    for leaf, ref in zip(leaves, (qc, kc, vc)):
        torch.testing.assert_close(leaf.grad.cpu(), ref.grad)


def _band_hidden(sq, skv, pre, nxt):
    return _sparse_hidden(4, sq, skv, pre, nxt)


@pytest.mark.parametrize("mode", [7, 8])
def test_varlen_split_sequence_modes(npu, mode):
    """Modes 7 and 8 (a long sequence split across cards): causal from the
    bottom-right (7) or top-left (8) corner, but a band (pre_tockens,
    next_tockens from the bottom-right corner) for the last (7) or the
    first (8) batch; trailing zeros in the lengths leave batches out."""
    lq, lkv, n, d, pre, nxt = [3, 2, 2], [3, 6, 4], 2, 4, 6, -2
    q, k, v = _varlen(lq + [2], n, d, 1), _varlen(lkv, n, d, 2), \
        _varlen(lkv, n, d, 3)
    cq = torch.tensor(lq).cumsum(0).tolist() + [0]
    ckv = torch.tensor(lkv).cumsum(0).tolist() + [0]
    mask = torch.ones(2048, 2048, dtype=torch.bool).triu(1).npu()
    out = npu.npu_fusion_attention(
        q.npu(), k.npu(), v.npu(), n, "TND", atten_mask=mask,
        sparse_mode=mode, pre_tockens=pre, next_tockens=nxt,
        actual_seq_qlen=cq, actual_seq_kvlen=ckv)[0].cpu()
    band = 2 if mode == 7 else 0
    q0 = k0 = 0
    for b, (sq, skv) in enumerate(zip(lq, lkv)):
        hidden = _band_hidden(sq, skv, pre, nxt) if b == band else \
            _sparse_hidden(3 if mode == 7 else 2, sq, skv)
        seg = [x[a:a + s].transpose(0, 1)[None]
               for x, a, s in ((q, q0, sq), (k, k0, skv), (v, k0, skv))]
        torch.testing.assert_close(
            out[q0:q0 + sq], _reference(*seg, hidden)[0].transpose(0, 1))
        q0, k0 = q0 + sq, k0 + skv
    assert torch.equal(out[q0:], torch.zeros(2, n, d))     # left out


def test_prefix_mode(npu):
    """Mode 6: causal from the bottom-right corner, and the first
    prefix[b] keys seen by every query of batch b."""
    q, k, v = _inputs(sq=5, skv=7)
    mask = torch.ones(2048, 2048, dtype=torch.bool).triu(1).npu()
    res, _ = _run(npu, "BNSD", q, k, v, torch.float32, atten_mask=mask,
                  sparse_mode=6, prefix=[4, 1])
    for b, prefix in enumerate([4, 1]):
        hidden = _sparse_hidden(3, 5, 7) & (torch.arange(7) >= prefix)
        torch.testing.assert_close(
            res[0][b].cpu(), _reference(q[b:b + 1], k[b:b + 1], v[b:b + 1],
                                        hidden)[0])


def test_dropout_mask_is_the_one_seed_names(npu):
    """keep_prob < 1 drops probabilities; (seed, offset, numels) name the
    mask: numels uniform draws from a generator seeded with seed, kept
    where below keep_prob, kept ones scaled by 1 / keep_prob."""
    q, k, v = _inputs()
    torch.manual_seed(11)
    res, _ = _run(npu, "BNSD", q, k, v, torch.float32, keep_prob=0.6,
                  scale=0.5)
    out, seed, offset, numels = res[0], res[4], res[5], res[6]
    assert offset == 0 and numels == 2 * 3 * 5 * 7
    kept = torch.rand(numels, generator=torch.Generator().manual_seed(seed)) \
        < 0.6
    p = torch.softmax(0.5 * q @ k.transpose(-1, -2), -1)
    want = (p * kept.view(2, 3, 5, 7) / 0.6) @ v
    torch.testing.assert_close(out.cpu(), want)
    assert not torch.equal(out.cpu(), _reference(q, k, v, scale=0.5))


def test_bad_arguments_are_refused(npu):
    q, k, v = (x.npu() for x in _inputs())
    f = npu.npu_fusion_attention
    for kwargs, what in [({"input_layout": "BHSD"}, "input_layout"),
                         ({"head_num": 2}, "head_num"),
                         ({"keep_prob": 0.0}, "keep_prob"),
                         ({"padding_mask": q}, "padding_mask"),
                         ({"sparse_mode": 9}, "sparse_mode"),
                         ({"actual_seq_qlen": [5, 10]}, "actual_seq")]:
        args = {"head_num": 3, "input_layout": "BNSD", **kwargs}
        with pytest.raises(ValueError, match=what):
            f(q, k, v, **args)


#: a fresh process (fallback_ops() starts empty) runs one attention
#: forward and backward in every layout
DEVICE_CHILD = r"""
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
import torch, torch_npu
warnings.simplefilter("ignore")
for layout, shape in (("BNSD", (2, 3, 5, 4)), ("BSND", (2, 5, 3, 4)),
                      ("BSH", (2, 5, 12)), ("SBH", (5, 2, 12))):
    q, k, v = (torch.randn(shape).npu().requires_grad_() for _ in range(3))
    mask = (torch.rand(5, 5) < 0.3).npu()
    out = torch_npu.npu_fusion_attention(q, k, v, 3, layout, scale=0.5,
                                         atten_mask=mask)[0]
    out.backward(torch.ones_like(out))
torch.npu.synchronize()
print(json.dumps(sorted(torch_npu.fallback_ops())))
"""


def test_attention_runs_on_the_device(npu):
    """Matmuls, scale, mask, softmax and their backward are davinci tasks:
    only the softmax statistics come from the CPU."""
    r = subprocess.run([sys.executable, "-c", DEVICE_CHILD, USERSPACE],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    ran_on_cpu = set(json.loads(r.stdout.strip().splitlines()[-1]))
    assert ran_on_cpu == {STATS}


# -- transformers and accelerate ----------------------------------------------
def _tiny_llama(impl: str):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64)
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(
        config, attn_implementation=impl)


def test_transformers_sees_the_npu(npu):
    pytest.importorskip("transformers")
    from transformers.utils import is_torch_bf16_gpu_available, \
        is_torch_npu_available
    from transformers.integrations import npu_flash_attention
    assert is_torch_npu_available() and is_torch_npu_available(True)
    assert npu_flash_attention.npu_fusion_attention is \
        npu.npu_fusion_attention
    assert is_torch_bf16_gpu_available()
    # what optim="adamw_torch_npu_fused" imports
    from torch_npu.optim import NpuFusedAdamW
    assert issubclass(NpuFusedAdamW, torch.optim.AdamW)


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("impl", ["flash_attention_2", "sdpa", "eager"])
def test_transformers_model_on_npu_matches_cpu(npu, impl, padded,
                                               monkeypatch):
    """A Llama of transformers 5.x with its attention on npu (flash
    attention: npu_fusion_attention, causal in BSND, grouped heads; a
    padded batch unpadded into TND) gives the CPU's loss and gradients."""
    calls = []
    if impl == "flash_attention_2":
        from transformers.integrations import npu_flash_attention

        def recorded(*args, **kwargs):
            calls.append(args[4] if len(args) > 4 else
                         kwargs["input_layout"])
            return npu.npu_fusion_attention(*args, **kwargs)
        monkeypatch.setattr(npu_flash_attention, "npu_fusion_attention",
                            recorded)
    cpu_model = _tiny_llama("eager")
    model = _tiny_llama(impl)
    model.load_state_dict(cpu_model.state_dict())
    model = model.npu()
    ids = torch.randint(0, 64, (2, 9), generator=torch.Generator()
                        .manual_seed(1))
    attention = torch.ones(2, 9, dtype=torch.long)
    if padded:
        attention[1, 6:] = 0            # padding (the loss never sees it)
    labels = ids.masked_fill(attention == 0, -100)
    mask = attention if padded else None
    want = cpu_model(input_ids=ids, attention_mask=mask, labels=labels)
    got = model(input_ids=ids.npu(), labels=labels.npu(),
                attention_mask=mask.npu() if padded else None)
    if impl == "flash_attention_2":     # one call per layer
        assert calls == ["TND" if padded else "BSND"] * 2
    seen = attention.bool()
    torch.testing.assert_close(got.logits.cpu()[seen], want.logits[seen],
                               atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(got.loss.cpu(), want.loss, atol=1e-5,
                               rtol=1e-5)
    want.loss.backward()
    got.loss.backward()
    for (name, p_cpu), p_npu in zip(cpu_model.named_parameters(),
                                    model.parameters()):
        torch.testing.assert_close(p_npu.grad.cpu(), p_cpu.grad, atol=1e-4,
                                   rtol=1e-4, msg=name)


def test_transformers_trainer_rng_state(npu):
    """What transformers' Trainer saves in a checkpoint for an NPU."""
    states = torch.npu.random.get_rng_state_all()
    assert len(states) == torch.npu.device_count()
    first = torch.rand(3, device="npu").cpu()
    torch.npu.random.set_rng_state_all(states)
    assert torch.equal(torch.rand(3, device="npu").cpu(), first)


def test_accelerate_fp16_training_step(npu):
    """accelerate's mixed_precision="fp16" on npu: torch.autocast("npu")
    and torch.npu.amp.GradScaler."""
    accelerate = pytest.importorskip("accelerate")
    from accelerate.state import AcceleratorState, GradientState
    try:
        _accelerate_steps(accelerate.Accelerator(mixed_precision="fp16"))
    finally:                        # the state is process-wide
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()


def _accelerate_steps(acc) -> None:
    assert acc.device.type == "npu"
    assert isinstance(acc.scaler, torch.npu.amp.GradScaler)
    torch.manual_seed(0)
    # (the optimizer after the move: model.npu() makes new Parameters)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 3)).to(acc.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model, opt = acc.prepare(model, opt)
    x = torch.randn(32, 8).to(acc.device)
    t = torch.randint(0, 3, (32,)).to(acc.device)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        with acc.autocast():
            assert model[0](x).dtype == torch.float16
            loss = F.cross_entropy(model(x), t)
        acc.backward(loss)
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
