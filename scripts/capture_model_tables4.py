"""Fourth round of whole-workload kernel tables on the lent GPU (torch and triton only, no model zoo):
27 workloads no earlier capture ran, written in plain torch the way their reference code is. Eager and
torch.compile, training (AMP bf16/fp16 with GradScaler; fused AdamW/Adam, foreach AdamW, Adagrad, SparseAdam,
SGD with Nesterov momentum, and hand-written LAMB, LARS, Adafactor and row-wise Adagrad steps) and inference:
RetNet retention, Tacotron 2, an Evoformer pair stack, StyleGAN2 with R1, a Conformer with CTC, MAE, SchNet
forces, Glow, WaveNet, DP-SGD with vmap, k-means/IVF/ColBERT retrieval, Performer, Reformer LSH attention,
Longformer, PatchTST, Barlow Twins/VICReg, DCN-v2, ESRGAN, word2vec, PointNet++, W8A8 SmoothQuant decode,
multi-LoRA decode, FP8 training with E5M2 gradients, fast style transfer, a GRU seq2seq, S4D and SiamRPN.

    OUT=outdir python scripts/capture_model_tables4.py          (ONLY=e3_,e7_ runs a subset; BUDGET=seconds)

Writes OUT/tables4.json: per workload, rows [kernel name, launching op, calls, device time in us] for
every GPU kernel, memcpy and memset of the profiled iterations, or "ERR: ..." when the workload failed.
The launching op is the innermost CPU op with the kernel's External id (the profiler's own link).
DEV=cpu runs the same code on the CPU (a smoke test of the model code only; it records no kernels).
"""

from __future__ import annotations

import copy
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from _profile_tables import RowCapture

dev = os.environ.get("DEV", "cuda")
DT = "cuda" if dev.startswith("cuda") else "cpu"  # autocast / GradScaler device type
OUT = os.environ.get("OUT", "/tmp/o")
BUDGET_S = float(os.environ.get("BUDGET", "420"))


capture = RowCapture(OUT, "tables4.json", BUDGET_S, cuda=DT == "cuda")
run = capture.run


def amp(dtype):
    """Autocast on the run's device; float32 turns it off."""
    return torch.autocast(DT, dtype, enabled=dtype != torch.float32)


def rotate_pairs(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)


def off_diagonal(x):
    n, m = x.shape
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


# ---------------------------------------------------------------------------------------------------------------
# e1: RetNet multi-scale retention (parallel form for training, recurrent form for decoding)


class MultiScaleRetention(nn.Module):
    def __init__(s, d=512, h=4):
        super().__init__()
        s.h, s.hd = h, d // h
        s.q = nn.Linear(d, d, bias=False)
        s.k = nn.Linear(d, d, bias=False)
        s.v = nn.Linear(d, d, bias=False)
        s.g = nn.Linear(d, d, bias=False)
        s.o = nn.Linear(d, d, bias=False)
        s.gn = nn.GroupNorm(h, d, affine=False)  # per-head normalisation of the retention output
        s.register_buffer("log_gamma", torch.log(1 - 2.0 ** (-5 - torch.arange(h, dtype=torch.float))))
        s.register_buffer("theta", 10000 ** (-torch.arange(0, s.hd, 2).float() / s.hd))

    def rope(s, n0, t, device):
        ang = torch.arange(n0, n0 + t, device=device).float()[:, None] * s.theta
        return ang.cos(), ang.sin()

    def heads(s, lin, x):
        b, t, _ = x.shape
        return lin(x).view(b, t, s.h, s.hd).transpose(1, 2)

    def forward(s, x):
        b, t, c = x.shape
        cos, sin = s.rope(0, t, x.device)
        q = rotate_pairs(s.heads(s.q, x), cos, sin)
        k = rotate_pairs(s.heads(s.k, x), cos, sin) * s.hd**-0.5
        v = s.heads(s.v, x)
        n = torch.arange(t, device=x.device)
        rel = (n[:, None] - n[None, :]).float()
        decay = torch.where(rel >= 0, torch.exp(rel.clamp(min=0) * s.log_gamma[:, None, None]), 0.0)
        decay = decay / decay.sum(-1, keepdim=True).sqrt()
        att = (q @ k.transpose(-1, -2)) * decay
        att = att / att.abs().sum(-1, keepdim=True).clamp(min=1)
        o = s.gn((att @ v).transpose(1, 2).reshape(b * t, c)).view(b, t, c)
        return s.o(F.silu(s.g(x)) * o)

    def step(s, x, state, pos):  # x (b, 1, c), state (b, h, hd, hd)
        b = x.shape[0]
        cos, sin = s.rope(pos, 1, x.device)
        q = rotate_pairs(s.heads(s.q, x), cos, sin)
        k = rotate_pairs(s.heads(s.k, x), cos, sin) * s.hd**-0.5
        v = s.heads(s.v, x)
        state = state * s.log_gamma.exp()[:, None, None] + k.transpose(-1, -2) @ v
        o = s.gn((q @ state).transpose(1, 2).reshape(b, -1)).view(b, 1, -1)
        return s.o(F.silu(s.g(x)) * o), state


class RetBlock(nn.Module):
    def __init__(s, d, h):
        super().__init__()
        s.n1, s.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        s.ret = MultiScaleRetention(d, h)
        s.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(s, x):
        x = x + s.ret(s.n1(x))
        return x + s.ff(s.n2(x))

    def step(s, x, state, pos):
        y, state = s.ret.step(s.n1(x), state, pos)
        x = x + y
        return x + s.ff(s.n2(x)), state


class RetNet(nn.Module):
    def __init__(s, vocab=8192, d=512, h=4, layers=3):
        super().__init__()
        s.emb = nn.Embedding(vocab, d)
        s.blocks = nn.ModuleList(RetBlock(d, h) for _ in range(layers))
        s.norm = nn.LayerNorm(d)
        s.head = nn.Linear(d, vocab, bias=False)

    def forward(s, ids):
        x = s.emb(ids)
        for b in s.blocks:
            x = b(x)
        return s.head(s.norm(x))

    def step(s, ids, states, pos):
        x = s.emb(ids)
        new = []
        for b, st in zip(s.blocks, states, strict=True):
            x, st = b.step(x, st, pos)
            new.append(st)
        return s.head(s.norm(x)), new


def b_retnet(B=8, T=512, vocab=8192, d=512, h=4, layers=3, decode=16):
    m = RetNet(vocab, d, h, layers).to(dev)
    cm = torch.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, fused=True)
    ids = torch.randint(0, vocab, (B, T + 1), device=dev)

    def f():
        with amp(torch.bfloat16):
            loss = F.cross_entropy(cm(ids[:, :-1]).flatten(0, 1).float(), ids[:, 1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad(), amp(torch.bfloat16):  # recurrent decoding: O(1) state per token
            states = [torch.zeros(B, h, d // h, d // h, device=dev) for _ in range(layers)]
            tok = ids[:, :1]
            for pos in range(decode):
                logits, states = m.step(tok, states, pos)
                tok = logits[:, -1].argmax(-1, keepdim=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e2: Tacotron 2 (location-sensitive attention, LSTMCell decoder loop, teacher forcing)


class LocationSensitiveAttention(nn.Module):
    def __init__(s, rnn=1024, emb=512, att=128, nf=32, k=31):
        super().__init__()
        s.query = nn.Linear(rnn, att, bias=False)
        s.memory = nn.Linear(emb, att, bias=False)
        s.v = nn.Linear(att, 1, bias=False)
        s.loc_conv = nn.Conv1d(2, nf, k, padding=k // 2, bias=False)
        s.loc_dense = nn.Linear(nf, att, bias=False)

    def forward(s, h, memory, processed_memory, weights_cat, mask):
        loc = s.loc_dense(s.loc_conv(weights_cat).transpose(1, 2))
        energies = s.v(torch.tanh(s.query(h)[:, None] + loc + processed_memory)).squeeze(-1)
        w = F.softmax(energies.masked_fill(mask, float("-inf")), dim=1)
        ctx = torch.bmm(w[:, None].to(memory.dtype), memory).squeeze(1)
        return ctx, w


class Tacotron2(nn.Module):
    def __init__(s, n_sym=148, emb=512, mel=80, rnn=1024, pre=256):
        super().__init__()
        s.mel, s.rnn = mel, rnn
        s.embed = nn.Embedding(n_sym, emb)
        s.convs = nn.Sequential(
            *[m for _ in range(3) for m in (nn.Conv1d(emb, emb, 5, padding=2), nn.BatchNorm1d(emb), nn.ReLU())]
        )
        s.lstm = nn.LSTM(emb, emb // 2, batch_first=True, bidirectional=True)
        s.pre1, s.pre2 = nn.Linear(mel, pre), nn.Linear(pre, pre)
        s.att_rnn = nn.LSTMCell(pre + emb, rnn)
        s.attn = LocationSensitiveAttention(rnn, emb)
        s.dec_rnn = nn.LSTMCell(rnn + emb, rnn)
        s.proj = nn.Linear(rnn + emb, mel)
        s.gate = nn.Linear(rnn + emb, 1)
        post = []
        for i in range(5):
            ci, co = (mel if i == 0 else 512), (mel if i == 4 else 512)
            post += [nn.Conv1d(ci, co, 5, padding=2), nn.BatchNorm1d(co)] + ([nn.Tanh()] if i < 4 else [])
            post.append(nn.Dropout(0.5))
        s.postnet = nn.Sequential(*post)

    def encode(s, text, lengths_cpu):
        x = s.convs(s.embed(text).transpose(1, 2)).transpose(1, 2)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths_cpu, batch_first=True, enforce_sorted=False)
        out, _ = s.lstm(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=text.shape[1])[0]

    def forward(s, text, lengths_cpu, mask, mels):
        memory = s.encode(text, lengths_cpu)
        B, T, _ = memory.shape
        frames = torch.cat([mels.new_zeros(B, 1, s.mel), mels.transpose(1, 2)[:, :-1]], 1)
        prenet = F.dropout(F.relu(s.pre2(F.dropout(F.relu(s.pre1(frames)), 0.5, True))), 0.5, True)
        z = memory.new_zeros(B, s.rnn)
        ah, ac, dh, dc = z, z, z, z
        ctx = memory.new_zeros(B, memory.shape[2])
        w = torch.zeros(B, T, device=memory.device)
        wcum = torch.zeros_like(w)
        pm = s.attn.memory(memory)
        outs, gates = [], []
        for t in range(frames.shape[1]):
            ah, ac = s.att_rnn(torch.cat([prenet[:, t], ctx], -1), (ah, ac))
            ah = F.dropout(ah, 0.1, s.training)
            ctx, w = s.attn(ah, memory, pm, torch.stack([w, wcum], 1), mask)
            wcum = wcum + w
            dh, dc = s.dec_rnn(torch.cat([ah, ctx], -1), (dh, dc))
            dh = F.dropout(dh, 0.1, s.training)
            hc = torch.cat([dh, ctx], -1)
            outs.append(s.proj(hc))
            gates.append(s.gate(hc))
        mel_out = torch.stack(outs, 2)
        return mel_out, mel_out + s.postnet(mel_out), torch.cat(gates, 1)


def b_tacotron2(B=16, T_in=120, T_out=80, dtype=torch.float16):
    m = Tacotron2().to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, weight_decay=1e-6)
    scaler = torch.amp.GradScaler(DT)
    lengths = torch.randint(T_in // 2, T_in + 1, (B,))
    lengths[0] = T_in
    text = torch.randint(1, 148, (B, T_in))
    text[torch.arange(T_in)[None] >= lengths[:, None]] = 0
    text = text.to(dev)
    mask = (torch.arange(T_in)[None] >= lengths[:, None]).to(dev)
    mels = torch.randn(B, 80, T_out, device=dev)
    gate_tgt = torch.zeros(B, T_out, device=dev)
    gate_tgt[:, -5:] = 1

    def f():
        with amp(dtype):
            mel, post, gate = m(text, lengths, mask, mels)
        loss = F.mse_loss(mel.float(), mels) + F.mse_loss(post.float(), mels)
        loss = loss + F.binary_cross_entropy_with_logits(gate.float(), gate_tgt)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e3: AlphaFold-style Evoformer block (MSA row attention with pair bias, outer product mean, triangle updates)


class MSARowAttention(nn.Module):
    def __init__(s, cm=64, cz=64, h=4, hd=16):
        super().__init__()
        s.h, s.hd = h, hd
        s.ln_m, s.ln_z = nn.LayerNorm(cm), nn.LayerNorm(cz)
        s.qkv = nn.Linear(cm, 3 * h * hd, bias=False)
        s.bias = nn.Linear(cz, h, bias=False)
        s.g = nn.Linear(cm, h * hd)
        s.o = nn.Linear(h * hd, cm)

    def forward(s, m, z):
        B, S, N, _ = m.shape
        ml = s.ln_m(m)
        q, k, v = s.qkv(ml).view(B, S, N, 3, s.h, s.hd).permute(3, 0, 1, 4, 2, 5)
        bias = s.bias(s.ln_z(z)).permute(0, 3, 1, 2)[:, None]
        p = (torch.einsum("bshqd,bshkd->bshqk", q * s.hd**-0.5, k) + bias).softmax(-1)
        o = torch.einsum("bshqk,bshkd->bshqd", p, v).permute(0, 1, 3, 2, 4).reshape(B, S, N, -1)
        return s.o(torch.sigmoid(s.g(ml)) * o)


class OuterProductMean(nn.Module):
    def __init__(s, cm=64, c=16, cz=64):
        super().__init__()
        s.ln = nn.LayerNorm(cm)
        s.a, s.b = nn.Linear(cm, c), nn.Linear(cm, c)
        s.o = nn.Linear(c * c, cz)

    def forward(s, m, msa_mask):
        ml = s.ln(m)
        a, b = s.a(ml) * msa_mask[..., None], s.b(ml) * msa_mask[..., None]
        outer = torch.einsum("bsic,bsjd->bijcd", a, b).flatten(-2)
        norm = torch.einsum("bsi,bsj->bij", msa_mask, msa_mask)[..., None]
        return s.o(outer) / (norm + 1e-3)


class TriangleMultiplication(nn.Module):
    def __init__(s, c=64, hid=64, outgoing=True):
        super().__init__()
        s.outgoing = outgoing
        s.ln, s.ln_out = nn.LayerNorm(c), nn.LayerNorm(hid)
        s.ap, s.ag, s.bp, s.bg = (nn.Linear(c, hid) for _ in range(4))
        s.g, s.o = nn.Linear(c, c), nn.Linear(hid, c)

    def forward(s, z, mask):
        zl = s.ln(z)
        a = torch.sigmoid(s.ag(zl)) * s.ap(zl) * mask[..., None]
        b = torch.sigmoid(s.bg(zl)) * s.bp(zl) * mask[..., None]
        if s.outgoing:
            x = torch.einsum("bikc,bjkc->bijc", a, b)
        else:
            x = torch.einsum("bkic,bkjc->bijc", a, b)
        return torch.sigmoid(s.g(zl)) * s.o(s.ln_out(x))


class TriangleAttention(nn.Module):
    def __init__(s, c=64, h=4, hd=16, starting=True):
        super().__init__()
        s.h, s.hd, s.starting = h, hd, starting
        s.ln = nn.LayerNorm(c)
        s.qkv = nn.Linear(c, 3 * h * hd, bias=False)
        s.bias = nn.Linear(c, h, bias=False)
        s.g, s.o = nn.Linear(c, h * hd), nn.Linear(h * hd, c)

    def forward(s, z, mask):
        if not s.starting:
            z, mask = z.transpose(1, 2), mask.transpose(1, 2)
        B, N, _, _ = z.shape
        zl = s.ln(z)
        q, k, v = s.qkv(zl).view(B, N, N, 3, s.h, s.hd).permute(3, 0, 1, 4, 2, 5)
        bias = s.bias(zl).permute(0, 3, 1, 2)[:, None]
        mbias = (1e9 * (mask - 1))[:, :, None, None, :]
        logits = torch.einsum("bihqd,bihkd->bihqk", q * s.hd**-0.5, k) + bias + mbias
        o = torch.einsum("bihqk,bihkd->bihqd", logits.softmax(-1), v).permute(0, 1, 3, 2, 4).reshape(B, N, N, -1)
        o = s.o(torch.sigmoid(s.g(zl)) * o)
        return o.transpose(1, 2) if not s.starting else o


class EvoformerBlock(nn.Module):
    def __init__(s, cm=64, cz=64):
        super().__init__()
        s.row = MSARowAttention(cm, cz)
        s.msa_trans = nn.Sequential(nn.LayerNorm(cm), nn.Linear(cm, 4 * cm), nn.ReLU(), nn.Linear(4 * cm, cm))
        s.opm = OuterProductMean(cm, 16, cz)
        s.tri_out = TriangleMultiplication(cz, cz, True)
        s.tri_in = TriangleMultiplication(cz, cz, False)
        s.att_start = TriangleAttention(cz, starting=True)
        s.att_end = TriangleAttention(cz, starting=False)
        s.pair_trans = nn.Sequential(nn.LayerNorm(cz), nn.Linear(cz, 4 * cz), nn.ReLU(), nn.Linear(4 * cz, cz))

    def forward(s, m, z, msa_mask, pair_mask):
        m = m + F.dropout(s.row(m, z), 0.15, s.training)
        m = m + s.msa_trans(m)
        z = z + s.opm(m, msa_mask)
        z = z + F.dropout(s.tri_out(z, pair_mask), 0.25, s.training)
        z = z + F.dropout(s.tri_in(z, pair_mask), 0.25, s.training)
        z = z + F.dropout(s.att_start(z, pair_mask), 0.25, s.training)
        z = z + F.dropout(s.att_end(z, pair_mask), 0.25, s.training)
        return m, z + s.pair_trans(z)


class Evoformer(nn.Module):
    def __init__(s, cm=64, cz=64, blocks=2, bins=64):
        super().__init__()
        s.tf_left, s.tf_right = nn.Linear(22, cz), nn.Linear(22, cz)
        s.tf_m, s.msa = nn.Linear(22, cm), nn.Linear(49, cm)
        s.relpos = nn.Embedding(65, cz)
        s.blocks = nn.ModuleList(EvoformerBlock(cm, cz) for _ in range(blocks))
        s.dist = nn.Linear(cz, bins)

    def forward(s, tf, msa_feat, msa_mask, pair_mask):
        N = tf.shape[1]
        r = torch.arange(N, device=tf.device)
        z = s.tf_left(tf)[:, :, None] + s.tf_right(tf)[:, None, :]
        z = z + s.relpos((r[:, None] - r[None, :]).clamp(-32, 32) + 32)
        m = s.msa(msa_feat) + s.tf_m(tf)[:, None]
        for b in s.blocks:
            m, z = b(m, z, msa_mask, pair_mask)
        return s.dist(z + z.transpose(1, 2))


def b_evoformer(B=1, N=128, S=32, blocks=1):  # one block: a second would compile to the same kernels
    m = Evoformer(blocks=blocks).to(dev)
    cm = torch.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, foreach=True)
    tf = F.one_hot(torch.randint(0, 22, (B, N), device=dev), 22).float()
    msa_feat = torch.randn(B, S, N, 49, device=dev)
    msa_mask = (torch.rand(B, S, N, device=dev) > 0.1).float()
    pair_mask = torch.ones(B, N, N, device=dev)
    pair_mask[:, N - 8 :] = 0
    pair_mask[:, :, N - 8 :] = 0
    bins = torch.randint(0, 64, (B, N, N), device=dev)

    def f():
        with amp(torch.bfloat16):
            logits = cm(tf, msa_feat, msa_mask, pair_mask)
        loss = (F.cross_entropy(logits.float().permute(0, 3, 1, 2), bins, reduction="none") * pair_mask).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e4: StyleGAN2 (modulated convolutions as grouped convs, transposed-conv upsampling, minibatch std, R1 penalty)


class EqLinear(nn.Module):
    def __init__(s, i, o, lr_mul=1.0, bias_init=0.0, act=False):
        super().__init__()
        s.w = nn.Parameter(torch.randn(o, i) / lr_mul)
        s.b = nn.Parameter(torch.full((o,), float(bias_init)))
        s.scale, s.lr_mul, s.act = lr_mul / math.sqrt(i), lr_mul, act

    def forward(s, x):
        out = F.linear(x, s.w * s.scale, s.b * s.lr_mul)
        return F.leaky_relu(out, 0.2) * math.sqrt(2) if s.act else out


class ModConv(nn.Module):
    def __init__(s, cin, cout, k, wdim, demod=True, up=False):
        super().__init__()
        s.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        s.scale, s.k, s.demod, s.up = 1 / math.sqrt(cin * k * k), k, demod, up
        s.affine = EqLinear(wdim, cin, bias_init=1.0)
        blur = torch.tensor([1.0, 3.0, 3.0, 1.0])
        s.register_buffer("blur", (blur[:, None] * blur[None]) / blur.sum() ** 2 * 4)

    def forward(s, x, w):
        B, cin, H, W = x.shape
        wt = s.scale * s.weight[None] * s.affine(w)[:, None, :, None, None]
        if s.demod:
            wt = wt * torch.rsqrt(wt.pow(2).sum([2, 3, 4], keepdim=True) + 1e-8)
        cout = wt.shape[1]
        x = x.reshape(1, B * cin, H, W)
        if s.up:
            wt = wt.transpose(1, 2).reshape(B * cin, cout, s.k, s.k)
            x = F.conv_transpose2d(x, wt, stride=2, groups=B)
            x = F.conv2d(x, s.blur.expand(B * cout, 1, 4, 4), padding=1, groups=B * cout)
        else:
            x = F.conv2d(x, wt.reshape(B * cout, cin, s.k, s.k), padding=s.k // 2, groups=B)
        return x.view(B, cout, x.shape[2], x.shape[3])


class StyledLayer(nn.Module):
    def __init__(s, cin, cout, wdim, up=False):
        super().__init__()
        s.conv = ModConv(cin, cout, 3, wdim, up=up)
        s.noise = nn.Parameter(torch.zeros(()))
        s.bias = nn.Parameter(torch.zeros(cout))

    def forward(s, x, w):
        x = s.conv(x, w)
        x = x + s.noise * torch.randn(x.shape[0], 1, x.shape[2], x.shape[3], device=x.device)
        return F.leaky_relu(x + s.bias[None, :, None, None], 0.2) * math.sqrt(2)


class StyleGenerator(nn.Module):
    def __init__(s, zdim=256, ch=128, res=64):
        super().__init__()
        s.mapping = nn.Sequential(*[EqLinear(zdim, zdim, lr_mul=0.01, act=True) for _ in range(4)])
        s.const = nn.Parameter(torch.randn(1, ch, 4, 4))
        s.conv0 = StyledLayer(ch, ch, zdim)
        s.rgb0 = ModConv(ch, 3, 1, zdim, demod=False)
        n = int(math.log2(res)) - 2
        s.ups = nn.ModuleList(StyledLayer(ch, ch, zdim, up=True) for _ in range(n))
        s.convs = nn.ModuleList(StyledLayer(ch, ch, zdim) for _ in range(n))
        s.rgbs = nn.ModuleList(ModConv(ch, 3, 1, zdim, demod=False) for _ in range(n))

    def forward(s, z):
        w = s.mapping(z * torch.rsqrt(z.pow(2).mean(1, keepdim=True) + 1e-8))
        x = s.conv0(s.const.expand(z.shape[0], -1, -1, -1), w)
        rgb = s.rgb0(x, w)
        for up, conv, to_rgb in zip(s.ups, s.convs, s.rgbs, strict=True):
            x = conv(up(x, w), w)
            rgb = F.interpolate(rgb, scale_factor=2, mode="bilinear", align_corners=False) + to_rgb(x, w)
        return rgb


def minibatch_std(x, group=4):
    B, C, H, W = x.shape
    G = min(group, B)
    y = x.reshape(G, -1, 1, C, H, W)
    y = ((y - y.mean(0)).square().mean(0) + 1e-8).sqrt().mean([2, 3, 4])
    return torch.cat([x, y.reshape(-1, 1, 1, 1).repeat(G, 1, H, W)], 1)


class StyleDiscriminator(nn.Module):
    def __init__(s, ch=128, res=64):
        super().__init__()
        s.frgb = nn.Conv2d(3, ch, 1)
        n = int(math.log2(res)) - 2
        s.blocks = nn.ModuleList(
            nn.ModuleList([nn.Conv2d(ch, ch, 3, padding=1), nn.Conv2d(ch, ch, 3, padding=1), nn.Conv2d(ch, ch, 1)])
            for _ in range(n)
        )
        s.final = nn.Conv2d(ch + 1, ch, 3, padding=1)
        s.fc1, s.fc2 = EqLinear(ch * 16, ch, act=True), EqLinear(ch, 1)

    def forward(s, x):
        x = F.leaky_relu(s.frgb(x), 0.2)
        for c1, c2, sk in s.blocks:
            y = F.avg_pool2d(F.leaky_relu(c2(F.leaky_relu(c1(x), 0.2)), 0.2), 2)
            x = (y + sk(F.avg_pool2d(x, 2))) / math.sqrt(2)
        x = F.leaky_relu(s.final(minibatch_std(x)), 0.2)
        return s.fc2(s.fc1(x.flatten(1)))


def b_stylegan2(B=16, res=64, zdim=256):
    G, D = StyleGenerator(zdim, 128, res).to(dev), StyleDiscriminator(128, res).to(dev)
    optG = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
    optD = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99))
    real = torch.randn(B, 3, res, res, device=dev)

    def f():
        z = torch.randn(B, zdim, device=dev)
        loss_g = F.softplus(-D(G(z))).mean()
        optG.zero_grad(set_to_none=True)
        loss_g.backward()
        optG.step()
        with torch.no_grad():
            fake = G(torch.randn(B, zdim, device=dev))
        x = real.detach().requires_grad_(True)
        d_real = D(x)
        loss_d = F.softplus(D(fake)).mean() + F.softplus(-d_real).mean()
        (g,) = torch.autograd.grad(d_real.sum(), x, create_graph=True)
        r1 = g.square().sum([1, 2, 3]).mean()
        optD.zero_grad(set_to_none=True)
        (loss_d + 5.0 * r1).backward()
        optD.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e5: Conformer encoder (relative-position MHSA with rel_shift, GLU/depthwise conv module, SpecAugment) + CTC


def rel_shift(x):
    b, h, t, n = x.shape
    x = torch.cat([x.new_zeros(b, h, t, 1), x], -1).view(b, h, n + 1, t)
    return x[:, :, 1:].reshape(b, h, t, n)[..., : n // 2 + 1]


def rel_pos_emb(T, d, device):
    pos = torch.arange(T - 1, -T, -1.0, device=device)[:, None]
    div = torch.exp(torch.arange(0, d, 2, device=device).float() * (-math.log(10000.0) / d))
    pe = torch.zeros(2 * T - 1, d, device=device)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return pe[None]


class RelPosMHSA(nn.Module):
    def __init__(s, d, h, p=0.1):
        super().__init__()
        s.h, s.hd, s.p = h, d // h, p
        s.qkv, s.pos, s.o = nn.Linear(d, 3 * d), nn.Linear(d, d, bias=False), nn.Linear(d, d)
        s.u = nn.Parameter(torch.zeros(h, s.hd))
        s.v = nn.Parameter(torch.zeros(h, s.hd))

    def forward(s, x, pos_emb, pad_mask):
        B, T, C = x.shape
        q, k, v = s.qkv(x).view(B, T, 3, s.h, s.hd).unbind(2)
        p = s.pos(pos_emb).view(1, -1, s.h, s.hd).transpose(1, 2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        ac = torch.matmul((q + s.u).transpose(1, 2), k.transpose(-1, -2))
        bd = rel_shift(torch.matmul((q + s.v).transpose(1, 2), p.transpose(-1, -2)))
        scores = (ac + bd) / math.sqrt(s.hd)
        scores = scores.masked_fill(pad_mask[:, None, None, :], torch.finfo(scores.dtype).min)
        attn = F.dropout(scores.softmax(-1), s.p, s.training)
        return s.o((attn @ v).transpose(1, 2).reshape(B, T, C))


class ConformerConv(nn.Module):
    def __init__(s, d, k=31):
        super().__init__()
        s.ln = nn.LayerNorm(d)
        s.pw1, s.dw = nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        s.bn, s.pw2 = nn.BatchNorm1d(d), nn.Conv1d(d, d, 1)

    def forward(s, x, pad_mask):
        x = s.ln(x).masked_fill(pad_mask[..., None], 0.0).transpose(1, 2)
        x = s.pw2(F.silu(s.bn(s.dw(F.glu(s.pw1(x), dim=1)))))
        return F.dropout(x, 0.1, s.training).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(s, d, h):
        super().__init__()

        def ffn():
            return nn.Sequential(
                nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Dropout(0.1), nn.Linear(4 * d, d), nn.Dropout(0.1)
            )

        s.ff1, s.ff2 = ffn(), ffn()
        s.ln_att, s.att = nn.LayerNorm(d), RelPosMHSA(d, h)
        s.conv, s.ln_out = ConformerConv(d), nn.LayerNorm(d)

    def forward(s, x, pos_emb, pad_mask):
        x = x + 0.5 * s.ff1(x)
        x = x + F.dropout(s.att(s.ln_att(x), pos_emb, pad_mask), 0.1, s.training)
        x = x + s.conv(x, pad_mask)
        return s.ln_out(x + 0.5 * s.ff2(x))


class Conformer(nn.Module):
    def __init__(s, mels=80, d=256, h=4, layers=4, vocab=256):
        super().__init__()
        s.d = d
        s.sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        s.sub_out = nn.Linear(d * (((mels - 1) // 2 - 1) // 2), d)
        s.blocks = nn.ModuleList(ConformerBlock(d, h) for _ in range(layers))
        s.head = nn.Linear(d, vocab)

    def forward(s, feats, pad_mask):
        x = s.sub(feats[:, None])  # B, d, T', F'
        x = s.sub_out(x.permute(0, 2, 1, 3).flatten(2)) * math.sqrt(s.d)
        pos = rel_pos_emb(x.shape[1], s.d, x.device)
        for b in s.blocks:
            x = b(x, pos, pad_mask)
        return s.head(x)


def spec_augment(x, F_=27, n_f=2, T_=40, n_t=2):
    B, T, Fd = x.shape
    fi, ti = torch.arange(Fd, device=x.device)[None], torch.arange(T, device=x.device)[None]
    mask = torch.zeros(B, T, Fd, dtype=torch.bool, device=x.device)
    for _ in range(n_f):
        w = torch.randint(0, F_ + 1, (B, 1), device=x.device)
        f0 = (torch.rand(B, 1, device=x.device) * (Fd - w)).long()
        mask |= ((fi >= f0) & (fi < f0 + w))[:, None, :]
    for _ in range(n_t):
        w = torch.randint(0, T_ + 1, (B, 1), device=x.device)
        t0 = (torch.rand(B, 1, device=x.device) * (T - w)).long()
        mask |= ((ti >= t0) & (ti < t0 + w))[:, :, None]
    return x.masked_fill(mask, 0.0)


def b_conformer(B=16, T=800, layers=4, d=256, dtype=torch.float16):
    m = Conformer(d=d, layers=layers).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, foreach=True, weight_decay=1e-3)
    scaler = torch.amp.GradScaler(DT)
    feats = torch.randn(B, T, 80, device=dev)
    lens = torch.randint(T // 2, T + 1, (B,), device=dev)
    lens[0] = T
    out_lens = ((lens - 3) // 2 + 1 - 3) // 2 + 1
    Tp = int(out_lens.max())
    pad_mask = torch.arange(Tp, device=dev)[None] >= out_lens[:, None]
    tgt_lens = (out_lens // 3).clamp(min=1)
    targets = torch.randint(1, 256, (B, int(tgt_lens.max())), device=dev)

    def f():
        x = spec_augment(feats)
        with amp(dtype):
            logits = m(x, pad_mask)
        logp = logits.float().log_softmax(-1).transpose(0, 1)
        loss = F.ctc_loss(logp, targets, out_lens, tgt_lens, blank=0, zero_infinity=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(m.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e6: MAE pre-training (random masking by argsort of noise, decoder with mask tokens, normalised-pixel loss), LAMB


def sincos_pos_embed(d, n):
    g = torch.arange(n, dtype=torch.float)
    gy, gx = torch.meshgrid(g, g, indexing="ij")
    omega = 1.0 / 10000 ** (torch.arange(d // 4, dtype=torch.float) / (d / 4))

    def emb(p):
        out = p.flatten()[:, None] * omega[None]
        return torch.cat([out.sin(), out.cos()], 1)

    return torch.cat([torch.zeros(1, d), torch.cat([emb(gy), emb(gx)], 1)], 0)[None]


class ViTBlock(nn.Module):
    def __init__(s, d, h, mlp=4):
        super().__init__()
        s.h = h
        s.n1, s.n2 = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
        s.qkv, s.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        s.mlp = nn.Sequential(nn.Linear(d, mlp * d), nn.GELU(), nn.Linear(mlp * d, d))

    def forward(s, x):
        B, N, C = x.shape
        q, k, v = s.qkv(s.n1(x)).view(B, N, 3, s.h, C // s.h).permute(2, 0, 3, 1, 4)
        x = x + s.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, N, C))
        return x + s.mlp(s.n2(x))


class MAE(nn.Module):
    def __init__(s, img=224, p=16, d=384, depth=4, h=6, dd=256, ddepth=2, dh=8, ratio=0.75):
        super().__init__()
        s.p, s.n, s.ratio = p, img // p, ratio
        s.patch = nn.Conv2d(3, d, p, p)
        s.cls = nn.Parameter(torch.zeros(1, 1, d))
        s.register_buffer("pos", sincos_pos_embed(d, s.n))
        s.enc = nn.ModuleList(ViTBlock(d, h) for _ in range(depth))
        s.norm = nn.LayerNorm(d)
        s.dec_embed = nn.Linear(d, dd)
        s.mask_token = nn.Parameter(torch.zeros(1, 1, dd))
        s.register_buffer("dec_pos", sincos_pos_embed(dd, s.n))
        s.dec = nn.ModuleList(ViTBlock(dd, dh) for _ in range(ddepth))
        s.dec_norm, s.dec_pred = nn.LayerNorm(dd), nn.Linear(dd, p * p * 3)

    def patchify(s, imgs):
        B, p, n = imgs.shape[0], s.p, s.n
        x = imgs.reshape(B, 3, n, p, n, p)
        return torch.einsum("nchpwq->nhwpqc", x).reshape(B, n * n, p * p * 3)

    def forward(s, imgs):
        x = s.patch(imgs).flatten(2).transpose(1, 2) + s.pos[:, 1:]
        B, L, D = x.shape
        keep = int(L * (1 - s.ratio))
        ids_shuffle = torch.rand(B, L, device=x.device).argsort(1)
        ids_restore = ids_shuffle.argsort(1)
        x = x.gather(1, ids_shuffle[:, :keep, None].expand(-1, -1, D))
        mask = torch.ones(B, L, device=x.device)
        mask[:, :keep] = 0
        mask = mask.gather(1, ids_restore)
        x = torch.cat([(s.cls + s.pos[:, :1]).expand(B, -1, -1), x], 1)
        for blk in s.enc:
            x = blk(x)
        x = s.dec_embed(s.norm(x))
        mt = s.mask_token.expand(B, L + 1 - x.shape[1], -1)
        y = torch.cat([x[:, 1:], mt], 1)
        y = y.gather(1, ids_restore[..., None].expand(-1, -1, x.shape[2]))
        x = torch.cat([x[:, :1], y], 1) + s.dec_pos
        for blk in s.dec:
            x = blk(x)
        pred = s.dec_pred(s.dec_norm(x))[:, 1:]
        target = s.patchify(imgs)
        mean, var = target.mean(-1, keepdim=True), target.var(-1, keepdim=True)
        target = (target - mean) / (var + 1e-6) ** 0.5
        loss = ((pred.float() - target) ** 2).mean(-1)
        return (loss * mask).sum() / mask.sum()


class Lamb:
    """LAMB written by hand with foreach ops, the way large-batch pre-training scripts carry it."""

    def __init__(s, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-6, wd=0.05):
        s.params = [p for p in params if p.requires_grad]
        s.lr, s.b1, s.b2, s.eps, s.wd, s.t = lr, betas[0], betas[1], eps, wd, 0
        s.m = [torch.zeros_like(p) for p in s.params]
        s.v = [torch.zeros_like(p) for p in s.params]

    @torch.no_grad()
    def step(s):
        s.t += 1
        ps = [p for p in s.params if p.grad is not None]
        gs = [p.grad for p in ps]
        ms = [m for m, p in zip(s.m, s.params, strict=True) if p.grad is not None]
        vs = [v for v, p in zip(s.v, s.params, strict=True) if p.grad is not None]
        torch._foreach_mul_(ms, s.b1)
        torch._foreach_add_(ms, gs, alpha=1 - s.b1)
        torch._foreach_mul_(vs, s.b2)
        torch._foreach_addcmul_(vs, gs, gs, value=1 - s.b2)
        den = torch._foreach_sqrt(vs)
        torch._foreach_div_(den, math.sqrt(1 - s.b2**s.t))
        torch._foreach_add_(den, s.eps)
        upd = torch._foreach_div(ms, den)
        torch._foreach_div_(upd, 1 - s.b1**s.t)
        torch._foreach_add_(upd, ps, alpha=s.wd)
        wn, un = torch.stack(torch._foreach_norm(ps)), torch.stack(torch._foreach_norm(upd))
        trust = torch.where((wn > 0) & (un > 0), wn / un, torch.ones_like(wn))
        for p, u, tr in zip(ps, upd, trust.unbind(), strict=True):
            p.add_(u * tr, alpha=-s.lr)

    def zero_grad(s):
        for p in s.params:
            p.grad = None


def b_mae(B=64, img=224):
    m = MAE(img=img).to(dev)
    cm = torch.compile(m)
    opt = Lamb(m.parameters())
    imgs = torch.randn(B, 3, img, img, device=dev)

    def f():
        with amp(torch.bfloat16):
            loss = cm(imgs)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e7: SchNet energies and forces (radius graph, RBF filters, index_add message passing, force loss = double bwd)


def ssp(x):
    return F.softplus(x) - math.log(2.0)


class CFConv(nn.Module):
    def __init__(s, h, nrbf, cutoff):
        super().__init__()
        s.cutoff = cutoff
        s.lin1 = nn.Linear(h, h, bias=False)
        s.f1, s.f2 = nn.Linear(nrbf, h), nn.Linear(h, h)
        s.lin2, s.lin3 = nn.Linear(h, h), nn.Linear(h, h)

    def forward(s, x, d, rbf, src, dst):
        C = 0.5 * (torch.cos(d * math.pi / s.cutoff) + 1.0)
        W = s.f2(ssp(s.f1(rbf))) * C[:, None]
        agg = torch.zeros_like(x).index_add_(0, dst, s.lin1(x)[src] * W)
        return s.lin3(ssp(s.lin2(agg)))


class SchNet(nn.Module):
    def __init__(s, h=128, nrbf=50, cutoff=5.0, blocks=3):
        super().__init__()
        s.emb = nn.Embedding(100, h)
        s.register_buffer("mu", torch.linspace(0, cutoff, nrbf))
        s.blocks = nn.ModuleList(CFConv(h, nrbf, cutoff) for _ in range(blocks))
        s.out1, s.out2 = nn.Linear(h, h // 2), nn.Linear(h // 2, 1)

    def forward(s, z, pos, src, dst, batch, nmol):
        d = (pos[src] - pos[dst]).norm(dim=-1)
        rbf = torch.exp(-10.0 * (d[:, None] - s.mu) ** 2)
        x = s.emb(z)
        for b in s.blocks:
            x = x + b(x, d, rbf, src, dst)
        e = s.out2(ssp(s.out1(x))).squeeze(-1)
        return torch.zeros(nmol, device=pos.device, dtype=e.dtype).index_add_(0, batch, e)


def b_schnet(nmol=32, natom=24, cutoff=5.0):
    N = nmol * natom
    m = SchNet(cutoff=cutoff).to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=5e-4, amsgrad=True)
    pos0 = torch.randn(N, 3, device=dev) * 1.5
    z = torch.randint(1, 10, (N,), device=dev)
    batch = torch.arange(nmol, device=dev).repeat_interleave(natom)
    e_ref, f_ref = torch.randn(nmol, device=dev), torch.randn(N, 3, device=dev)
    not_self = ~torch.eye(N, dtype=torch.bool, device=dev)

    def f():
        pos = pos0.clone().requires_grad_(True)
        with torch.no_grad():  # radius graph within each molecule
            adj = (batch[:, None] == batch[None, :]) & (torch.cdist(pos, pos) < cutoff) & not_self
            src, dst = adj.nonzero(as_tuple=True)
        energy = m(z, pos, src, dst, batch, nmol)
        (grad,) = torch.autograd.grad(energy.sum(), pos, create_graph=True)
        loss = F.mse_loss(energy, e_ref) + 100.0 * F.mse_loss(-grad, f_ref)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e8: Glow (actnorm, invertible 1x1 conv with slogdet, affine coupling, multi-scale split) training and sampling


class ActNorm(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.loc = nn.Parameter(torch.zeros(1, c, 1, 1))
        s.logs = nn.Parameter(torch.zeros(1, c, 1, 1))

    def forward(s, x, logdet):
        return (x + s.loc) * s.logs.exp(), logdet + x.shape[2] * x.shape[3] * s.logs.sum()

    def reverse(s, y):
        return y * (-s.logs).exp() - s.loc


class InvConv(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.weight = nn.Parameter(torch.linalg.qr(torch.randn(c, c))[0])

    def forward(s, x, logdet):
        logabsdet = torch.linalg.slogdet(s.weight)[1]
        return F.conv2d(x, s.weight[:, :, None, None]), logdet + x.shape[2] * x.shape[3] * logabsdet

    def reverse(s, y):
        return F.conv2d(y, torch.linalg.inv(s.weight)[:, :, None, None])


def zero_conv(ci, co):
    c = nn.Conv2d(ci, co, 3, padding=1)
    nn.init.zeros_(c.weight)
    nn.init.zeros_(c.bias)
    return c


class Coupling(nn.Module):
    def __init__(s, c, hid):
        super().__init__()
        s.net = nn.Sequential(
            nn.Conv2d(c // 2, hid, 3, padding=1), nn.ReLU(), nn.Conv2d(hid, hid, 1), nn.ReLU(), zero_conv(hid, c)
        )

    def forward(s, x, logdet):
        xa, xb = x.chunk(2, 1)
        h = s.net(xa)
        scale = torch.sigmoid(h[:, 1::2] + 2.0)
        return torch.cat([xa, (xb + h[:, 0::2]) * scale], 1), logdet + torch.log(scale).flatten(1).sum(1)

    def reverse(s, y):
        ya, yb = y.chunk(2, 1)
        h = s.net(ya)
        return torch.cat([ya, yb / torch.sigmoid(h[:, 1::2] + 2.0) - h[:, 0::2]], 1)


def squeeze2(x):
    B, C, H, W = x.shape
    return x.view(B, C, H // 2, 2, W // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(B, C * 4, H // 2, W // 2)


def unsqueeze2(x):
    B, C, H, W = x.shape
    return x.view(B, C // 4, 2, 2, H, W).permute(0, 1, 4, 2, 5, 3).reshape(B, C // 4, H * 2, W * 2)


def gauss_logp(x, mean, logs):
    return (-0.5 * (math.log(2 * math.pi) + 2 * logs + (x - mean) ** 2 * torch.exp(-2 * logs))).flatten(1).sum(1)


class Glow(nn.Module):
    def __init__(s, img=32, levels=3, K=4, hid=256):
        super().__init__()
        s.levels, s.priors = nn.ModuleList(), nn.ModuleList()
        ch = 3
        for lvl in range(levels):
            ch *= 4
            s.levels.append(nn.ModuleList(m for _ in range(K) for m in (ActNorm(ch), InvConv(ch), Coupling(ch, hid))))
            if lvl < levels - 1:
                s.priors.append(zero_conv(ch // 2, ch))
                ch //= 2
            else:
                s.priors.append(zero_conv(ch, 2 * ch))
        s.top = (ch, img // 2**levels)

    def forward(s, x):
        logdet = torch.zeros(x.shape[0], device=x.device)
        logp = torch.zeros_like(logdet)
        for lvl, steps in enumerate(s.levels):
            x = squeeze2(x)
            for m in steps:
                x, logdet = m(x, logdet)
            if lvl < len(s.levels) - 1:
                x, z = x.chunk(2, 1)
                mean, logs = s.priors[lvl](x).chunk(2, 1)
                logp = logp + gauss_logp(z, mean, logs)
            else:
                mean, logs = s.priors[lvl](torch.zeros_like(x)).chunk(2, 1)
                logp = logp + gauss_logp(x, mean, logs)
        return logp, logdet

    @torch.no_grad()
    def sample(s, B, temp=0.7):
        ch, hw = s.top
        x = None
        for lvl in reversed(range(len(s.levels))):
            if x is None:
                mean, logs = s.priors[lvl](torch.zeros(B, ch, hw, hw, device=s.priors[lvl].weight.device)).chunk(2, 1)
                x = mean + logs.exp() * torch.randn_like(mean) * temp
            else:
                mean, logs = s.priors[lvl](x).chunk(2, 1)
                x = torch.cat([x, mean + logs.exp() * torch.randn_like(mean) * temp], 1)
            for m in reversed(s.levels[lvl]):
                x = m.reverse(x)
            x = unsqueeze2(x)
        return x


def b_glow(B=64, img=32, hid=256):
    m = Glow(img=img, hid=hid).to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-4)
    real = torch.rand(B, 3, img, img, device=dev)
    D = 3 * img * img

    def f():
        x = real + torch.rand_like(real) / 256 - 0.5
        logp, logdet = m(x)
        bpd = (-(logp + logdet - D * math.log(256)) / (D * math.log(2))).mean()
        opt.zero_grad(set_to_none=True)
        bpd.backward()
        nn.utils.clip_grad_value_(m.parameters(), 5.0)
        opt.step()
        m.sample(16)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e9: WaveNet vocoder training (gated dilated causal convs, mel upsampling by ConvTranspose1d, 256-way mu-law CE)


class WaveNet(nn.Module):
    def __init__(s, q=256, res=64, gate=64, skip=256, stacks=2, layers=10, mel=80, hop=64):
        super().__init__()
        s.emb = nn.Embedding(q, res)
        s.up = nn.ConvTranspose1d(mel, mel, 2 * hop, stride=hop, padding=hop // 2)
        s.dil = [2**i for _ in range(stacks) for i in range(layers)]
        s.filt = nn.ModuleList(nn.Conv1d(res, 2 * gate, 2, dilation=d) for d in s.dil)
        s.cond = nn.ModuleList(nn.Conv1d(mel, 2 * gate, 1) for _ in s.dil)
        s.res = nn.ModuleList(nn.Conv1d(gate, res, 1) for _ in s.dil)
        s.skip = nn.ModuleList(nn.Conv1d(gate, skip, 1) for _ in s.dil)
        s.post1, s.post2 = nn.Conv1d(skip, skip, 1), nn.Conv1d(skip, q, 1)

    def forward(s, x, c):
        h = s.emb(x).transpose(1, 2)
        c = s.up(c)[..., : x.shape[1]]
        skips = 0
        for d, f, cc, r, sk in zip(s.dil, s.filt, s.cond, s.res, s.skip, strict=True):
            a, b = (f(F.pad(h, (d, 0))) + cc(c)).chunk(2, 1)
            z = torch.tanh(a) * torch.sigmoid(b)
            skips = skips + sk(z)
            h = (h + r(z)) * math.sqrt(0.5)
        return s.post2(F.relu(s.post1(F.relu(skips))))


def b_wavenet(B=4, T=8192, hop=64, dtype=torch.float16):
    m = WaveNet(hop=hop).to(dev)
    cm = torch.compile(m)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, fused=True)
    scaler = torch.amp.GradScaler(DT)
    audio = torch.randn(B, T, device=dev).mul(0.3).clamp(-1, 1)
    mu = torch.sign(audio) * torch.log1p(255 * audio.abs()) / math.log(256)
    x = ((mu + 1) / 2 * 255 + 0.5).long()
    mel = torch.randn(B, 80, T // hop, device=dev)

    def f():
        with amp(dtype):
            logits = cm(x, mel)
        loss = F.cross_entropy(logits[:, :, :-1].float(), x[:, 1:])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e10: DP-SGD with per-sample gradients from torch.func (vmap(grad)), clipping and noise; vmap model ensembling


def b_dpsgd(B=256, C=1.0, sigma=1.0, lr=0.5):
    from torch.func import functional_call, grad, stack_module_state, vmap

    def net():
        return nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.GroupNorm(8, 32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.GroupNorm(8, 64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.GroupNorm(8, 128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10),
        ).to(dev)  # fmt: skip

    model = net()
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_fn(p, x, y):
        return F.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    per_sample_grads = vmap(grad(loss_fn), in_dims=(None, 0, 0))
    ens_params, ens_bufs = stack_module_state([net() for _ in range(4)])
    base = copy.deepcopy(model).to("meta")

    def fmodel(p, b, x):
        return functional_call(base, (p, b), (x,))

    ensemble = vmap(fmodel, in_dims=(0, 0, None))
    x = torch.randn(B, 3, 32, 32, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    def f():
        g = per_sample_grads(params, x, y)
        norms = torch.stack([v.flatten(1).norm(2, dim=1) for v in g.values()], 1).norm(2, dim=1)
        factor = (C / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for k, p in params.items():
                gk = torch.einsum("i,i...->...", factor, g[k])
                p.sub_((gk + torch.randn_like(gk) * sigma * C) * (lr / B))
            ensemble(ens_params, ens_bufs, x).softmax(-1).mean(0).argmax(-1)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e11: retrieval: spherical k-means (index_add, bincount, index_reduce), IVF probing, ColBERT MaxSim re-ranking


def b_kmeans_colbert(N=131072, D=128, K=1024, nq=64, Lq=32, ndoc=4096, Ld=64, iters=4):
    X = F.normalize(torch.randn(N, D, device=dev), dim=1).half()
    Dtok = F.normalize(torch.randn(ndoc, Ld, D, device=dev), dim=-1).half()
    Q = F.normalize(torch.randn(nq, Lq, D, device=dev), dim=-1).half()

    def f():
        with torch.no_grad():
            C = X[torch.randperm(N, device=dev)[:K]].clone()
            for _ in range(iters):
                assign = (X @ C.t()).argmax(1)
                sums = torch.zeros(K, D, device=dev).index_add_(0, assign, X.float())
                counts = torch.bincount(assign, minlength=K)
                C = F.normalize(sums / counts.clamp(min=1)[:, None].float(), dim=1).half()
            Cm = torch.zeros(K, D, device=dev).index_reduce_(0, assign, X.float(), "mean", include_self=False)
            (C.float() - F.normalize(Cm, dim=1)).norm(dim=1).max()  # convergence check
            qm = F.normalize(Q.float().mean(1), dim=1).half()
            probe = (qm @ C.t()).topk(8, dim=1).indices
            cand = (assign[None, :, None] == probe[:, None, :]).any(-1)
            scores = (qm @ X.t()).float().masked_fill(~cand, float("-inf"))
            top = scores.topk(100, dim=1).indices
            sim = torch.einsum("qid,qnjd->qnij", Q, Dtok[top % ndoc])
            maxsim = sim.amax(-1).float().sum(-1)
            return top.gather(1, maxsim.topk(10, dim=1).indices)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e12: Performer (FAVOR+ positive random features, orthogonal features redrawn by QR, causal prefix sums)


def gaussian_orthogonal(m, d, device):
    blocks = [torch.linalg.qr(torch.randn(d, d, device=device))[0].t() for _ in range(math.ceil(m / d))]
    return torch.randn(m, d, device=device).norm(dim=1)[:, None] * torch.cat(blocks)[:m]


def favor_features(x, proj, is_query, eps=1e-4):
    x = x * x.shape[-1] ** -0.25
    xd = torch.einsum("bhtd,md->bhtm", x, proj)
    diag = (x**2).sum(-1, keepdim=True) / 2
    stab = xd.amax(-1, keepdim=True) if is_query else xd.amax(dim=(-1, -2), keepdim=True)
    return proj.shape[0] ** -0.5 * (torch.exp(xd - diag - stab.detach()) + eps)


class PerformerAttention(nn.Module):
    def __init__(s, d=512, h=8, m=128):
        super().__init__()
        s.h, s.hd, s.m = h, d // h, m
        s.qkv, s.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d)
        s.register_buffer("proj", gaussian_orthogonal(m, s.hd, "cpu"))

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(x).view(B, T, 3, s.h, s.hd).permute(2, 0, 3, 1, 4)
        q, k = favor_features(q.float(), s.proj, True), favor_features(k.float(), s.proj, False)
        kv = torch.einsum("bhtm,bhtd->bhtmd", k, v.float()).cumsum(2)
        num = torch.einsum("bhtm,bhtmd->bhtd", q, kv)
        den = torch.einsum("bhtm,bhtm->bht", q, k.cumsum(2))
        return s.o((num / den[..., None]).transpose(1, 2).reshape(B, T, C))


class PerformerLM(nn.Module):
    def __init__(s, vocab=8192, d=512, h=8, layers=2, T=1024):
        super().__init__()
        s.emb, s.pos = nn.Embedding(vocab, d), nn.Parameter(torch.randn(T, d) * 0.02)
        s.attn = nn.ModuleList(PerformerAttention(d, h) for _ in range(layers))
        s.n1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        s.n2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        s.ff = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Dropout(0.1), nn.Linear(4 * d, d)) for _ in range(layers)
        )
        s.norm, s.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(s, ids):
        x = s.emb(ids) + s.pos[: ids.shape[1]]
        for a, n1, n2, ff in zip(s.attn, s.n1, s.n2, s.ff, strict=True):
            x = x + a(n1(x))
            x = x + ff(n2(x))
        return s.head(s.norm(x))


def b_performer(B=2, T=1024):
    m = PerformerLM(T=T).to(dev)
    cm = torch.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, foreach=True)
    ids = torch.randint(0, 8192, (B, T + 1), device=dev)

    def f():
        with torch.no_grad():  # feature redraw, eager
            for a in m.attn:
                a.proj.copy_(gaussian_orthogonal(a.m, a.hd, dev))
        with amp(torch.bfloat16):
            loss = F.cross_entropy(cm(ids[:, :-1]).flatten(0, 1).float(), ids[:, 1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e13: Reformer (shared-QK LSH attention: random-rotation hashing, sort by bucket, chunked attention with
# look-one-back, undo sort, combine hash rounds; axial positions; chunked FFN), hand-written Adafactor


class LSHSelfAttention(nn.Module):
    def __init__(s, d=256, h=4, n_hashes=2, chunk=64):
        super().__init__()
        s.h, s.hd, s.nh, s.cs = h, d // h, n_hashes, chunk
        s.qk, s.v, s.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False), nn.Linear(d, d)

    def forward(s, x):
        B, T, C = x.shape
        h, hd, nH, cs = s.h, s.hd, s.nh, s.cs
        nb = T // cs
        qk = s.qk(x).view(B, T, h, hd).transpose(1, 2)
        v = s.v(x).view(B, T, h, hd).transpose(1, 2)
        rot = torch.randn(hd, nH, nb // 2, device=x.device, dtype=qk.dtype)
        r = torch.einsum("bhtd,dnr->bhntr", qk, rot)
        buckets = torch.cat([r, -r], -1).argmax(-1) + (torch.arange(nH, device=x.device) * nb)[:, None]
        ticker = torch.arange(nH * T, device=x.device)
        _, sticker = (T * buckets.flatten(2) + ticker % T).sort(-1)
        undo = sticker.argsort(-1)
        st = sticker % T
        idx = st[..., None].expand(-1, -1, -1, hd)
        nc = nH * T // cs
        bq = qk.gather(2, idx).view(B, h, nc, cs, hd)
        bv = v.gather(2, idx).view(B, h, nc, cs, hd)

        def look_back(t):
            return torch.cat([t, t.roll(1, dims=2)], 3)

        bk, bv = look_back(F.normalize(bq, dim=-1)), look_back(bv)
        tq = st.view(B, h, nc, cs)
        tk = look_back(tq)
        dots = torch.einsum("bhcie,bhcje->bhcij", bq, bk) * hd**-0.5
        dots = dots.masked_fill(tq[..., :, None] < tk[..., None, :], -1e9)
        dots = dots.masked_fill(tq[..., :, None] == tk[..., None, :], -1e5)
        lse = dots.logsumexp(-1, keepdim=True)
        bo = torch.einsum("bhcij,bhcje->bhcie", (dots - lse).exp(), bv)
        o = bo.reshape(B, h, nH * T, hd).gather(2, undo[..., None].expand(-1, -1, -1, hd)).view(B, h, nH, T, hd)
        lg = lse.reshape(B, h, nH * T).gather(2, undo).view(B, h, nH, T, 1)
        o = (o * torch.softmax(lg, dim=2)).sum(2)
        return s.o(o.transpose(1, 2).reshape(B, T, C).to(x.dtype))


class ChunkedFF(nn.Module):
    def __init__(s, d, chunks=4):
        super().__init__()
        s.chunks = chunks
        s.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(s, x):
        return torch.cat([s.net(c) for c in x.chunk(s.chunks, dim=1)], 1)


class ReformerLM(nn.Module):
    def __init__(s, vocab=4096, d=256, layers=2, axial=(32, 64)):
        super().__init__()
        s.axial = axial
        s.emb = nn.Embedding(vocab, d)
        s.ax1 = nn.Parameter(torch.randn(axial[0], 1, d // 2) * 0.02)
        s.ax2 = nn.Parameter(torch.randn(1, axial[1], d // 2) * 0.02)
        s.ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        s.attn = nn.ModuleList(LSHSelfAttention(d) for _ in range(layers))
        s.ff = nn.ModuleList(ChunkedFF(d) for _ in range(layers))
        s.norm, s.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(s, ids):
        a, b = s.axial
        pos = torch.cat([s.ax1.expand(a, b, -1), s.ax2.expand(a, b, -1)], -1).reshape(a * b, -1)
        x = s.emb(ids) + pos[: ids.shape[1]]
        for ln, at, ff in zip(s.ln, s.attn, s.ff, strict=True):
            x = x + at(ln(x))
            x = x + ff(x)
        return s.head(s.norm(x))


class Adafactor:
    """Factored second moments for matrices, update clipping, relative step size (Shazeer & Stern), by hand."""

    def __init__(s, params, lr=1e-2, beta2=0.999, eps=(1e-30, 1e-3), clip=1.0):
        s.params = [p for p in params if p.requires_grad]
        s.lr, s.b2, s.eps1, s.eps2, s.clip = lr, beta2, eps[0], eps[1], clip
        s.state: dict = {}

    @torch.no_grad()
    def step(s):
        for p in s.params:
            if p.grad is None:
                continue
            g = p.grad.float()
            st = s.state.setdefault(p, {})
            g2 = g * g + s.eps1
            if p.dim() >= 2:
                if not st:
                    st["r"] = torch.zeros(p.shape[:-1], device=p.device)
                    st["c"] = torch.zeros(p.shape[:-2] + p.shape[-1:], device=p.device)
                st["r"].mul_(s.b2).add_(g2.mean(-1), alpha=1 - s.b2)
                st["c"].mul_(s.b2).add_(g2.mean(-2), alpha=1 - s.b2)
                v = (st["r"] / st["r"].mean(-1, keepdim=True))[..., None] * st["c"][..., None, :]
            else:
                v = st.setdefault("v", torch.zeros_like(g))
                v.mul_(s.b2).add_(g2, alpha=1 - s.b2)
            u = g * v.rsqrt()
            u.div_((u.pow(2).mean().sqrt() / s.clip).clamp(min=1.0))
            scale = p.float().pow(2).mean().sqrt().clamp(min=s.eps2)
            p.add_(u * scale, alpha=-s.lr)

    def zero_grad(s):
        for p in s.params:
            p.grad = None


def b_reformer(B=4, T=2048, vocab=4096):
    m = ReformerLM(vocab=vocab, axial=(32, T // 32)).to(dev)
    opt = Adafactor(m.parameters())
    ids = torch.randint(0, vocab, (B, T + 1), device=dev)

    def f():
        with amp(torch.bfloat16):
            logits = m(ids[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1).float(), ids[:, 1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e14: Longformer inference (HF-style sliding-chunk attention with as_strided chunks, diagonal padding tricks,
# invalid-location masking, global tokens)


def lf_chunk(x, w):
    bh, T, d = x.shape
    x = x.view(bh, T // (2 * w), 2 * w, d)
    size, stride = list(x.size()), list(x.stride())
    size[1], stride[1] = size[1] * 2 - 1, stride[1] // 2
    return x.as_strided(size=size, stride=stride)


def lf_pad_transpose(x, padding):
    x = F.pad(x, padding)
    return x.view(*x.size()[:-2], x.size(-1), x.size(-2))


def lf_mask_invalid(t, w):
    beg = t.new_ones(w, w + 1).tril().flip(dims=[0])[None, :, None, :]
    end = beg.flip(dims=(1, 3))
    bi = t[:, :w, :, : w + 1]
    t[:, :w, :, : w + 1] = torch.full_like(bi, -float("inf")).where(beg.bool().expand(bi.size()), bi)
    ei = t[:, -w:, :, -(w + 1) :]
    t[:, -w:, :, -(w + 1) :] = torch.full_like(ei, -float("inf")).where(end.bool().expand(ei.size()), ei)


def lf_qk(q, k, w):  # (B, T, H, d) x2 -> (B, T, H, 2w+1)
    B, T, H, d = q.shape
    chunks = T // w - 1
    qc = lf_chunk(q.transpose(1, 2).reshape(B * H, T, d), w)
    kc = lf_chunk(k.transpose(1, 2).reshape(B * H, T, d), w)
    diag = lf_pad_transpose(torch.einsum("bcxd,bcyd->bcxy", qc, kc), (0, 0, 0, 1))
    out = diag.new_zeros(B * H, chunks + 1, w, 2 * w + 1)
    out[:, :-1, :, w:] = diag[:, :, :w, : w + 1]
    out[:, -1, :, w:] = diag[:, -1, w:, : w + 1]
    out[:, 1:, :, :w] = diag[:, :, -(w + 1) : -1, w + 1 :]
    out[:, 0, 1:w, 1:w] = diag[:, 0, : w - 1, 1 - w :]
    out = out.view(B, H, T, 2 * w + 1).transpose(2, 1)
    lf_mask_invalid(out, w)
    return out


def lf_pad_diag(x):
    n, c, w, hd = x.size()
    x = F.pad(x, (0, w + 1)).view(n, c, -1)[:, :, :-w]
    return x.view(n, c, w, w + hd)[:, :, :, :-1]


def lf_pv(p, v, w):  # p (B, T, H, 2w+1), v (B, T, H, d)
    B, T, H, d = v.shape
    chunks = T // w - 1
    cp = lf_pad_diag(p.transpose(1, 2).reshape(B * H, T // w, w, 2 * w + 1))
    pv = F.pad(v.transpose(1, 2).reshape(B * H, T, d), (0, 0, w, w), value=-1)
    st = pv.stride()
    cv = pv.as_strided(size=(B * H, chunks + 1, 3 * w, d), stride=(st[0], w * st[1], st[1], st[2]))
    return torch.einsum("bcwd,bcdh->bcwh", cp, cv).view(B, H, T, d).transpose(1, 2)


class LongformerLayer(nn.Module):
    def __init__(s, d=512, h=8, w=256):
        super().__init__()
        s.h, s.hd, s.w = h, d // h, w
        s.q, s.k, s.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        s.qg, s.kg, s.vg = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        s.o, s.ln1 = nn.Linear(d, d), nn.LayerNorm(d)
        s.ff, s.ln2 = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)), nn.LayerNorm(d)

    def attn(s, x, float_mask, ng):
        B, T, C = x.shape
        H, hd, w = s.h, s.hd, s.w
        q = (s.q(x) / math.sqrt(hd)).view(B, T, H, hd)
        k, v = s.k(x).view(B, T, H, hd), s.v(x).view(B, T, H, hd)
        scores = lf_qk(q, k, w) + lf_qk(float_mask.new_ones(B, T, 1, 1), float_mask[:, :, None, None], w)
        gscores = torch.einsum("blhd,bshd->blhs", q, k[:, :ng])
        probs = torch.cat([gscores, scores], -1).float().softmax(-1).to(x.dtype)
        probs = probs.masked_fill(float_mask[:, :, None, None] < 0, 0.0)
        ctx = lf_pv(probs[..., ng:], v, w) + torch.einsum("blhs,bshd->blhd", probs[..., :ng], v[:, :ng])
        qg = s.qg(x[:, :ng]).view(B, ng, H, hd).transpose(1, 2)
        kg, vg = s.kg(x).view(B, T, H, hd).transpose(1, 2), s.vg(x).view(B, T, H, hd).transpose(1, 2)
        gctx = F.scaled_dot_product_attention(qg, kg, vg, attn_mask=float_mask[:, None, None, :])
        return s.o(torch.cat([gctx.transpose(1, 2), ctx[:, ng:]], 1).reshape(B, T, C))

    def forward(s, x, float_mask, ng):
        x = s.ln1(x + s.attn(x, float_mask, ng))
        return s.ln2(x + s.ff(x))


def b_longformer(B=2, T=4096, w=256, layers=4, vocab=30000, d=512, ng=4):
    emb, pos = nn.Embedding(vocab, d).to(dev).half(), nn.Embedding(T, d).to(dev).half()
    layers_ = nn.ModuleList(LongformerLayer(d, 8, w) for _ in range(layers)).to(dev).half().eval()
    ids = torch.randint(0, vocab, (B, T), device=dev)
    float_mask = torch.zeros(B, T, device=dev, dtype=torch.half)
    float_mask[1, T - 300 :] = -10000.0

    def f():
        with torch.no_grad():
            x = emb(ids) + pos.weight[None]
            for layer in layers_:
                x = layer(x, float_mask, ng)
            return x[:, 0]

    return f


# ---------------------------------------------------------------------------------------------------------------
# e15: PatchTST forecasting (RevIN, replicate-padded unfold patching, channel independence, BatchNorm encoder
# with residual attention scores, flatten head)


class TSTLayer(nn.Module):
    def __init__(s, d, h, ff, p=0.2):
        super().__init__()
        s.h, s.hd, s.p = h, d // h, p
        s.qkv, s.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        s.bn1, s.bn2 = nn.BatchNorm1d(d), nn.BatchNorm1d(d)
        s.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Dropout(p), nn.Linear(ff, d))

    def forward(s, x, prev):
        B, n, d = x.shape
        q, k, v = s.qkv(x).view(B, n, 3, s.h, s.hd).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) * s.hd**-0.5
        if prev is not None:
            scores = scores + prev
        a = F.dropout(scores.softmax(-1), 0.1, s.training)
        x = x + F.dropout(s.o((a @ v).transpose(1, 2).reshape(B, n, d)), s.p, s.training)
        x = s.bn1(x.transpose(1, 2)).transpose(1, 2)
        x = x + F.dropout(s.ff(x), s.p, s.training)
        return s.bn2(x.transpose(1, 2)).transpose(1, 2), scores


class PatchTST(nn.Module):
    def __init__(s, C=21, L=512, pred=96, patch=16, stride=8, d=128, h=16, ff=256, layers=3):
        super().__init__()
        s.patch, s.stride = patch, stride
        s.revin_w, s.revin_b = nn.Parameter(torch.ones(C)), nn.Parameter(torch.zeros(C))
        n = (L - patch) // stride + 2
        s.embed, s.pos = nn.Linear(patch, d), nn.Parameter(torch.randn(n, d) * 0.02)
        s.layers = nn.ModuleList(TSTLayer(d, h, ff) for _ in range(layers))
        s.head = nn.Linear(d * n, pred)

    def forward(s, x):  # (B, L, C)
        mean = x.mean(1, keepdim=True).detach()
        std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5).detach()
        x = (x - mean) / std * s.revin_w + s.revin_b
        x = F.pad(x.permute(0, 2, 1), (0, s.stride), mode="replicate").unfold(-1, s.patch, s.stride)
        B, C, n, _ = x.shape
        x = F.dropout(s.embed(x) + s.pos, 0.2, s.training).reshape(B * C, n, -1)
        prev = None
        for layer in s.layers:
            x, prev = layer(x, prev)
        y = s.head(x.reshape(B, C, -1)).permute(0, 2, 1)
        return (y - s.revin_b) / (s.revin_w + 1e-10) * std + mean


def b_patchtst(B=32, L=512, C=21, pred=96):
    m = PatchTST(C=C, L=L, pred=pred).to(dev)
    cm = torch.compile(m)
    opt = torch.optim.Adam(m.parameters(), lr=1e-4)
    series = torch.randn(B, L + pred, C, device=dev).cumsum(1)

    def f():
        loss = F.mse_loss(cm(series[:, :L]), series[:, L:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e16: Barlow Twins + VICReg self-supervised step with GPU augmentation (affine_grid/grid_sample crops, colour
# jitter, blur, solarize) and the reference hand-written LARS optimizer


def gpu_augment(x):
    B, dv = x.shape[0], x.device

    def u(lo, hi, *shape):
        return torch.empty(B, *shape, device=dv).uniform_(lo, hi)

    scale, ratio = u(0.35, 1.0).sqrt(), torch.exp(u(math.log(3 / 4), math.log(4 / 3)))
    sx, sy = scale * ratio.sqrt(), scale / ratio.sqrt()
    flip = torch.where(torch.rand(B, device=dv) < 0.5, -1.0, 1.0)
    theta = torch.zeros(B, 2, 3, device=dv)
    theta[:, 0, 0], theta[:, 1, 1] = sx * flip, sy
    theta[:, 0, 2], theta[:, 1, 2] = (1 - sx) * u(-1, 1), (1 - sy) * u(-1, 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    luma = torch.tensor([0.299, 0.587, 0.114], device=dv).view(1, 3, 1, 1)
    y = x * u(0.6, 1.4, 1, 1, 1)
    m = y.mean((1, 2, 3), keepdim=True)
    y = (y - m) * u(0.6, 1.4, 1, 1, 1) + m
    gray = (y * luma).sum(1, keepdim=True)
    y = ((y - gray) * u(0.6, 1.4, 1, 1, 1) + gray).clamp(0, 1)
    x = torch.where(torch.rand(B, 1, 1, 1, device=dv) < 0.8, y, x)
    x = torch.where(torch.rand(B, 1, 1, 1, device=dv) < 0.2, (x * luma).sum(1, keepdim=True).expand_as(x), x)
    k = torch.exp(-(torch.arange(-4, 5, device=dv).float() ** 2) / 2.0)
    k = k / k.sum()
    blur = F.conv2d(F.pad(x, (4, 4, 0, 0), mode="reflect"), k.view(1, 1, 1, 9).repeat(3, 1, 1, 1), groups=3)
    blur = F.conv2d(F.pad(blur, (0, 0, 4, 4), mode="reflect"), k.view(1, 1, 9, 1).repeat(3, 1, 1, 1), groups=3)
    x = torch.where(torch.rand(B, 1, 1, 1, device=dv) < 0.5, blur, x)
    x = torch.where((torch.rand(B, 1, 1, 1, device=dv) < 0.2) & (x >= 0.5), 1 - x, x)
    mean = torch.tensor([0.485, 0.456, 0.406], device=dv).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=dv).view(1, 3, 1, 1)
    return ((x - mean) / std).contiguous(memory_format=torch.channels_last)


class LARS(torch.optim.Optimizer):
    """LARS as the Barlow Twins reference has it: no weight decay or adaptation for biases and norm weights."""

    def __init__(s, params, lr, weight_decay=0, momentum=0.9, eta=0.001):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, eta=eta))

    @torch.no_grad()
    def step(s):
        for g in s.param_groups:
            for p in g["params"]:
                dp = p.grad
                if dp is None:
                    continue
                if p.ndim != 1:
                    dp = dp.add(p, alpha=g["weight_decay"])
                    param_norm, update_norm = torch.norm(p), torch.norm(dp)
                    one = torch.ones_like(param_norm)
                    q = torch.where(
                        param_norm > 0.0, torch.where(update_norm > 0, (g["eta"] * param_norm / update_norm), one), one
                    )
                    dp = dp.mul(q)
                state = s.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(g["momentum"]).add_(dp)
                p.add_(mu, alpha=-g["lr"])


def b_barlow_vicreg(B=128, img=64, D=2048):
    def cbr(ci, co, s=1):
        return [nn.Conv2d(ci, co, 3, s, 1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True)]

    backbone = nn.Sequential(
        *cbr(3, 64), *cbr(64, 128, 2), *cbr(128, 128), *cbr(128, 256, 2), *cbr(256, 256), *cbr(256, 512, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )  # fmt: skip
    projector = nn.Sequential(
        nn.Linear(512, D, bias=False), nn.BatchNorm1d(D), nn.ReLU(inplace=True),
        nn.Linear(D, D, bias=False), nn.BatchNorm1d(D), nn.ReLU(inplace=True), nn.Linear(D, D, bias=False),
    )  # fmt: skip
    model = nn.Sequential(backbone, projector).to(dev, memory_format=torch.channels_last)
    bn = nn.BatchNorm1d(D, affine=False).to(dev)
    opt = LARS(model.parameters(), lr=0.2, weight_decay=1.5e-6)
    imgs = torch.rand(B, 3, img, img, device=dev)

    def vicreg(x, y):
        repr_loss = F.mse_loss(x, y)
        x, y = x - x.mean(0), y - y.mean(0)
        std_x, std_y = torch.sqrt(x.var(0) + 1e-4), torch.sqrt(y.var(0) + 1e-4)
        std_loss = F.relu(1 - std_x).mean() / 2 + F.relu(1 - std_y).mean() / 2
        cov_x, cov_y = (x.T @ x) / (B - 1), (y.T @ y) / (B - 1)
        cov_loss = off_diagonal(cov_x).pow_(2).sum() / D + off_diagonal(cov_y).pow_(2).sum() / D
        return 25 * repr_loss + 25 * std_loss + cov_loss

    def f():
        with torch.no_grad():
            y1, y2 = gpu_augment(imgs), gpu_augment(imgs)
        with amp(torch.bfloat16):
            z1, z2 = model(y1).float(), model(y2).float()
        c = bn(z1).T @ bn(z2) / B
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        loss = on_diag + 5e-3 * off_diag + 0.04 * vicreg(z1, z2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e17: DCN-v2 recommender (multi-hot EmbeddingBag sum/mean/max with per-sample weights, sparse gradients,
# cross layers x0 * (W x + b) + x beside a deep tower), row-wise Adagrad on the sparse tables, Adagrad on the rest


def b_dcnv2(B=4096, rows=200_000, dim=64):
    class DCNv2(nn.Module):
        def __init__(s):
            super().__init__()
            s.sum_tables = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum", sparse=True) for _ in range(5))
            s.mean_table = nn.EmbeddingBag(rows, dim, mode="mean", sparse=True)
            s.max_tables = nn.ModuleList(nn.EmbeddingBag(rows // 4, dim, mode="max") for _ in range(2))
            s.bottom = nn.Sequential(nn.Linear(13, 256), nn.ReLU(), nn.Linear(256, dim), nn.ReLU())
            D = dim * 9
            s.cross = nn.ModuleList(nn.Linear(D, D) for _ in range(3))
            s.deep = nn.Sequential(nn.Linear(D, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU())
            s.top = nn.Linear(D + 1024, 1)

        def forward(s, dense, bags):
            embs = [s.bottom(torch.log1p(dense))]
            tables = list(s.sum_tables) + [s.mean_table] + list(s.max_tables)
            for i, (t, (idx, offs)) in enumerate(zip(tables, bags, strict=True)):
                psw = bags_w[i] if i < 2 else None
                embs.append(t(idx, offs, per_sample_weights=psw))
            x0 = torch.cat(embs, 1)
            x = x0
            for lin in s.cross:
                x = x0 * lin(x) + x
            return s.top(torch.cat([x, s.deep(x0)], 1)).squeeze(1)

    m = DCNv2().to(dev)
    sparse = [t.weight for t in m.sum_tables] + [m.mean_table.weight]
    sparse_ids = {id(p) for p in sparse}
    dense_opt = torch.optim.Adagrad([p for p in m.parameters() if id(p) not in sparse_ids], lr=0.01, foreach=True)
    row_state = [torch.zeros(p.shape[0], device=dev) for p in sparse]
    bags, bags_w = [], []
    for i in range(8):
        n_rows = rows if i < 6 else rows // 4
        lengths = torch.randint(1, 6, (B,), device=dev)
        offs = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]])
        idx = (torch.rand(int(lengths.sum()), device=dev) ** 3 * n_rows).long()  # skewed: repeated hot rows
        bags.append((idx, offs))
        if i < 2:
            bags_w.append(torch.rand(idx.numel(), device=dev))
    dense = torch.rand(B, 13, device=dev) * 100
    label = torch.randint(0, 2, (B,), device=dev).float()

    def f():
        loss = F.binary_cross_entropy_with_logits(m(dense, bags), label)
        loss.backward()
        dense_opt.step()
        dense_opt.zero_grad(set_to_none=True)
        with torch.no_grad():  # row-wise Adagrad (one accumulator per row), as FBGEMM's TBE does it
            for w, st in zip(sparse, row_state, strict=True):
                g = w.grad.coalesce()
                idx, val = g.indices()[0], g.values()
                st.index_add_(0, idx, val.pow(2).mean(1))
                w.index_add_(0, idx, val * (-0.01 / (st[idx].sqrt() + 1e-8))[:, None])
                w.grad = None

    return f


# ---------------------------------------------------------------------------------------------------------------
# e18: ESRGAN RRDB super-resolution, torch.compile'd fp16 channels_last inference


class RDB(nn.Module):
    def __init__(s, nf=64, gc=32):
        super().__init__()
        s.convs = nn.ModuleList(nn.Conv2d(nf + i * gc, gc if i < 4 else nf, 3, 1, 1) for i in range(5))

    def forward(s, x):
        feats = [x]
        for c in s.convs[:4]:
            feats.append(F.leaky_relu(c(torch.cat(feats, 1)), 0.2))
        return s.convs[4](torch.cat(feats, 1)) * 0.2 + x


class RRDB(nn.Module):
    def __init__(s, nf=64):
        super().__init__()
        s.rdbs = nn.Sequential(RDB(nf), RDB(nf), RDB(nf))

    def forward(s, x):
        return s.rdbs(x) * 0.2 + x


class RRDBNet(nn.Module):
    def __init__(s, nf=64, nb=6):
        super().__init__()
        s.first = nn.Conv2d(3, nf, 3, 1, 1)
        s.body, s.body_conv = nn.Sequential(*[RRDB(nf) for _ in range(nb)]), nn.Conv2d(nf, nf, 3, 1, 1)
        s.up1, s.up2 = nn.Conv2d(nf, nf, 3, 1, 1), nn.Conv2d(nf, nf, 3, 1, 1)
        s.hr, s.last = nn.Conv2d(nf, nf, 3, 1, 1), nn.Conv2d(nf, 3, 3, 1, 1)

    def forward(s, x):
        feat = s.first(x)
        feat = feat + s.body_conv(s.body(feat))
        feat = F.leaky_relu(s.up1(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        feat = F.leaky_relu(s.up2(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        return s.last(F.leaky_relu(s.hr(feat), 0.2)).clamp(0, 1)


def b_esrgan(B=2, size=128, dtype=torch.float16):
    m = RRDBNet().to(dev, dtype, memory_format=torch.channels_last).eval()
    cm = torch.compile(m)
    x = torch.rand(B, 3, size, size, device=dev, dtype=dtype).contiguous(memory_format=torch.channels_last)

    def f():
        with torch.no_grad():
            return cm(x)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e19: word2vec skip-gram with negative sampling (frequent-word subsampling, unigram^0.75 noise by multinomial,
# sparse embeddings, SparseAdam)


def b_word2vec(V=200_000, D=300, B=8192, K=10, corpus_len=1_000_000):
    counts = 1e6 / torch.arange(1, V + 1, device=dev).float()  # Zipf
    freq = counts / counts.sum()
    noise = counts.pow(0.75)
    noise = noise / noise.sum()
    p_keep = ((freq / 1e-4).sqrt() + 1) * 1e-4 / freq
    corpus = torch.multinomial(freq, corpus_len, replacement=True)
    emb_in, emb_out = nn.Embedding(V, D, sparse=True).to(dev), nn.Embedding(V, D, sparse=True).to(dev)
    nn.init.uniform_(emb_in.weight, -0.5 / D, 0.5 / D)
    nn.init.zeros_(emb_out.weight)
    opt = torch.optim.SparseAdam(list(emb_in.parameters()) + list(emb_out.parameters()), lr=1e-3)

    def f():
        pos = torch.randint(5, corpus_len - 5, (B,), device=dev)
        off = torch.randint(1, 6, (B,), device=dev) * torch.where(torch.rand(B, device=dev) < 0.5, -1, 1)
        center, context = corpus[pos], corpus[pos + off]
        keep = (torch.rand(B, device=dev) < p_keep[center]).float()
        neg = torch.multinomial(noise, B * K, replacement=True).view(B, K)
        u = emb_in(center)
        pos_score = F.logsigmoid((u * emb_out(context)).sum(-1))
        neg_score = F.logsigmoid(-torch.bmm(emb_out(neg), u[:, :, None]).squeeze(-1)).sum(-1)
        loss = -((pos_score + neg_score) * keep).sum() / keep.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e20: PointNet++ segmentation (farthest point sampling loop, ball query by sort, grouping gathers, shared MLPs,
# 3-NN inverse-distance feature propagation)


def square_distance(a, b):
    return -2 * a @ b.transpose(1, 2) + (a**2).sum(-1)[..., None] + (b**2).sum(-1)[:, None]


def index_points(pts, idx):
    B = pts.shape[0]
    bidx = torch.arange(B, device=pts.device).view((B,) + (1,) * (idx.dim() - 1)).expand_as(idx)
    return pts[bidx, idx]


def farthest_point_sample(xyz, npoint):
    B, N, _ = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long, device=xyz.device)
    distance = torch.full((B, N), 1e10, device=xyz.device)
    farthest = torch.randint(0, N, (B,), device=xyz.device)
    bidx = torch.arange(B, device=xyz.device)
    for i in range(npoint):
        centroids[:, i] = farthest
        dist = ((xyz - xyz[bidx, farthest][:, None]) ** 2).sum(-1)
        distance = torch.min(distance, dist)
        farthest = distance.max(-1)[1]
    return centroids


def ball_query(radius, ns, xyz, new_xyz):
    B, N, _ = xyz.shape
    S = new_xyz.shape[1]
    gi = torch.arange(N, device=xyz.device).view(1, 1, N).repeat(B, S, 1)
    gi[square_distance(new_xyz, xyz) > radius**2] = N
    gi = gi.sort(dim=-1)[0][:, :, :ns]
    first = gi[:, :, :1].expand(-1, -1, ns)
    mask = gi == N
    gi[mask] = first[mask]
    return gi


class SetAbstraction(nn.Module):
    def __init__(s, npoint, radius, ns, cin, mlp, group_all=False):
        super().__init__()
        s.npoint, s.radius, s.ns, s.group_all = npoint, radius, ns, group_all
        layers, c = [], cin + 3
        for co in mlp:
            layers += [nn.Conv2d(c, co, 1), nn.BatchNorm2d(co), nn.ReLU()]
            c = co
        s.mlp = nn.Sequential(*layers)

    def forward(s, xyz, pts):
        if s.group_all:
            new_xyz = xyz.new_zeros(xyz.shape[0], 1, 3)
            g = torch.cat([xyz, pts], -1)[:, None]
        else:
            new_xyz = index_points(xyz, farthest_point_sample(xyz, s.npoint))
            gi = ball_query(s.radius, s.ns, xyz, new_xyz)
            g = torch.cat([index_points(xyz, gi) - new_xyz[:, :, None], index_points(pts, gi)], -1)
        g = s.mlp(g.permute(0, 3, 2, 1))  # B, C, ns, S
        return new_xyz, g.max(2)[0].transpose(1, 2)


class FeaturePropagation(nn.Module):
    def __init__(s, cin, mlp):
        super().__init__()
        layers, c = [], cin
        for co in mlp:
            layers += [nn.Conv1d(c, co, 1), nn.BatchNorm1d(co), nn.ReLU()]
            c = co
        s.mlp = nn.Sequential(*layers)

    def forward(s, xyz1, xyz2, p1, p2):
        if xyz2.shape[1] == 1:
            interp = p2.expand(-1, xyz1.shape[1], -1)
        else:
            d, idx = square_distance(xyz1, xyz2).sort(-1)
            w = 1.0 / (d[:, :, :3] + 1e-8)
            interp = (index_points(p2, idx[:, :, :3]) * (w / w.sum(-1, keepdim=True))[..., None]).sum(2)
        return s.mlp(torch.cat([p1, interp], -1).transpose(1, 2)).transpose(1, 2)


class PointNet2Seg(nn.Module):
    def __init__(s, ncls=13, np1=512, np2=128):
        super().__init__()
        s.sa1 = SetAbstraction(np1, 0.2, 32, 3, [64, 64, 128])
        s.sa2 = SetAbstraction(np2, 0.4, 64, 128, [128, 128, 256])
        s.sa3 = SetAbstraction(None, None, None, 256, [256, 512, 1024], group_all=True)
        s.fp3 = FeaturePropagation(1024 + 256, [256, 256])
        s.fp2 = FeaturePropagation(256 + 128, [256, 128])
        s.fp1 = FeaturePropagation(128 + 3, [128, 128, 128])
        s.head = nn.Sequential(nn.Conv1d(128, 128, 1), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.5))
        s.cls = nn.Conv1d(128, ncls, 1)

    def forward(s, xyz, rgb):
        x1, p1 = s.sa1(xyz, rgb)
        x2, p2 = s.sa2(x1, p1)
        x3, p3 = s.sa3(x2, p2)
        p2 = s.fp3(x2, x3, p2, p3)
        p1 = s.fp2(x1, x2, p1, p2)
        p0 = s.fp1(xyz, x1, rgb, p1)
        return s.cls(s.head(p0.transpose(1, 2)))


def b_pointnet2(B=8, N=2048, np1=512, np2=128):
    m = PointNet2Seg(np1=np1, np2=np2).to(dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, weight_decay=1e-4)
    xyz = torch.rand(B, N, 3, device=dev)
    rgb = torch.rand(B, N, 3, device=dev)
    y = torch.randint(0, 13, (B, N), device=dev)

    def f():
        loss = F.cross_entropy(m(xyz, rgb), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e21: W8A8 SmoothQuant-style decode (per-token dynamic int8 activations, per-channel int8 weights, _int_mm),
# static KV cache written with index_copy_, torch.compile'd decode step


def quant_per_token(x):
    s = x.abs().amax(-1, keepdim=True).float().clamp(min=1e-5) / 127
    return (x.float() / s).round().clamp(-128, 127).to(torch.int8), s


class W8A8Linear(nn.Module):
    def __init__(s, i, o):
        super().__init__()
        w = torch.randn(o, i) * i**-0.5
        ws = w.abs().amax(1) / 127
        s.register_buffer("wq", (w / ws[:, None]).round().clamp(-128, 127).to(torch.int8).t().contiguous())
        s.register_buffer("ws", ws)
        s.register_buffer("bias", torch.zeros(o, dtype=torch.half))

    def forward(s, x):
        shape = x.shape
        q, sx = quant_per_token(x.reshape(-1, shape[-1]))
        y = (torch._int_mm(q, s.wq).float() * sx * s.ws).half() + s.bias
        return y.view(*shape[:-1], -1)


class W8A8Layer(nn.Module):
    def __init__(s, d, h, ffn, B, maxT):
        super().__init__()
        s.h, s.hd, s.ffn = h, d // h, ffn
        s.ln1, s.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)  # SmoothQuant folds its smoothing scales into these
        s.qkv, s.o = W8A8Linear(d, 3 * d), W8A8Linear(d, d)
        s.gate_up, s.down = W8A8Linear(d, 2 * ffn), W8A8Linear(ffn, d)
        s.register_buffer("kc", torch.zeros(B, h, maxT, d // h, dtype=torch.half))
        s.register_buffer("vc", torch.zeros(B, h, maxT, d // h, dtype=torch.half))

    def forward(s, x, pos, mask):
        B = x.shape[0]
        q, k, v = s.qkv(s.ln1(x)).view(B, 1, 3, s.h, s.hd).permute(2, 0, 3, 1, 4)
        s.kc.index_copy_(2, pos, k)
        s.vc.index_copy_(2, pos, v)
        a = F.scaled_dot_product_attention(q, s.kc, s.vc, attn_mask=mask)
        x = x + s.o(a.transpose(1, 2).reshape(B, 1, -1))
        g, u = s.gate_up(s.ln2(x)).split(s.ffn, -1)
        return x + s.down(F.silu(g) * u)


class W8A8Decoder(nn.Module):
    def __init__(s, vocab=32000, d=2048, h=16, ffn=5632, layers=2, B=32, maxT=512):
        super().__init__()
        s.emb = nn.Embedding(vocab, d)
        s.layers = nn.ModuleList(W8A8Layer(d, h, ffn, B, maxT) for _ in range(layers))
        s.norm, s.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        s.register_buffer("ar", torch.arange(maxT))

    def forward(s, tok, pos):
        x = s.emb(tok)
        mask = (s.ar <= pos)[None, None, None, :]
        for layer in s.layers:
            x = layer(x, pos, mask)
        return s.head(s.norm(x)).argmax(-1)


def b_w8a8_decode(B=32, steps=16, d=2048, ffn=5632, vocab=32000):
    import torch._inductor.config as ic

    if hasattr(ic, "force_fuse_int_mm_with_mul"):
        ic.force_fuse_int_mm_with_mul = True  # let Inductor fuse the dequant scale into an int8 mm template
    m = W8A8Decoder(vocab=vocab, d=d, ffn=ffn, B=B).to(dev).half().eval()
    step = torch.compile(m)
    tok0 = torch.randint(0, vocab, (B, 1), device=dev)

    def f():
        with torch.no_grad():
            tok = tok0
            for i in range(steps):
                tok = step(tok, torch.tensor([i], device=dev))
            return tok

    return f


# ---------------------------------------------------------------------------------------------------------------
# e22: multi-LoRA serving decode (a different adapter per request gathered and applied with bmm, Punica-style),
# static KV cache, top-p sampling


class LoraLayer(nn.Module):
    def __init__(s, d, h, n_ad, r, B, maxT):
        super().__init__()
        s.h, s.hd, s.d, s.scaling = h, d // h, d, 2.0
        s.ln1, s.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        s.qkv, s.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        s.up, s.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        s.A = nn.Parameter(torch.randn(n_ad, 2, d, r) * 0.01)  # adapters on q and v
        s.Bm = nn.Parameter(torch.randn(n_ad, 2, r, d) * 0.01)
        s.register_buffer("kc", torch.zeros(B, h, maxT, d // h))
        s.register_buffer("vc", torch.zeros(B, h, maxT, d // h))

    def forward(s, x, ad, pos):
        B, T, d = x.shape
        y = s.ln1(x)
        A, Bm = s.A[ad], s.Bm[ad]
        q, k, v = s.qkv(y).split(d, -1)
        q = q + torch.bmm(torch.bmm(y, A[:, 0]), Bm[:, 0]) * s.scaling
        v = v + torch.bmm(torch.bmm(y, A[:, 1]), Bm[:, 1]) * s.scaling
        q, k, v = (t.view(B, T, s.h, s.hd).transpose(1, 2) for t in (q, k, v))
        s.kc[:, :, pos : pos + T] = k
        s.vc[:, :, pos : pos + T] = v
        a = F.scaled_dot_product_attention(q, s.kc[:, :, : pos + T], s.vc[:, :, : pos + T], is_causal=T > 1)
        x = x + s.o(a.transpose(1, 2).reshape(B, T, d))
        return x + s.down(F.gelu(s.up(s.ln2(x)), approximate="tanh"))


class LoraGPT(nn.Module):
    def __init__(s, vocab=32000, d=1024, h=16, layers=4, n_ad=8, r=16, B=16, maxT=256):
        super().__init__()
        s.emb, s.pos = nn.Embedding(vocab, d), nn.Embedding(maxT, d)
        s.layers = nn.ModuleList(LoraLayer(d, h, n_ad, r, B, maxT) for _ in range(layers))
        s.norm, s.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(s, ids, ad, pos):
        x = s.emb(ids) + s.pos(torch.arange(pos, pos + ids.shape[1], device=ids.device))
        for layer in s.layers:
            x = layer(x, ad, pos)
        return s.head(s.norm(x[:, -1]))


def sample_top_p(logits, p=0.9, temp=0.8):
    probs = torch.softmax(logits.float() / temp, -1)
    sp, si = probs.sort(-1, descending=True)
    sp = sp.masked_fill(sp.cumsum(-1) - sp > p, 0.0)
    return si.gather(-1, torch.multinomial(sp / sp.sum(-1, keepdim=True), 1))


def b_multi_lora(B=16, prompt=128, new=32, vocab=32000):
    m = LoraGPT(vocab=vocab, B=B, maxT=prompt + new).to(dev).half().eval()
    ids = torch.randint(0, vocab, (B, prompt), device=dev)
    ad = torch.randint(0, 8, (B,), device=dev)

    def f():
        with torch.no_grad():
            tok = sample_top_p(m(ids, ad, 0))
            for i in range(new - 1):
                tok = sample_top_p(m(tok, ad, prompt + i))
            return tok

    return f


# ---------------------------------------------------------------------------------------------------------------
# e23: FP8 training by hand: E4M3 activations and weights with delayed scaling (amax history), E5M2 gradients,
# three torch._scaled_mm per linear (fprop, dgrad E5M2 x E4M3, wgrad)

E4M3_MAX, E5M2_MAX = 448.0, 57344.0


class _Fp8Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, sx, sw):
        x8 = (x.float() * sx).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
        w8 = (w.float() * sw).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
        ctx.save_for_backward(x8, w8, sx, sw)
        ctx.dtypes = (x.dtype, w.dtype)
        return torch._scaled_mm(x8, w8.t(), scale_a=sx.reciprocal(), scale_b=sw.reciprocal(), out_dtype=torch.bfloat16)

    @staticmethod
    def backward(ctx, go):
        x8, w8, sx, sw = ctx.saved_tensors
        go = go.contiguous()
        sg = E5M2_MAX / go.abs().amax().float().clamp(min=1e-12)
        g8 = (go.float() * sg).clamp(-E5M2_MAX, E5M2_MAX).to(torch.float8_e5m2)
        dx = torch._scaled_mm(
            g8, w8.t().contiguous().t(), scale_a=sg.reciprocal(), scale_b=sw.reciprocal(), out_dtype=torch.bfloat16
        )
        dw = torch._scaled_mm(
            g8.t().contiguous(), x8.t().contiguous().t(), scale_a=sg.reciprocal(), scale_b=sx.reciprocal(),
            out_dtype=torch.bfloat16,
        )  # fmt: skip
        return dx.to(ctx.dtypes[0]), dw.to(ctx.dtypes[1]), None, None


class Fp8Linear(nn.Module):
    def __init__(s, i, o, hist=16):
        super().__init__()
        s.weight = nn.Parameter(torch.randn(o, i) * i**-0.5)
        s.register_buffer("amax_x", torch.zeros(hist))
        s.register_buffer("amax_w", torch.zeros(hist))

    def forward(s, x):
        x2 = x.reshape(-1, x.shape[-1])
        with torch.no_grad():  # delayed scaling: the scale comes from the amax history, as Transformer Engine does
            for buf, t in ((s.amax_x, x2), (s.amax_w, s.weight)):
                buf.copy_(torch.roll(buf, 1))
                buf[0] = t.abs().amax().float()
            sx = E4M3_MAX / s.amax_x.max().clamp(min=1e-12)
            sw = E4M3_MAX / s.amax_w.max().clamp(min=1e-12)
        return _Fp8Matmul.apply(x2, s.weight, sx, sw).view(*x.shape[:-1], -1)


def b_fp8_train(B=8, T=512, d=1024, layers=4):
    if DT == "cuda" and torch.cuda.get_device_capability() < (8, 9):
        raise RuntimeError("FP8 matmul needs sm_89 or newer")

    class Block(nn.Module):
        def __init__(s):
            super().__init__()
            s.ln, s.up, s.down = nn.LayerNorm(d), Fp8Linear(d, 4 * d), Fp8Linear(4 * d, d)

        def forward(s, x):
            return x + s.down(F.gelu(s.up(s.ln(x))))

    m = nn.Sequential(*[Block() for _ in range(layers)]).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    x = torch.randn(B, T, d, device=dev)
    tgt = torch.randn(B, T, d, device=dev)

    def f():
        with amp(torch.bfloat16):
            y = m(x)
        F.mse_loss(y.float(), tgt).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return f


# ---------------------------------------------------------------------------------------------------------------
# e24: fast neural style transfer (Johnson et al.: reflection padding, InstanceNorm, nearest upsampling) with a
# frozen VGG-style loss network, Gram-matrix style loss and total variation, bf16 autocast


class ConvLayer(nn.Sequential):
    def __init__(s, ci, co, k, stride=1):
        super().__init__(nn.ReflectionPad2d(k // 2), nn.Conv2d(ci, co, k, stride))


class StyleResBlock(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.c1, s.n1 = ConvLayer(c, c, 3), nn.InstanceNorm2d(c, affine=True)
        s.c2, s.n2 = ConvLayer(c, c, 3), nn.InstanceNorm2d(c, affine=True)

    def forward(s, x):
        return x + s.n2(s.c2(F.relu(s.n1(s.c1(x)))))


class UpConv(nn.Module):
    def __init__(s, ci, co):
        super().__init__()
        s.conv = ConvLayer(ci, co, 3)

    def forward(s, x):
        return s.conv(F.interpolate(x, scale_factor=2, mode="nearest"))


def transformer_net():
    def cin(ci, co, k, stride=1):
        return [ConvLayer(ci, co, k, stride), nn.InstanceNorm2d(co, affine=True), nn.ReLU()]

    return nn.Sequential(
        *cin(3, 32, 9), *cin(32, 64, 3, 2), *cin(64, 128, 3, 2), *[StyleResBlock(128) for _ in range(5)],
        UpConv(128, 64), nn.InstanceNorm2d(64, affine=True), nn.ReLU(),
        UpConv(64, 32), nn.InstanceNorm2d(32, affine=True), nn.ReLU(), ConvLayer(32, 3, 9),
    )  # fmt: skip


class VGGFeatures(nn.Module):
    def __init__(s):
        super().__init__()

        def cr(ci, co):
            return [nn.Conv2d(ci, co, 3, padding=1), nn.ReLU()]

        s.s1 = nn.Sequential(*cr(3, 64), *cr(64, 64))
        s.s2 = nn.Sequential(nn.MaxPool2d(2), *cr(64, 128), *cr(128, 128))
        s.s3 = nn.Sequential(nn.MaxPool2d(2), *cr(128, 256), *cr(256, 256), *cr(256, 256))

    def forward(s, x):
        f1 = s.s1(x)
        f2 = s.s2(f1)
        return f1, f2, s.s3(f2)


def gram(f):
    b, c, h, w = f.shape
    f = f.reshape(b, c, h * w)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


def b_style_transfer(B=4, size=256, dtype=torch.bfloat16):
    net = transformer_net().to(dev)
    vgg = VGGFeatures().to(dev).eval().requires_grad_(False)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1)
    content = torch.rand(B, 3, size, size, device=dev) * 255
    with torch.no_grad(), amp(dtype):
        style_grams = [gram(f.float()) for f in vgg((torch.rand(1, 3, size, size, device=dev) - mean) / std)]

    def f():
        with amp(dtype):
            y = net(content)
            fy = vgg((y / 255 - mean) / std)
            with torch.no_grad():
                fc = vgg((content / 255 - mean) / std)
        c_loss = 1e5 * F.mse_loss(fy[1].float(), fc[1].float())
        grams = zip(fy, style_grams, strict=True)
        s_loss = 1e10 * sum(F.mse_loss(gram(a.float()), g.expand(B, -1, -1)) for a, g in grams)
        yf = y.float()
        tv = (yf[:, :, 1:] - yf[:, :, :-1]).abs().mean() + (yf[:, :, :, 1:] - yf[:, :, :, :-1]).abs().mean()
        opt.zero_grad(set_to_none=True)
        (c_loss + s_loss + 1e-6 * tv).backward()
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e25: GRU encoder-decoder NMT (packed bidirectional encoder, Bahdanau additive attention, teacher forcing),
# label smoothing, gradient clipping, SGD with Nesterov momentum


class Seq2Seq(nn.Module):
    def __init__(s, V=8000, E=256, H=512):
        super().__init__()
        s.src_emb, s.tgt_emb = nn.Embedding(V, E, padding_idx=0), nn.Embedding(V, E, padding_idx=0)
        s.enc = nn.GRU(E, H, num_layers=2, bidirectional=True, batch_first=True, dropout=0.2)
        s.bridge = nn.Linear(2 * H, H)
        s.W, s.U, s.v = nn.Linear(H, H, bias=False), nn.Linear(2 * H, H, bias=False), nn.Linear(H, 1, bias=False)
        s.dec = nn.GRU(E + 2 * H, H, batch_first=True)
        s.out = nn.Linear(H + 2 * H + E, V)

    def forward(s, src, src_len_cpu, tgt_in):
        packed = nn.utils.rnn.pack_padded_sequence(s.src_emb(src), src_len_cpu, batch_first=True, enforce_sorted=False)
        mem, hN = s.enc(packed)
        mem = nn.utils.rnn.pad_packed_sequence(mem, batch_first=True, total_length=src.shape[1])[0]
        mask = src == 0
        h = torch.tanh(s.bridge(torch.cat([hN[-2], hN[-1]], -1)))[None]
        Um, y = s.U(mem), s.tgt_emb(tgt_in)
        logits = []
        for t in range(tgt_in.shape[1]):
            e = s.v(torch.tanh(s.W(h[-1])[:, None] + Um)).squeeze(-1).masked_fill(mask, float("-inf"))
            ctx = torch.bmm(e.softmax(-1)[:, None], mem)
            o, h = s.dec(torch.cat([y[:, t : t + 1], ctx], -1), h)
            logits.append(s.out(torch.cat([o, ctx, y[:, t : t + 1]], -1)))
        return torch.cat(logits, 1)


def b_gru_seq2seq(B=64, S=40, T=30, V=8000):
    m = Seq2Seq(V).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    src_len = torch.randint(10, S + 1, (B,))
    src_len[0] = S
    src = torch.randint(1, V, (B, S))
    src[torch.arange(S)[None] >= src_len[:, None]] = 0
    src = src.to(dev)
    tgt = torch.randint(1, V, (B, T + 1), device=dev)
    tgt[B // 2 :, T - 5 :] = 0

    def f():
        logits = m(src, src_len, tgt[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=0, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e26: S4D sequence classifier (complex diagonal SSM kernel by Vandermonde einsum, FFT convolution, GLU)


class S4DKernel(nn.Module):
    def __init__(s, H, N=64, dt_min=1e-3, dt_max=1e-1):
        super().__init__()
        s.log_dt = nn.Parameter(torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
        s.C = nn.Parameter(torch.view_as_real(torch.randn(H, N // 2, dtype=torch.cfloat)))
        s.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(H, N // 2)))
        s.A_imag = nn.Parameter(math.pi * torch.arange(N // 2).float().repeat(H, 1))

    def forward(s, L):
        dt = torch.exp(s.log_dt)
        A = -torch.exp(s.log_A_real) + 1j * s.A_imag
        dtA = A * dt[:, None]
        K = dtA[:, :, None] * torch.arange(L, device=A.device)
        C = torch.view_as_complex(s.C) * (torch.exp(dtA) - 1.0) / A
        return 2 * torch.einsum("hn,hnl->hl", C, torch.exp(K)).real


class S4DLayer(nn.Module):
    def __init__(s, H, N=64, p=0.1):
        super().__init__()
        s.D, s.kernel, s.p = nn.Parameter(torch.randn(H)), S4DKernel(H, N), p
        s.out = nn.Sequential(nn.Conv1d(H, 2 * H, 1), nn.GLU(dim=-2))

    def forward(s, u):  # (B, H, L)
        L = u.shape[-1]
        k_f = torch.fft.rfft(s.kernel(L), n=2 * L)
        y = torch.fft.irfft(torch.fft.rfft(u, n=2 * L) * k_f, n=2 * L)[..., :L] + u * s.D[:, None]
        return s.out(F.dropout(F.gelu(y), s.p, s.training))


class S4DModel(nn.Module):
    def __init__(s, d_in=3, H=256, layers=4, ncls=10):
        super().__init__()
        s.enc = nn.Linear(d_in, H)
        s.layers = nn.ModuleList(S4DLayer(H) for _ in range(layers))
        s.norms = nn.ModuleList(nn.LayerNorm(H) for _ in range(layers))
        s.dec = nn.Linear(H, ncls)

    def forward(s, x):  # (B, L, d_in)
        x = s.enc(x)
        for layer, norm in zip(s.layers, s.norms, strict=True):
            x = x + F.dropout(layer(norm(x).transpose(1, 2)).transpose(1, 2), 0.1, s.training)
        return s.dec(x.mean(1))


def b_s4d(B=32, L=1024):
    m = S4DModel().to(dev)
    ssm = [p for n, p in m.named_parameters() if any(k in n for k in ("log_dt", "log_A_real", "A_imag", ".C"))]
    ssm_ids = {id(p) for p in ssm}
    opt = torch.optim.AdamW(
        [
            {"params": ssm, "lr": 1e-3, "weight_decay": 0.0},
            {"params": [p for p in m.parameters() if id(p) not in ssm_ids]},
        ],
        lr=1e-2,
        weight_decay=0.05,
    )
    x = torch.randn(B, L, 3, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    def f():
        loss = F.cross_entropy(m(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return f


# ---------------------------------------------------------------------------------------------------------------
# e27: SiamRPN++-style tracking step (shared backbone on template and search crops, depthwise cross-correlation
# as a grouped conv, RPN heads, anchor decoding, scale penalty and cosine window), fp16 inference


def xcorr_depthwise(x, k):
    B, C = k.shape[:2]
    x = x.reshape(1, B * C, x.shape[2], x.shape[3])
    out = F.conv2d(x, k.reshape(B * C, 1, k.shape[2], k.shape[3]), groups=B * C)
    return out.view(B, C, out.shape[2], out.shape[3])


class DWRPNHead(nn.Module):
    def __init__(s, c=256, out=10):
        super().__init__()
        s.ck = nn.Sequential(nn.Conv2d(c, c, 3, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        s.cs = nn.Sequential(nn.Conv2d(c, c, 3, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        s.head = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, out, 1))

    def forward(s, z, x):
        return s.head(xcorr_depthwise(s.cs(x), s.ck(z)))


def b_siamrpn(B=32, na=5):
    def cbr(ci, co, k, st=1):
        return [nn.Conv2d(ci, co, k, st), nn.BatchNorm2d(co), nn.ReLU()]

    backbone = nn.Sequential(
        *cbr(3, 96, 11, 2), nn.MaxPool2d(3, 2), *cbr(96, 256, 5), nn.MaxPool2d(3, 2),
        *cbr(256, 384, 3), *cbr(384, 384, 3), nn.Conv2d(384, 256, 3), nn.BatchNorm2d(256),
    )  # fmt: skip
    cls_head, loc_head = DWRPNHead(256, 2 * na), DWRPNHead(256, 4 * na)
    nn.ModuleList([backbone, cls_head, loc_head]).to(dev).half().eval()
    z_img = torch.rand(B, 3, 127, 127, device=dev, dtype=torch.half)
    x_img = torch.rand(B, 3, 255, 255, device=dev, dtype=torch.half)
    size, stride = 17, 8
    ratios = torch.tensor([0.33, 0.5, 1, 2, 3])
    ws = (torch.sqrt(64.0 * 64.0 / ratios)).round()
    hs = (ws * ratios).round()
    ori = -(size // 2) * stride
    grid = torch.arange(size) * stride + ori
    yy, xx = torch.meshgrid(grid, grid, indexing="ij")
    cells = size * size
    anchors = torch.stack(  # (na*17*17, 4): cx, cy, w, h
        [xx.flatten().repeat(na), yy.flatten().repeat(na), ws.repeat_interleave(cells), hs.repeat_interleave(cells)], 1
    ).to(dev)
    hann = torch.hann_window(size, periodic=False, device=dev)
    window = torch.outer(hann, hann).flatten().repeat(na)
    prev_wh = torch.full((B, 2), 64.0, device=dev)

    def f():
        with torch.no_grad():
            zf, xf = backbone(z_img), backbone(x_img)
            cls, loc = cls_head(zf, xf), loc_head(zf, xf)
            score = cls.view(B, 2, na, size, size).float().softmax(1)[:, 1].flatten(1)
            d = loc.view(B, 4, na * size * size).float()
            cx, cy = d[:, 0] * anchors[:, 2] + anchors[:, 0], d[:, 1] * anchors[:, 3] + anchors[:, 1]
            w, h = torch.exp(d[:, 2]) * anchors[:, 2], torch.exp(d[:, 3]) * anchors[:, 3]

            def change(r):
                return torch.maximum(r, 1.0 / r)

            def sz(w, h):
                pad = (w + h) * 0.5
                return torch.sqrt((w + pad) * (h + pad))

            s_c = change(sz(w, h) / sz(prev_wh[:, :1], prev_wh[:, 1:]))
            r_c = change((prev_wh[:, :1] / prev_wh[:, 1:]) / (w / h))
            penalty = torch.exp(-(r_c * s_c - 1) * 0.04)
            pscore = penalty * score * (1 - 0.44) + window * 0.44
            best = pscore.argmax(1, keepdim=True)
            return torch.stack([cx.gather(1, best), cy.gather(1, best), w.gather(1, best), h.gather(1, best)], -1)

    return f


WORKLOADS = [
    ("e1_retnet_retention_compiled_bf16_train_recurrent_decode", b_retnet, 2, 2),
    ("e2_tacotron2_lsa_lstmcell_fp16_scaler_train", b_tacotron2, 1, 1),
    ("e3_evoformer_pair_stack_compiled_bf16_train", b_evoformer, 2, 2),
    ("e4_stylegan2_modconv_r1_fp32_train", b_stylegan2, 2, 2),
    ("e5_conformer_relpos_ctc_fp16_scaler_train", b_conformer, 2, 2),
    ("e6_mae_random_masking_compiled_bf16_lamb", b_mae, 2, 2),
    ("e7_schnet_energy_forces_double_bwd", b_schnet, 2, 2),
    ("e8_glow_actnorm_invconv_slogdet_train_sample", b_glow, 2, 2),
    ("e9_wavenet_gated_dilated_compiled_fp16_scaler", b_wavenet, 2, 2),
    ("e10_dpsgd_vmap_per_sample_grads_ensemble", b_dpsgd, 2, 2),
    ("e11_kmeans_ivf_colbert_maxsim_fp16", b_kmeans_colbert, 1, 1),
    ("e12_performer_favor_causal_compiled_bf16", b_performer, 2, 2),
    ("e13_reformer_lsh_attn_bf16_adafactor", b_reformer, 2, 2),
    ("e14_longformer_sliding_chunks_fp16_infer", b_longformer, 2, 2),
    ("e15_patchtst_revin_compiled_train", b_patchtst, 2, 2),
    ("e16_barlow_vicreg_gpu_aug_lars_bf16", b_barlow_vicreg, 2, 2),
    ("e17_dcnv2_embbag_rowwise_adagrad", b_dcnv2, 2, 2),
    ("e18_esrgan_rrdb_compiled_fp16_cl_infer", b_esrgan, 2, 2),
    ("e19_word2vec_sgns_sparse_adam", b_word2vec, 2, 2),
    ("e20_pointnet2_fps_ballquery_seg_train", b_pointnet2, 1, 1),
    ("e21_w8a8_smoothquant_compiled_decode", b_w8a8_decode, 2, 1),
    ("e22_multi_lora_bgmv_fp16_top_p_decode", b_multi_lora, 1, 1),
    ("e23_fp8_delayed_scaling_e5m2_grad_train", b_fp8_train, 2, 2),
    ("e24_fast_style_instnorm_reflpad_gram_bf16", b_style_transfer, 2, 2),
    ("e25_gru_seq2seq_bahdanau_packed_sgd", b_gru_seq2seq, 1, 1),
    ("e26_s4d_vandermonde_fftconv_train", b_s4d, 2, 2),
    ("e27_siamrpn_dwxcorr_fp16_track", b_siamrpn, 2, 2),
]

if __name__ == "__main__":
    only = os.environ.get("ONLY")
    for tag, build, warm, iters in WORKLOADS:
        if not only or any(o in tag for o in only.split(",")):
            run(tag, build, warm, iters)
    print("done", round(time.time() - capture.start, 1), flush=True)
