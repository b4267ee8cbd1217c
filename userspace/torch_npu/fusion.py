# SPDX-License-Identifier: GPL-2.0
"""``torch_npu.npu_fusion_attention``: Ascend's fused attention, as davinci
tasks.

The signature, layouts, mask conventions and outputs are Ascend torch_npu's
(see its documentation of ``torch_npu.npu_fusion_attention``)::

    out = Dropout(Softmax(Mask(scale * (query @ key^T + pse), atten_mask)),
                  keep_prob) @ value

``atten_mask`` is True (or 1) where a query position must not see a key
position. The davinci device has no fused kernel, so this computes head by
head: the two matmuls per head and every elementwise step (scale, the
position bias, the mask, softmax, dropout) are davinci tasks, in float32
whatever the input dtype (as Ascend's kernel accumulates), and the result
is cast back to it. Changing the layout of the operands (BSH, SBH, BSND or
TND to heads-first) is a copy through host memory, as every npu copy
between layouts is. ``softmax_max``/``softmax_sum`` (the rows' maximum and
sum of exponentials, float32, repeated 8 times as Ascend stores them) need
a maximum the device cannot compute: they come from the CPU, with a
one-time warning. The backward pass (through ``torch.autograd``) is davinci
tasks too.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import _kernels

__all__ = ["npu_fusion_attention"]

LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")
#: Ascend's sparse_mode values
SPARSE_MODES = {0: "defaultMask", 1: "allMask", 2: "leftUpCausal",
                3: "rightDownCausal", 4: "band", 5: "prefix",
                6: "prefixCompress", 7: "varlen rightDownCausal band",
                8: "varlen band leftUpCausal"}
_STAT_REPEATS = 8                 # softmax_max/sum's last dim, as Ascend's
#: added to the scores a mask hides: exp() of it minus the row's max is 0,
#: and, unlike -inf, a row the mask hides entirely stays finite
_HIDDEN = torch.finfo(torch.float32).min


@dataclass(frozen=True)
class _Config:
    layout: str
    head_num: int
    scale: float
    keep_prob: float
    pre_tokens: int
    next_tokens: int
    sparse_mode: int
    prefix: tuple[int, ...] | None
    seq_q: tuple[int, ...] | None       # cumulative, TND only
    seq_kv: tuple[int, ...] | None


@dataclass
class _Segment:
    """One batch element, heads first: q [N1, Sq, D], k [N2, Skv, D],
    v [N2, Skv, Dv], float32, contiguous."""
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    bias: torch.Tensor | None = None    # [N1, Sq, Skv]: 0 or _HIDDEN
    keep: torch.Tensor | None = None    # [N1, Sq, Skv]: 1 seen, 0 hidden
    pse: torch.Tensor | None = None     # [N1, Sq, Skv]
    drop: torch.Tensor | None = None    # [N1, Sq, Skv]: 0 or 1/keep_prob
    probs: torch.Tensor | None = None   # softmax, hidden positions 0


# -- layouts ------------------------------------------------------------------
def _split_heads(x: torch.Tensor, layout: str, n: int) -> torch.Tensor:
    """[B, N, S, D] view of a BSH, SBH, BSND or BNSD tensor."""
    if layout == "BSH":
        b, s, h = x.shape
        return x.view(b, s, n, h // n).permute(0, 2, 1, 3)
    if layout == "SBH":
        s, b, h = x.shape
        return x.view(s, b, n, h // n).permute(1, 2, 0, 3)
    if layout == "BSND":
        return x.permute(0, 2, 1, 3)
    return x


def _merge_heads(x: torch.Tensor, layout: str) -> torch.Tensor:
    """A [B, N, S, D] tensor in ``layout`` (contiguous)."""
    b, n, s, d = x.shape
    if layout == "BSH":
        return x.permute(0, 2, 1, 3).reshape(b, s, n * d)
    if layout == "SBH":
        return x.permute(2, 0, 1, 3).reshape(s, b, n * d)
    if layout == "BSND":
        return x.permute(0, 2, 1, 3).contiguous()
    return x.contiguous()


def _heads(x: torch.Tensor, layout: str, n: int, bounds) -> list:
    """Each batch element of ``x`` as a float32 [N, S, D] contiguous
    tensor (``bounds``: the (start, end) of each in T, for TND)."""
    if layout == "TND":
        return [x[s:e].permute(1, 0, 2).contiguous().float()
                for s, e in bounds]
    return list(_split_heads(x, layout, n).contiguous().float())


def _unheads(parts: list, cfg: _Config, like: tuple[int, torch.dtype],
             seq: tuple[int, ...] | None) -> torch.Tensor:
    """The inverse of :func:`_heads` (``like``: the T and dtype of the
    tensor the parts came from): each part is written into one tensor
    (device copies), whose layout then changes."""
    rows, dtype = like
    if cfg.layout == "TND":
        # rows of batches left out (trailing zeros in actual_seq_*) stay 0
        n, d = parts[0].shape[0], parts[0].shape[2]
        out = parts[0].new_zeros((rows, n, d))
        for (start, end), part in zip(_bounds(seq), parts):
            out[start:end].copy_(part.permute(1, 0, 2))
        return out.to(dtype)
    out = parts[0].new_empty((len(parts),) + tuple(parts[0].shape))
    for b, part in enumerate(parts):
        out[b].copy_(part)
    return _merge_heads(out.to(dtype), cfg.layout)


def _bounds(cumulative: tuple[int, ...]) -> list[tuple[int, int]]:
    starts = (0,) + cumulative[:-1]
    return list(zip(starts, cumulative))


def _cumulative(lengths) -> tuple[int, ...] | None:
    """actual_seq_qlen/kvlen as a tuple, without the trailing zeros that
    leave the last batches out (as Ascend reads them)."""
    if lengths is None:
        return None
    seq = [int(x) for x in lengths]
    while seq and seq[-1] == 0:
        seq.pop()
    if not seq or any(b <= a for a, b in zip([0] + seq, seq)):
        raise ValueError("npu_fusion_attention: actual sequence lengths %s "
                         "must grow with every batch (an empty sequence is "
                         "not supported here)" % (list(lengths),))
    return tuple(seq)


# -- masks --------------------------------------------------------------------
def _band(sq: int, skv: int, pre: int, nxt: int, offset: int) -> torch.Tensor:
    """True outside the band pre_tokens above and next_tokens beyond the
    diagonal that starts ``offset`` columns right of the top-left corner."""
    i = torch.arange(sq).unsqueeze(1) + offset
    j = torch.arange(skv).unsqueeze(0)
    return (j > i + nxt) | (j < i - pre)


def _causal(sq: int, skv: int, offset: int) -> torch.Tensor:
    """True where column j is beyond row i's diagonal (starting ``offset``
    columns right of the top-left corner)."""
    return _band(sq, skv, sq + skv + abs(offset), 0, offset)


def _given_mask(mask: torch.Tensor, b: int, sq: int, skv: int,
                layout: str) -> torch.Tensor:
    """The [N or 1, Sq, Skv] part of a user's SS, 11SS, B1SS or BNSS mask
    for batch element ``b`` (varlen: the top-left Sq x Skv of an SS)."""
    m = mask.cpu().bool()
    if m.dim() == 2:
        m = m.unsqueeze(0)
    elif m.dim() == 4:
        m = m[b if m.shape[0] > 1 else 0]
    else:
        raise ValueError("npu_fusion_attention: atten_mask must be SS, "
                         "11SS, B1SS or BNSS, not of shape %s"
                         % (tuple(mask.shape),))
    if layout == "TND":
        return m[:, :sq, :skv]
    if m.shape[-2:] != (sq, skv):
        raise ValueError("npu_fusion_attention: atten_mask's last two dims "
                         "%s are not (Sq, Skv) = (%d, %d)"
                         % (tuple(m.shape[-2:]), sq, skv))
    return m


def _hidden(mask: torch.Tensor, cfg: _Config, b: int, batches: int,
            sq: int, skv: int) -> torch.Tensor:
    """What batch element ``b`` must not see ([N or 1, Sq, Skv] bool),
    by sparse_mode; modes 2, 3, 4, 6, 7 and 8 take Ascend's compressed
    2048 x 2048 mask, whose content is implied by the mode."""
    mode, d = cfg.sparse_mode, skv - sq
    if mode in (0, 1, 5):
        return _given_mask(mask, b, sq, skv, cfg.layout)
    if mode == 2 or (mode == 8 and b > 0):
        return _causal(sq, skv, 0)[None]
    if mode == 3 or (mode == 7 and b < batches - 1):
        return _causal(sq, skv, d)[None]
    if mode in (4, 7, 8):
        return _band(sq, skv, cfg.pre_tokens, cfg.next_tokens, d)[None]
    # mode 6: rightDownCausal, the first prefix[b] columns seen by all rows
    return (_causal(sq, skv, d) & (torch.arange(skv) >= cfg.prefix[b]))[None]


def _set_mask(seg: _Segment, hidden: torch.Tensor) -> None:
    n, sq, skv = seg.q.shape[0], seg.q.shape[1], seg.k.shape[1]
    hidden = hidden.expand(n, sq, skv)
    device = seg.q.device
    seg.bias = (hidden.float() * _HIDDEN).to(device)
    seg.keep = (~hidden).float().to(device)


# -- forward and backward -----------------------------------------------------
def _group(seg: _Segment) -> int:
    return seg.q.shape[0] // seg.k.shape[0]


def _forward(seg: _Segment, cfg: _Config
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention of one batch element ([N1, Sq, Dv], float32) and its
    scores; keeps the softmax in ``seg.probs`` for the backward."""
    n1, sq, skv = seg.q.shape[0], seg.q.shape[1], seg.k.shape[1]
    g = _group(seg)
    scores = seg.q.new_empty((n1, sq, skv))
    for n in range(n1):
        scores[n].copy_(torch.mm(seg.q[n], seg.k[n // g].t()))
    if seg.pse is not None:
        scores = scores + seg.pse
    scores = scores * cfg.scale
    if seg.bias is not None:
        scores = scores + seg.bias
    probs = torch.softmax(scores, -1)
    if seg.keep is not None:
        probs = probs * seg.keep        # rows hidden entirely: 0, not 1/Skv
    seg.probs = probs
    if seg.drop is not None:
        probs = probs * seg.drop
    out = seg.q.new_empty((n1, sq, seg.v.shape[2]))
    for n in range(n1):
        out[n].copy_(torch.mm(probs[n], seg.v[n // g]))
    return out, scores


def _backward(seg: _Segment, cfg: _Config, grad: torch.Tensor):
    """Gradients of one batch element's q, k, v and scores' pse from the
    gradient of its output ([N1, Sq, Dv], float32)."""
    n1, g = seg.q.shape[0], _group(seg)
    probs = seg.probs if seg.drop is None else seg.probs * seg.drop
    dv = torch.zeros_like(seg.v)
    dprobs = torch.empty_like(seg.probs)
    for n in range(n1):
        dv[n // g].add_(torch.mm(probs[n].t(), grad[n]))
        dprobs[n].copy_(torch.mm(grad[n], seg.v[n // g].t()))
    if seg.drop is not None:
        dprobs = dprobs * seg.drop
    dscores = torch._softmax_backward_data(dprobs, seg.probs, -1,
                                           torch.float32) * cfg.scale
    dq = torch.empty_like(seg.q)
    dk = torch.zeros_like(seg.k)
    for n in range(n1):
        dq[n].copy_(torch.mm(dscores[n], seg.k[n // g]))
        dk[n // g].add_(torch.mm(dscores[n].t(), seg.q[n]))
    return dq, dk, dv, dscores


def _softmax_stats(scores: list, layout: str, rows: int):
    """softmax_max and softmax_sum of every row, on the CPU (TND: ``rows``
    of them, those of batches left out 0)."""
    if scores and scores[0].device.type == "npu":
        _kernels.warn_cpu("npu_fusion_attention (softmax_max, softmax_sum)",
                          "the device has no maximum over a row")
    maxes, sums = [], []
    for s in scores:
        s = s.cpu()
        m = s.amax(-1, keepdim=True)
        maxes.append(m.squeeze(-1))
        sums.append((s - m).exp().sum(-1))
    device = scores[0].device

    def layout_of(parts):
        if layout == "TND":     # [T, N, 8]
            t = torch.cat([p.t() for p in parts])
            t = torch.cat([t, t.new_zeros((rows - len(t), t.shape[1]))])
        else:                   # [B, N, Sq, 8]
            t = torch.stack(parts)
        return t.unsqueeze(-1).expand(*t.shape, _STAT_REPEATS).contiguous()\
            .to(device)
    return layout_of(maxes), layout_of(sums)


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, query, key, value, pse, segments, cfg):
        outs, scores = [], []
        for seg in segments:
            out, s = _forward(seg, cfg)
            outs.append(out)
            scores.append(s)
        smax, ssum = _softmax_stats(scores, cfg.layout, query.shape[0])
        ctx.segments, ctx.cfg = segments, cfg
        ctx.like = [(t.shape[0], t.dtype) for t in (query, key, value)]
        ctx.pse_shape = None if pse is None else (pse.shape, pse.dtype)
        ctx.mark_non_differentiable(smax, ssum)
        return _unheads(outs, cfg, ctx.like[0], cfg.seq_q), smax, ssum

    @staticmethod
    def backward(ctx, grad_out, _gmax, _gsum):
        segments, cfg = ctx.segments, ctx.cfg
        bounds = _bounds(cfg.seq_q) if cfg.layout == "TND" else None
        grads = _heads(grad_out, cfg.layout, cfg.head_num, bounds)
        dqs, dks, dvs, dss = [], [], [], []
        for seg, g in zip(segments, grads):
            dq, dk, dv, ds = _backward(seg, cfg, g)
            dqs.append(dq)
            dks.append(dk)
            dvs.append(dv)
            dss.append(ds)
        dpse = None
        if ctx.pse_shape is not None and ctx.needs_input_grad[3]:
            full = dss[0].new_empty((len(dss),) + tuple(dss[0].shape))
            for b, ds in enumerate(dss):
                full[b].copy_(ds)
            shape, dtype = ctx.pse_shape
            dpse = full.sum_to_size(shape).to(dtype)
        like_q, like_k, like_v = ctx.like
        return (_unheads(dqs, cfg, like_q, cfg.seq_q),
                _unheads(dks, cfg, like_k, cfg.seq_kv),
                _unheads(dvs, cfg, like_v, cfg.seq_kv), dpse, None, None)


# -- the API ------------------------------------------------------------------
def _check(query, key, value, head_num: int, layout: str, padding_mask,
           keep_prob: float, sparse_mode: int, seq_q, seq_kv, prefix) -> None:
    def fail(why):
        raise ValueError("npu_fusion_attention: " + why)
    if layout not in LAYOUTS:
        fail("input_layout %r is not one of %s" % (layout, ", ".join(LAYOUTS)))
    if padding_mask is not None:
        fail("padding_mask is not supported (nor by Ascend's torch_npu); "
             "pass atten_mask")
    if not 0 < keep_prob <= 1:
        fail("keep_prob %r is outside (0, 1]" % keep_prob)
    if sparse_mode not in SPARSE_MODES:
        fail("sparse_mode %r is not one of 0..8" % sparse_mode)
    given = [seq is not None for seq in (seq_q, seq_kv)]
    if given != [layout == "TND"] * 2:
        fail("actual_seq_qlen and actual_seq_kvlen go with (and only with) "
             "input_layout TND")
    if layout == "TND" and len(seq_q) != len(seq_kv):
        fail("actual_seq_qlen and actual_seq_kvlen name %d and %d batches"
             % (len(seq_q), len(seq_kv)))
    if sparse_mode in (7, 8) and layout != "TND":
        fail("sparse_mode %d is for input_layout TND" % sparse_mode)
    if sparse_mode == 6 and prefix is None:
        fail("sparse_mode 6 needs prefix (one length per batch)")
    dims = {"BSH": 3, "SBH": 3, "BSND": 4, "BNSD": 4, "TND": 3}[layout]
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() != dims:
            fail("%s has %d dims; %s needs %d" % (name, t.dim(), layout, dims))
    if layout in ("BSH", "SBH"):
        n_q = head_num if query.shape[2] % head_num == 0 else None
    else:
        n_q = query.shape[1 if layout in ("BNSD", "TND") else 2]
    if n_q != head_num:
        fail("head_num %d does not match query of shape %s in %s"
             % (head_num, tuple(query.shape), layout))


def _kv_heads(query, key, head_num: int, layout: str) -> int:
    if layout in ("BSH", "SBH"):
        d = query.shape[2] // head_num
        return key.shape[2] // d
    return key.shape[1 if layout in ("BNSD", "TND") else 2]


def _dropout(segments: list, keep_prob: float):
    """Each segment's dropout factors (0 or 1/keep_prob), drawn from a
    seed of torch's default generator: (seed, offset, numels) name the
    mask, as Ascend's outputs do."""
    numels = sum(s.q.shape[0] * s.q.shape[1] * s.k.shape[1]
                 for s in segments)
    if keep_prob == 1:
        return 0, 0, 0
    seed = int(torch.randint(0, 2 ** 31 - 1, ()).item())
    gen = torch.Generator().manual_seed(seed)
    kept = torch.rand(numels, generator=gen) < keep_prob
    at = 0
    for s in segments:
        shape = (s.q.shape[0], s.q.shape[1], s.k.shape[1])
        n = shape[0] * shape[1] * shape[2]
        s.drop = (kept[at:at + n].reshape(shape).float() / keep_prob).to(
            s.q.device)
        at += n
    return seed, 0, numels


def npu_fusion_attention(query, key, value, head_num, input_layout,
                         pse=None, padding_mask=None, atten_mask=None,
                         scale=1., keep_prob=1., pre_tockens=2147483647,
                         next_tockens=2147483647, inner_precise=0,
                         prefix=None, actual_seq_qlen=None,
                         actual_seq_kvlen=None, sparse_mode=0,
                         gen_mask_parallel=True, sync=False):
    """Ascend's ``torch_npu.npu_fusion_attention``: returns
    ``(attention_out, softmax_max, softmax_sum, softmax_out, seed, offset,
    numels)``.

    query/key/value: BSH, SBH, BSND, BNSD or TND (``actual_seq_qlen``/
    ``actual_seq_kvlen``: the cumulative sequence lengths) with Nq a
    multiple of Nkv; pse: a position bias broadcastable to [B, N, Sq, Skv];
    atten_mask: True where hidden (SS, 11SS, B1SS or BNSS; sparse_mode 2,
    3, 4, 6, 7, 8 take the compressed 2048 x 2048 mask, and with no mask
    at all every position is seen); keep_prob: dropout's keep probability.
    inner_precise, gen_mask_parallel and sync choose how Ascend's kernel
    works, not what it computes: they change nothing here.
    """
    seq_q, seq_kv = _cumulative(actual_seq_qlen), \
        _cumulative(actual_seq_kvlen)
    _check(query, key, value, head_num, input_layout, padding_mask,
           keep_prob, sparse_mode, seq_q, seq_kv, prefix)
    cfg = _Config(input_layout, head_num, float(scale), float(keep_prob),
                  int(pre_tockens), int(next_tockens), int(sparse_mode),
                  tuple(prefix) if prefix is not None else None, seq_q,
                  seq_kv)
    n_kv = _kv_heads(query, key, head_num, input_layout)
    if n_kv == 0 or head_num % n_kv:
        raise ValueError("npu_fusion_attention: query's %d heads are no "
                         "multiple of key's %d" % (head_num, n_kv))
    qb = _bounds(seq_q) if seq_q else None
    kb = _bounds(seq_kv) if seq_kv else None
    with torch.no_grad():       # _Attention's backward gives the gradients
        segments = [_Segment(q, k, v) for q, k, v in zip(
            _heads(query, input_layout, head_num, qb),
            _heads(key, input_layout, n_kv, kb),
            _heads(value, input_layout, n_kv, kb))]
        _prepare(segments, cfg, pse, atten_mask)
        seed, offset, numels = _dropout(segments, cfg.keep_prob)
    out, smax, ssum = _Attention.apply(query, key, value, pse, segments, cfg)
    softmax_out = query.new_empty((0,))     # reserved by Ascend, unused
    return out, smax, ssum, softmax_out, seed, offset, numels


def _prepare(segments: list, cfg: _Config, pse, atten_mask) -> None:
    """Each segment's position bias and mask ([N1, Sq, Skv] float32)."""
    batches = len(segments)
    for b, seg in enumerate(segments):
        n1, sq, skv = seg.q.shape[0], seg.q.shape[1], seg.k.shape[1]
        if pse is not None:
            if cfg.layout == "TND":
                raise ValueError("npu_fusion_attention: pse with input_layout "
                                 "TND is not supported; use BSND or BNSD")
            p = pse.detach().float()
            p = p[b if p.dim() == 4 and p.shape[0] > 1 else 0] \
                if p.dim() == 4 else p
            seg.pse = p.expand(n1, sq, skv).contiguous()
        if atten_mask is not None:
            _set_mask(seg, _hidden(atten_mask, cfg, b, batches, sq, skv))
