"""Draw 32 (classification): capture TorchInductor Triton kernels (name + source) of 16 real model architectures
written in plain torch, each compiled with torch.compile (default mode).

Usage on the GPU machine:  OUT=... JOBS=8 BUDGET=330 python3 capture_inductor_models.py
Local checks without a GPU: CHECK=eager (run eagerly on CPU) or CHECK=aot_eager (dynamo + AOT autograd on CPU).
Writes $OUT/kernels.json {name: {workload, aten, source, also_in, variants}} and $OUT/meta.json.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from _inductor_capture import InductorCapture

capture = InductorCapture(out="/tmp/inductor_models_out", kernels_file="kernels.json", budget_s=330, jobs=8,
                          cache_prefix="inductor_models_")
DEV = capture.device
compile_ = capture.compile
workload = capture.workload


def autocast(dtype=torch.bfloat16):
    return torch.autocast(DEV, dtype)


def train_step(loss_fn, inputs, m=None, opt=None):
    """A step of a training loop: a compiled forward + backward of `loss_fn(*inputs)`, then `opt`'s update
    (when there is one) and the gradients dropped (`opt`'s, or else `m`'s)."""

    @compile_
    def fwd_bwd(*args):
        loss = loss_fn(*args)
        loss.backward()
        return loss

    def step():
        fwd_bwd(*inputs)
        if opt is not None:
            opt.step()
            opt.zero_grad(set_to_none=True)
        else:
            m.zero_grad(set_to_none=True)

    return step


def classifier_train_step(m, img, y):
    """An image classifier under autocast, label-smoothed cross-entropy."""

    def loss_fn(img, y):
        with autocast():
            out = m(img)
        return F.cross_entropy(out.float(), y, label_smoothing=0.1)

    return train_step(loss_fn, (img, y), m=m)


# ====================================================================================================
# 1. LLaMA-style decoder training step
# ====================================================================================================
class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        out = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return out.type_as(x) * self.weight


def precompute_freqs(hd, T, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, hd, 2)[: hd // 2].float() / hd))
    t = torch.arange(T).float()
    f = torch.outer(t, freqs)
    return torch.stack([f.cos(), f.sin()], -1)  # (T, hd/2, 2)


def apply_rotary(x, fc):  # x (B, T, H, hd), gpt-fast interleaved-pairs form
    xs = x.float().reshape(*x.shape[:-1], -1, 2)
    fc = fc.view(1, xs.size(1), 1, xs.size(3), 2)
    out = torch.stack([xs[..., 0] * fc[..., 0] - xs[..., 1] * fc[..., 1],
                       xs[..., 1] * fc[..., 0] + xs[..., 0] * fc[..., 1]], -1)
    return out.flatten(3).type_as(x)


class LlamaLayer(nn.Module):
    def __init__(self, d, h, kvh, ffn):
        super().__init__()
        self.h, self.kvh, self.hd = h, kvh, d // h
        self.attention_norm, self.ffn_norm = RMSNorm(d), RMSNorm(d)
        self.wq = nn.Linear(d, h * self.hd, bias=False)
        self.wk = nn.Linear(d, kvh * self.hd, bias=False)
        self.wv = nn.Linear(d, kvh * self.hd, bias=False)
        self.wo = nn.Linear(h * self.hd, d, bias=False)
        self.w1 = nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)
        self.w3 = nn.Linear(d, ffn, bias=False)

    def forward(self, x, fc):
        B, T, D = x.shape
        y = self.attention_norm(x)
        q = self.wq(y).view(B, T, self.h, self.hd)
        k = self.wk(y).view(B, T, self.kvh, self.hd)
        v = self.wv(y).view(B, T, self.kvh, self.hd)
        q, k = apply_rotary(q, fc), apply_rotary(k, fc)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        h = x + self.wo(a.transpose(1, 2).contiguous().view(B, T, D))
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


class Llama(nn.Module):
    def __init__(self, vocab=6000, d=384, h=6, kvh=2, ffn=1024, layers=2, T=128):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaLayer(d, h, kvh, ffn) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.output = nn.Linear(d, vocab, bias=False)
        self.register_buffer("freqs", precompute_freqs(d // h, T), persistent=False)

    def forward(self, ids):
        x = self.tok_embeddings(ids)
        fc = self.freqs[: ids.shape[1]]
        for layer in self.layers:
            x = layer(x, fc)
        return self.output(self.norm(x)).float()


@workload
def llama_train():
    m = Llama().to(DEV)
    ids = torch.randint(0, 6000, (4, 129), device=DEV)

    def loss_fn(ids):
        with autocast():
            logits = m(ids[:, :-1])
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), ids[:, 1:].reshape(-1), ignore_index=-1)
        return loss

    return train_step(loss_fn, (ids,), m=m)


# ====================================================================================================
# 2. ViT-B-like classifier training
# ====================================================================================================
class ViTBlock(nn.Module):
    def __init__(self, d, h, mlp=4, p=0.1):
        super().__init__()
        self.h = h
        self.norm1, self.norm2 = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, mlp * d), nn.Linear(mlp * d, d)
        self.drop = nn.Dropout(p)
        self.p = p

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(B, N, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(B, N, C)))
        x = x + self.drop(self.fc2(self.drop(F.gelu(self.fc1(self.norm2(x))))))
        return x


class ViT(nn.Module):
    def __init__(self, img=64, patch=8, d=384, h=6, depth=3, ncls=100):
        super().__init__()
        n = (img // patch) ** 2
        self.patch_embed = nn.Conv2d(3, d, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        self.pos_drop = nn.Dropout(0.1)
        self.blocks = nn.Sequential(*[ViTBlock(d, h) for _ in range(depth)])
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, ncls)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1)
        x = self.pos_drop(x + self.pos_embed)
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


@workload
def vit_train():
    m = ViT().to(DEV).train()
    img = torch.randn(16, 3, 64, 64, device=DEV)
    y = torch.randint(0, 100, (16,), device=DEV)

    return classifier_train_step(m, img, y)


# ====================================================================================================
# 3. ResNet-style convnet training with BatchNorm
# ====================================================================================================
class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        o = F.relu(self.bn1(self.conv1(x)), inplace=True)
        o = F.relu(self.bn2(self.conv2(o)), inplace=True)
        o = self.bn3(self.conv3(o))
        return F.relu(o + idt, inplace=True)


class ResNet(nn.Module):
    def __init__(self, ncls=100):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(Bottleneck(32, 16, 1), Bottleneck(64, 16, 1))
        self.layer2 = nn.Sequential(Bottleneck(64, 32, 2), Bottleneck(128, 32, 1))
        self.layer3 = nn.Sequential(Bottleneck(128, 64, 2))
        self.fc = nn.Linear(256, ncls)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


@workload
def resnet_train():
    m = ResNet().to(DEV).train()
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    img = torch.randn(32, 3, 64, 64, device=DEV)
    y = torch.randint(0, 100, (32,), device=DEV)

    def loss_fn(img, y):
        loss = F.cross_entropy(m(img), y)
        return loss

    return train_step(loss_fn, (img, y), opt=opt)


# ====================================================================================================
# 4. BERT-like encoder inference (learned positions, token types, GELU, dropout modules, fp16)
# ====================================================================================================
class BertLayer(nn.Module):
    def __init__(self, d, h, ffn, p=0.1):
        super().__init__()
        self.h, self.hd = h, d // h
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_drop = nn.Dropout(p)
        self.out = nn.Linear(d, d)
        self.out_drop = nn.Dropout(p)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.inter = nn.Linear(d, ffn)
        self.out2 = nn.Linear(ffn, d)
        self.out2_drop = nn.Dropout(p)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        s = s + ext_mask
        p = self.attn_drop(F.softmax(s, dim=-1))
        c = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous().view(x.shape)
        x = self.ln1(self.out_drop(self.out(c)) + x)
        return self.ln2(self.out2_drop(self.out2(F.gelu(self.inter(x)))) + x)


class Bert(nn.Module):
    def __init__(self, vocab=8000, d=256, h=4, ffn=1024, layers=3, maxpos=128, ncls=3):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(maxpos, d)
        self.token_type_embeddings = nn.Embedding(2, d)
        self.emb_ln = nn.LayerNorm(d, eps=1e-12)
        self.emb_drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(BertLayer(d, h, ffn) for _ in range(layers))
        self.pooler = nn.Linear(d, d)
        self.cls = nn.Linear(d, ncls)
        self.register_buffer("position_ids", torch.arange(maxpos).expand(1, -1), persistent=False)

    def forward(self, ids, tt, mask):
        T = ids.shape[1]
        positions = self.position_embeddings(self.position_ids[:, :T])
        x = self.word_embeddings(ids) + self.token_type_embeddings(tt) + positions
        x = self.emb_drop(self.emb_ln(x))
        ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, ext)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.cls(pooled), x


@workload
def bert_infer():
    m = Bert().to(DEV).eval()
    if DEV == "cuda":
        m = m.half()
    B, T = 16, 128
    ids = torch.randint(1, 8000, (B, T), device=DEV)
    lens = torch.randint(T // 2, T + 1, (B,), device=DEV)
    mask = (torch.arange(T, device=DEV)[None] < lens[:, None]).long()
    ids = ids * mask
    tt = (torch.arange(T, device=DEV)[None] >= (lens[:, None] // 2)).long() * mask
    fc = compile_(m)

    def step():
        with torch.no_grad():
            logits, hid = fc(ids, tt, mask)
            return logits.float().softmax(-1)

    return step


# ====================================================================================================
# 5. T5-like encoder-decoder with relative-position bias buckets (training step)
# ====================================================================================================
class T5LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(self.weight.dtype)


def relative_position_bucket(rel, bidirectional, num_buckets=32, max_distance=128):
    ret = 0
    if bidirectional:
        num_buckets //= 2
        ret = (rel > 0).to(torch.long) * num_buckets
        rel = torch.abs(rel)
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    large = max_exact + (torch.log(rel.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(is_small, rel, large)


class T5Attention(nn.Module):
    def __init__(self, d, h, has_bias, bidirectional):
        super().__init__()
        self.h, self.dk = h, d // h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.bidirectional = bidirectional
        self.rel_bias = nn.Embedding(32, h) if has_bias else None
        self.drop = nn.Dropout(0.1)

    def compute_bias(self, ql, kl, device):
        ctx = torch.arange(ql, dtype=torch.long, device=device)[:, None]
        mem = torch.arange(kl, dtype=torch.long, device=device)[None, :]
        buckets = relative_position_bucket(mem - ctx, self.bidirectional)
        return self.rel_bias(buckets).permute(2, 0, 1).unsqueeze(0)

    def forward(self, x, kv=None, bias=None, mask=None):
        B, T, D = x.shape
        kv = x if kv is None else kv
        S = kv.shape[1]
        q = self.q(x).view(B, T, self.h, self.dk).transpose(1, 2)
        k = self.k(kv).view(B, S, self.h, self.dk).transpose(1, 2)
        v = self.v(kv).view(B, S, self.h, self.dk).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(3, 2))
        if bias is None:
            if self.rel_bias is not None:
                bias = self.compute_bias(T, S, x.device)
            else:
                bias = torch.zeros(1, self.h, T, S, device=x.device, dtype=scores.dtype)
            if mask is not None:
                bias = bias + mask
        scores = scores + bias
        w = self.drop(F.softmax(scores.float(), dim=-1).type_as(scores))
        out = torch.matmul(w, v).transpose(1, 2).reshape(B, T, D)
        return self.o(out), bias


class T5FF(nn.Module):  # gated-gelu (T5 v1.1)
    def __init__(self, d, ff):
        super().__init__()
        self.wi_0, self.wi_1 = nn.Linear(d, ff, bias=False), nn.Linear(d, ff, bias=False)
        self.wo = nn.Linear(ff, d, bias=False)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.wo(self.drop(F.gelu(self.wi_0(x), approximate="tanh") * self.wi_1(x)))


class T5Block(nn.Module):
    def __init__(self, d, h, ff, has_bias, decoder):
        super().__init__()
        self.ln_sa = T5LayerNorm(d)
        self.sa = T5Attention(d, h, has_bias, bidirectional=not decoder)
        self.ca = T5Attention(d, h, False, True) if decoder else None
        self.ln_ca = T5LayerNorm(d) if decoder else None
        self.ln_ff = T5LayerNorm(d)
        self.ff = T5FF(d, ff)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, bias, mask, enc=None, enc_bias=None, enc_mask=None):
        a, bias = self.sa(self.ln_sa(x), bias=bias, mask=mask)
        x = x + self.drop(a)
        if self.ca is not None:
            c, enc_bias = self.ca(self.ln_ca(x), kv=enc, bias=enc_bias, mask=enc_mask)
            x = x + self.drop(c)
        x = x + self.drop(self.ff(self.ln_ff(x)))
        return x, bias, enc_bias


class T5(nn.Module):
    def __init__(self, vocab=4000, d=256, h=4, ff=512, layers=2):
        super().__init__()
        self.shared = nn.Embedding(vocab, d)
        self.enc = nn.ModuleList(T5Block(d, h, ff, i == 0, False) for i in range(layers))
        self.dec = nn.ModuleList(T5Block(d, h, ff, i == 0, True) for i in range(layers))
        self.enc_ln, self.dec_ln = T5LayerNorm(d), T5LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.d = d

    def forward(self, src, src_mask, tgt_in):
        x = self.shared(src)
        emask = (1.0 - src_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        bias = None
        for b in self.enc:
            x, bias, _ = b(x, bias, emask)
        enc = self.enc_ln(x)
        T = tgt_in.shape[1]
        causal = torch.tril(torch.ones(T, T, device=src.device, dtype=torch.bool))
        dmask = (~causal)[None, None].float() * torch.finfo(torch.float32).min
        y = self.shared(tgt_in)
        bias, ebias = None, None
        for b in self.dec:
            y, bias, ebias = b(y, bias, dmask, enc, ebias, emask)
        y = self.dec_ln(y) * (self.d ** -0.5)
        return self.lm_head(y)


@workload
def t5_train():
    m = T5().to(DEV).train()
    B, S, T = 8, 96, 48
    src = torch.randint(1, 4000, (B, S), device=DEV)
    src_mask = (torch.arange(S, device=DEV)[None] < torch.randint(S // 2, S + 1, (B, 1), device=DEV)).long()
    labels = torch.randint(1, 4000, (B, T), device=DEV)
    labels[:, -5:] = -100

    def loss_fn(src, src_mask, labels):
        tgt_in = torch.cat([labels.new_zeros(B, 1), labels[:, :-1]], 1)
        tgt_in = tgt_in.masked_fill(tgt_in == -100, 0)
        logits = m(src, src_mask, tgt_in)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
        return loss

    return train_step(loss_fn, (src, src_mask, labels), m=m)


# ====================================================================================================
# 6. GPT-2 style autoregressive generation with a KV cache (prefill + decode steps), fp16
# ====================================================================================================
class GPT2Block(nn.Module):
    def __init__(self, d, h, maxT, B):
        super().__init__()
        self.h, self.hd = h, d // h
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)
        self.register_buffer("k_cache", torch.zeros(B, h, maxT, d // h), persistent=False)
        self.register_buffer("v_cache", torch.zeros(B, h, maxT, d // h), persistent=False)

    def forward(self, x, pos):  # x (B, T, d); pos (T,) positions being written
        B, T, D = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q = q.view(B, T, self.h, self.hd).transpose(1, 2)
        k = k.view(B, T, self.h, self.hd).transpose(1, 2)
        v = v.view(B, T, self.h, self.hd).transpose(1, 2)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        maxT = self.k_cache.shape[2]
        allowed = torch.arange(maxT, device=x.device)[None, :] <= pos[:, None]  # (T, maxT)
        att = torch.matmul(q, self.k_cache.transpose(-1, -2)) * (1.0 / math.sqrt(self.hd))
        att = att.masked_fill(~allowed[None, None], torch.finfo(att.dtype).min)
        att = F.softmax(att.float(), dim=-1).to(q.dtype)
        y = torch.matmul(att, self.v_cache).transpose(1, 2).reshape(B, T, D)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, vocab=8000, d=384, h=6, layers=3, maxT=160, B=4):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(maxT, d)
        self.h = nn.ModuleList(GPT2Block(d, h, maxT, B) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids, pos):
        x = self.wte(ids) + self.wpe(pos)[None]
        for b in self.h:
            x = b(x, pos)
        return F.linear(self.ln_f(x), self.wte.weight)


@workload
def gpt2_generate():
    B, P = 4, 32
    m = GPT2(B=B).to(DEV).eval()
    if DEV == "cuda":
        m = m.half()
    prompt = torch.randint(0, 8000, (B, P), device=DEV)

    def prefill(ids, pos):
        logits = m(ids, pos)
        return logits[:, -1].float()

    def decode(tok, pos, temperature, top_k: int = 50):
        logits = m(tok, pos)[:, -1].float() / temperature
        v, _ = torch.topk(logits, top_k)
        logits = logits.masked_fill(logits < v[:, -1:], float("-inf"))
        probs = F.softmax(logits, dim=-1)
        greedy = torch.argmax(probs, -1, keepdim=True)
        q = torch.empty_like(probs).exponential_(1)
        sampled = torch.argmax(probs / q, -1, keepdim=True)
        return greedy, sampled

    prefill_c = compile_(prefill)
    decode_c = compile_(decode)

    def step():
        with torch.no_grad():
            last = prefill_c(prompt, torch.arange(P, device=DEV))
            tok = last.argmax(-1, keepdim=True)
            for i in range(4):
                g, s = decode_c(tok, torch.tensor([P + i], device=DEV), torch.tensor(0.8, device=DEV))
                tok = torch.where(torch.rand(B, 1, device=DEV) < 0.5, g, s)
        return tok

    return step


# ====================================================================================================
# 7. Swin-like window attention with roll + relative-position bias (training)
# ====================================================================================================
def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.view(B, H // ws, ws, W // ws, ws, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, C)


def window_reverse(w, ws, H, W):
    B = int(w.shape[0] / (H * W / ws / ws))
    x = w.view(B, H // ws, W // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class WindowAttention(nn.Module):
    def __init__(self, dim, ws, h):
        super().__init__()
        self.ws, self.h = ws, h
        self.scale = (dim // h) ** -0.5
        self.relative_position_bias_table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, h) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("relative_position_index", rel.sum(-1), persistent=False)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(0.0)

    def forward(self, x, mask=None):
        B_, N, C = x.shape
        qkv = self.qkv(x).reshape(B_, N, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(N, N, -1)
        attn = attn + bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        if mask is not None:
            nW = mask.shape[0]
            attn = attn.view(B_ // nW, nW, self.h, N, N) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.h, N, N)
        attn = self.attn_drop(attn.softmax(-1))
        return self.proj((attn @ v).transpose(1, 2).reshape(B_, N, C))


def drop_path(x, p, training):
    if p == 0.0 or not training:
        return x
    keep = 1 - p
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    r = x.new_empty(shape).bernoulli_(keep)
    return x * r.div_(keep)


class SwinBlock(nn.Module):
    def __init__(self, dim, res, h, ws=7, shift=0, dp=0.1):
        super().__init__()
        self.res, self.ws, self.shift, self.dp = res, ws, shift, dp
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, ws, h)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        if shift > 0:
            H = W = res
            img_mask = torch.zeros(1, H, W, 1)
            cnt = 0
            for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    img_mask[:, hs, wsl, :] = cnt
                    cnt += 1
            mw = window_partition(img_mask, ws).view(-1, ws * ws)
            am = mw.unsqueeze(1) - mw.unsqueeze(2)
            am = am.masked_fill(am != 0, -100.0).masked_fill(am == 0, 0.0)
            self.register_buffer("attn_mask", am, persistent=False)
        else:
            self.attn_mask = None

    def forward(self, x):
        H = W = self.res
        B, L, C = x.shape
        sc = x
        x = self.norm1(x).view(B, H, W, C)
        if self.shift > 0:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        xw = window_partition(x, self.ws).view(-1, self.ws * self.ws, C)
        aw = self.attn(xw, self.attn_mask).view(-1, self.ws, self.ws, C)
        x = window_reverse(aw, self.ws, H, W)
        if self.shift > 0:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        x = sc + drop_path(x.view(B, H * W, C), self.dp, self.training)
        return x + drop_path(self.mlp(self.norm2(x)), self.dp, self.training)


class PatchMerging(nn.Module):
    def __init__(self, res, dim):
        super().__init__()
        self.res = res
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        H = W = self.res
        B, L, C = x.shape
        x = x.view(B, H, W, C)
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x.view(B, -1, 4 * C)))


class Swin(nn.Module):
    def __init__(self, ncls=100):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 64, 4, 4)
        self.pe_norm = nn.LayerNorm(64)
        self.s1 = nn.Sequential(SwinBlock(64, 14, 2, 7, 0), SwinBlock(64, 14, 2, 7, 3))
        self.merge = PatchMerging(14, 64)
        self.s2 = nn.Sequential(SwinBlock(128, 7, 4, 7, 0), SwinBlock(128, 7, 4, 7, 0))
        self.norm = nn.LayerNorm(128)
        self.head = nn.Linear(128, ncls)

    def forward(self, x):
        x = self.pe_norm(self.patch_embed(x).flatten(2).transpose(1, 2))
        x = self.s2(self.merge(self.s1(x)))
        x = self.norm(x)
        return self.head(F.adaptive_avg_pool1d(x.transpose(1, 2), 1).flatten(1))


@workload
def swin_train():
    m = Swin().to(DEV).train()
    img = torch.randn(16, 3, 56, 56, device=DEV)
    y = torch.randint(0, 100, (16,), device=DEV)

    def loss_fn(img, y):
        loss = F.cross_entropy(m(img), y)
        return loss

    return train_step(loss_fn, (img, y), m=m)


# ====================================================================================================
# 8. ConvNeXt blocks (depthwise conv, LayerNorm channels-last, layer scale, stochastic depth)
# ====================================================================================================
class LayerNorm2d(nn.Module):  # ConvNeXt's channels_first LayerNorm, written out as in the official repo
    def __init__(self, c, eps=1e-6):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, dp=0.1, ls=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(ls * torch.ones(dim))
        self.dp = dp

    def forward(self, x):
        inp = x
        x = self.dwconv(x).permute(0, 2, 3, 1)
        x = self.pwconv2(F.gelu(self.pwconv1(self.norm(x))))
        x = (self.gamma * x).permute(0, 3, 1, 2)
        return inp + drop_path(x, self.dp, self.training)


class ConvNeXt(nn.Module):
    def __init__(self, ncls=100):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 48, 4, 4), LayerNorm2d(48))
        self.stage1 = nn.Sequential(ConvNeXtBlock(48), ConvNeXtBlock(48))
        self.down = nn.Sequential(LayerNorm2d(48), nn.Conv2d(48, 96, 2, 2))
        self.stage2 = nn.Sequential(ConvNeXtBlock(96), ConvNeXtBlock(96))
        self.norm = nn.LayerNorm(96, eps=1e-6)
        self.head = nn.Linear(96, ncls)

    def forward(self, x):
        x = self.stage2(self.down(self.stage1(self.stem(x))))
        return self.head(self.norm(x.mean([-2, -1])))


@workload
def convnext_train():
    m = ConvNeXt().to(DEV).train()
    if DEV == "cuda":
        m = m.to(memory_format=torch.channels_last)
    img = torch.randn(16, 3, 64, 64, device=DEV)
    if DEV == "cuda":
        img = img.to(memory_format=torch.channels_last)
    y = torch.randint(0, 100, (16,), device=DEV)

    return classifier_train_step(m, img, y)


# ====================================================================================================
# 9. Diffusion UNet block (GroupNorm, SiLU, timestep embedding, cross-attention), epsilon-prediction loss
# ====================================================================================================
def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], -1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(32, cout)
        self.drop = nn.Dropout(0.1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.drop(F.silu(self.norm2(h))))
        return self.skip(x) + h


class CrossAttention(nn.Module):
    def __init__(self, qd, cd, h, hd):
        super().__init__()
        self.h = h
        self.to_q = nn.Linear(qd, h * hd, bias=False)
        self.to_k = nn.Linear(cd, h * hd, bias=False)
        self.to_v = nn.Linear(cd, h * hd, bias=False)
        self.to_out = nn.Linear(h * hd, qd)

    def forward(self, x, ctx=None):
        ctx = x if ctx is None else ctx
        B, N, _ = x.shape
        q, k, v = self.to_q(x), self.to_k(ctx), self.to_v(ctx)
        q, k, v = (t.view(B, -1, self.h, t.shape[-1] // self.h).transpose(1, 2) for t in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v)
        return self.to_out(o.transpose(1, 2).reshape(B, N, -1))


class GEGLU(nn.Module):
    def __init__(self, d, inner):
        super().__init__()
        self.proj = nn.Linear(d, inner * 2)

    def forward(self, x):
        x, gate = self.proj(x).chunk(2, -1)
        return x * F.gelu(gate)


class SpatialTransformer(nn.Module):
    def __init__(self, c, cd, h=4):
        super().__init__()
        self.norm = nn.GroupNorm(32, c, eps=1e-6)
        self.proj_in = nn.Conv2d(c, c, 1)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(c), nn.LayerNorm(c), nn.LayerNorm(c)
        self.attn1 = CrossAttention(c, c, h, c // h)
        self.attn2 = CrossAttention(c, cd, h, c // h)
        self.ff = nn.Sequential(GEGLU(c, 4 * c), nn.Linear(4 * c, c))
        self.proj_out = nn.Conv2d(c, c, 1)

    def forward(self, x, ctx):
        B, C, H, W = x.shape
        h = self.proj_in(self.norm(x)).flatten(2).transpose(1, 2)
        h = h + self.attn1(self.norm1(h))
        h = h + self.attn2(self.norm2(h), ctx)
        h = h + self.ff(self.norm3(h))
        return x + self.proj_out(h.transpose(1, 2).reshape(B, C, H, W))


class UNet(nn.Module):
    def __init__(self, c=64, cd=128):
        super().__init__()
        self.c = c
        self.time_embed = nn.Sequential(nn.Linear(c, 4 * c), nn.SiLU(), nn.Linear(4 * c, 4 * c))
        self.conv_in = nn.Conv2d(4, c, 3, padding=1)
        self.down_res = ResBlock(c, c, 4 * c)
        self.down_attn = SpatialTransformer(c, cd)
        self.downsample = nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.mid_res = ResBlock(c, 2 * c, 4 * c)
        self.mid_attn = SpatialTransformer(2 * c, cd)
        self.up_conv = nn.Conv2d(2 * c, c, 3, padding=1)
        self.up_res = ResBlock(2 * c, c, 4 * c)
        self.norm_out = nn.GroupNorm(32, c)
        self.conv_out = nn.Conv2d(c, 4, 3, padding=1)

    def forward(self, x, t, ctx):
        temb = self.time_embed(timestep_embedding(t, self.c))
        h0 = self.down_attn(self.down_res(self.conv_in(x), temb), ctx)
        h = self.mid_attn(self.mid_res(self.downsample(h0), temb), ctx)
        h = self.up_conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up_res(torch.cat([h, h0], 1), temb)
        return self.conv_out(F.silu(self.norm_out(h)))


@workload
def unet_train():
    m = UNet().to(DEV).train()
    betas = torch.linspace(1e-4, 0.02, 1000, dtype=torch.float64)
    alphas_cumprod = torch.cumprod(1 - betas, 0).float().to(DEV)
    x0 = torch.randn(8, 4, 16, 16, device=DEV)
    ctx = torch.randn(8, 77, 128, device=DEV)

    def loss_fn(x0, ctx):
        t = torch.randint(0, 1000, (x0.shape[0],), device=x0.device)
        noise = torch.randn_like(x0)
        a = alphas_cumprod[t].view(-1, 1, 1, 1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        with autocast():
            pred = m(xt, t, ctx)
        loss = F.mse_loss(pred.float(), noise)
        return loss

    return train_step(loss_fn, (x0, ctx), m=m)


# ====================================================================================================
# 10. Mamba-like selective scan in plain torch (mamba-minimal style), LM training step
# ====================================================================================================
class MambaBlock(nn.Module):
    def __init__(self, d, d_state=16, expand=2, d_conv=4):
        super().__init__()
        di = expand * d
        self.di, self.ds = di, d_state
        self.dt_rank = math.ceil(d / 16)
        self.in_proj = nn.Linear(d, 2 * di, bias=False)
        self.conv1d = nn.Conv1d(di, di, d_conv, groups=di, padding=d_conv - 1)
        self.x_proj = nn.Linear(di, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, di)
        A = torch.arange(1, d_state + 1).float().repeat(di, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(di))
        self.out_proj = nn.Linear(di, d, bias=False)

    def ssm(self, x):
        A = -torch.exp(self.A_log.float())
        dbc = self.x_proj(x)
        delta, B, C = dbc.split([self.dt_rank, self.ds, self.ds], -1)
        delta = F.softplus(self.dt_proj(delta))
        dA = torch.exp(torch.einsum("bld,dn->bldn", delta, A))
        dBu = torch.einsum("bld,bln,bld->bldn", delta, B, x)
        h = x.new_zeros(x.shape[0], self.di, self.ds)
        ys = []
        for i in range(x.shape[1]):
            h = dA[:, i] * h + dBu[:, i]
            ys.append(torch.einsum("bdn,bn->bd", h, C[:, i]))
        y = torch.stack(ys, 1)
        return y + x * self.D

    def forward(self, x):
        L = x.shape[1]
        xz = self.in_proj(x)
        x, z = xz.chunk(2, -1)
        x = self.conv1d(x.transpose(1, 2))[:, :, :L].transpose(1, 2)
        x = F.silu(x)
        return self.out_proj(self.ssm(x) * F.silu(z))


class Mamba(nn.Module):
    def __init__(self, vocab=4000, d=128, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(MambaBlock(d) for _ in range(layers))
        self.norms = nn.ModuleList(RMSNorm(d) for _ in range(layers))
        self.norm_f = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, ids):
        x = self.embedding(ids)
        for layer, norm in zip(self.layers, self.norms, strict=True):
            x = layer(norm(x)) + x
        return self.lm_head(self.norm_f(x))


@workload
def mamba_train():
    m = Mamba().to(DEV).train()
    ids = torch.randint(0, 4000, (8, 17), device=DEV)

    def loss_fn(ids):
        logits = m(ids[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        return loss

    return train_step(loss_fn, (ids,), m=m)


# ====================================================================================================
# 11. DLRM (embedding bags, interaction bmm, MLPs)
# ====================================================================================================
class DLRM(nn.Module):
    def __init__(self, n_sparse=8, rows=5000, dim=32):
        super().__init__()
        self.emb_l = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(n_sparse - 2))
        self.emb_mean = nn.EmbeddingBag(rows, dim, mode="mean")
        self.emb_fixed = nn.Embedding(rows, dim)  # a fixed-size multi-hot bag summed by hand
        self.bot_l = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, dim), nn.ReLU())
        n = n_sparse + 1
        self.register_buffer("li", torch.tensor([i for i in range(n) for j in range(i)]), persistent=False)
        self.register_buffer("lj", torch.tensor([j for i in range(n) for j in range(i)]), persistent=False)
        self.top_l = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 64), nn.ReLU(), nn.Linear(64, 32),
                                   nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, idx, offs, fixed):
        x = self.bot_l(dense)
        ly = [e(idx[k], offs[k]) for k, e in enumerate(self.emb_l)]
        ly.append(self.emb_mean(idx[-1], offs[-1]))
        ly.append(self.emb_fixed(fixed).sum(1))
        T = torch.cat([x] + ly, 1).view(x.shape[0], -1, x.shape[1])
        Z = torch.bmm(T, T.transpose(1, 2))
        Zflat = Z[:, self.li, self.lj]
        R = torch.cat([x, Zflat], 1)
        return self.top_l(R).squeeze(1)


@workload
def dlrm_train():
    m = DLRM().to(DEV).train()
    B = 256
    dense = torch.log1p(torch.rand(B, 13, device=DEV) * 100)
    lengths = torch.randint(1, 6, (7, B), device=DEV)
    offs = torch.cat([torch.zeros(7, 1, dtype=torch.long, device=DEV), lengths.cumsum(1)[:, :-1]], 1)
    tot = int(lengths.sum(1).max())
    idx = torch.randint(0, 5000, (7, tot), device=DEV)
    fixed = torch.randint(0, 5000, (B, 4), device=DEV)
    y = torch.randint(0, 2, (B,), device=DEV).float()
    opt = torch.optim.Adagrad(m.parameters(), lr=0.01)

    def loss_fn(dense, idx, offs, fixed, y):
        p = torch.sigmoid(m(dense, idx, offs, fixed))
        loss = F.binary_cross_entropy(p, y)
        return loss

    return train_step(loss_fn, (dense, idx, offs, fixed, y), opt=opt)


# ====================================================================================================
# 12. GNN with index_add / scatter message passing (GCN + GAT layers)
# ====================================================================================================
class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, src, dst):
        N = x.shape[0]
        deg = torch.zeros(N, device=x.device).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        dis = deg.pow(-0.5).masked_fill(deg == 0, 0.0)
        norm = dis[src] * dis[dst]
        h = self.lin(x)
        out = torch.zeros_like(h).index_add_(0, dst, h[src] * norm[:, None])
        return out + self.bias


class GATConv(nn.Module):
    def __init__(self, cin, cout, heads=4):
        super().__init__()
        self.h, self.c = heads, cout
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, cout) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, cout) * 0.1)
        self.bias = nn.Parameter(torch.zeros(heads * cout))

    def forward(self, x, src, dst):
        N = x.shape[0]
        h = self.lin(x).view(N, self.h, self.c)
        a_s, a_d = (h * self.att_src).sum(-1), (h * self.att_dst).sum(-1)
        e = F.leaky_relu(a_s[src] + a_d[dst], 0.2)
        emax = torch.full((N, self.h), -1e9, device=x.device).scatter_reduce(
            0, dst[:, None].expand(-1, self.h), e, reduce="amax", include_self=True)
        ex = torch.exp(e - emax[dst])
        den = torch.zeros(N, self.h, device=x.device).scatter_add(0, dst[:, None].expand(-1, self.h), ex)
        alpha = F.dropout(ex / (den[dst] + 1e-16), 0.1, self.training)
        msg = h[src] * alpha[..., None]
        out = torch.zeros(N, self.h, self.c, device=x.device).index_add_(0, dst, msg)
        return out.flatten(1) + self.bias


@workload
def gnn_train():
    N, E, Fin, ncls = 3000, 20000, 64, 10
    x = torch.randn(N, Fin, device=DEV)
    ei = torch.randint(0, N, (2, E), device=DEV)
    loops = torch.arange(N, device=DEV)
    src, dst = torch.cat([ei[0], loops]), torch.cat([ei[1], loops])
    y = torch.randint(0, ncls, (N,), device=DEV)
    train_mask = torch.rand(N, device=DEV) < 0.3
    g1, gat, g2 = GCNConv(Fin, 64).to(DEV), GATConv(64, 16).to(DEV), GCNConv(64, ncls).to(DEV)

    def loss_fn(x, src, dst, y, train_mask):
        h = F.dropout(F.relu(g1(x, src, dst)), 0.5, True)
        h = F.elu(gat(h, src, dst))
        out = g2(h, src, dst)
        lp = F.log_softmax(out, -1)
        loss = -(lp.gather(1, y[:, None]).squeeze(1) * train_mask).sum() / train_mask.sum()
        return loss

    return train_step(loss_fn, (x, src, dst, y, train_mask), m=nn.ModuleList([g1, gat, g2]))


# ====================================================================================================
# 13. MoE layer with top-k router (Mixtral-style dispatch via sort), training
# ====================================================================================================
class MoE(nn.Module):
    def __init__(self, d=256, ffn=384, E=8, k=2):
        super().__init__()
        self.E, self.k = E, k
        self.gate = nn.Linear(d, E, bias=False)
        self.w1 = nn.Parameter(torch.randn(E, ffn, d) * 0.02)
        self.w3 = nn.Parameter(torch.randn(E, ffn, d) * 0.02)
        self.w2 = nn.Parameter(torch.randn(E, d, ffn) * 0.02)
        self.norm = RMSNorm(d)

    def forward(self, x):
        B, T, D = x.shape
        h = self.norm(x).view(-1, D)
        logits = self.gate(h)
        rw = F.softmax(logits, dim=1, dtype=torch.float)
        rw, sel = torch.topk(rw, self.k, dim=-1)
        rw = (rw / rw.sum(-1, keepdim=True)).to(h.dtype)
        # dense-gather dispatch (gpt-fast / mixtral style): per-token expert weights gathered
        w1, w3, w2 = self.w1[sel], self.w3[sel], self.w2[sel]  # (N, k, ffn, d)
        x1 = F.silu(torch.einsum("ti,taoi->tao", h, w1))
        x3 = torch.einsum("ti,taoi->tao", h, w3)
        eo = torch.einsum("tao,taio->tai", x1 * x3, w2)
        out = torch.einsum("tai,ta->ti", eo, rw)
        # switch-style load-balancing loss and router z-loss
        mask = F.one_hot(sel, self.E).sum(1).float()
        frac = mask.mean(0)
        prob = F.softmax(logits.float(), -1).mean(0)
        aux = self.E * (frac * prob).sum()
        z = torch.logsumexp(logits.float(), -1).pow(2).mean()
        return x + out.view(B, T, D), aux, z


@workload
def moe_train():
    m = MoE().to(DEV).train()
    x = torch.randn(4, 64, 256, device=DEV)
    tgt = torch.randn(4, 64, 256, device=DEV)

    def loss_fn(x, tgt):
        with autocast():
            out, aux, z = m(x)
        loss = F.smooth_l1_loss(out.float(), tgt) + 0.01 * aux + 0.001 * z
        return loss

    return train_step(loss_fn, (x, tgt), m=m)


# ====================================================================================================
# 14. Whisper-like audio frontend: log-mel, conv1d stem, sinusoidal positions, encoder + decoder step
# ====================================================================================================
def sinusoids(length, channels, max_timescale=10000):
    inc = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], 1)


def mel_filters(n_mels=80, n_fft=400, sr=16000):
    fft_freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1)
    def mel(f):
        return 2595 * math.log10(1 + f / 700)

    mpts = torch.linspace(mel(0), mel(sr / 2), n_mels + 2)
    hz = 700 * (10 ** (mpts / 2595) - 1)
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for i in range(n_mels):
        lo, c, r = hz[i], hz[i + 1], hz[i + 2]
        fb[i] = torch.clamp(torch.minimum((fft_freqs - lo) / (c - lo), (r - fft_freqs) / (r - c)), min=0)
    return fb


class WhisperAttn(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d, bias=False), nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x, xa=None, causal=False):
        kv = x if xa is None else xa
        B, T, D = x.shape
        q = self.query(x).view(B, T, self.h, -1).transpose(1, 2)
        k = self.key(kv).view(B, kv.shape[1], self.h, -1).transpose(1, 2)
        v = self.value(kv).view(B, kv.shape[1], self.h, -1).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return self.out(o.transpose(1, 2).reshape(B, T, D))


class WhisperBlock(nn.Module):
    def __init__(self, d, h, cross=False):
        super().__init__()
        self.attn_ln, self.attn = nn.LayerNorm(d), WhisperAttn(d, h)
        self.cross = WhisperAttn(d, h) if cross else None
        self.cross_ln = nn.LayerNorm(d) if cross else None
        self.mlp_ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, xa=None, causal=False):
        x = x + self.attn(self.attn_ln(x), causal=causal)
        if self.cross is not None:
            x = x + self.cross(self.cross_ln(x), xa)
        return x + self.mlp(self.mlp_ln(x))


class Whisper(nn.Module):
    def __init__(self, n_mels=80, d=256, h=4, n_ctx=500, vocab=5000):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx // 2, d), persistent=False)
        self.register_buffer("mel", mel_filters(n_mels), persistent=False)
        self.enc = nn.ModuleList(WhisperBlock(d, h) for _ in range(2))
        self.ln_post = nn.LayerNorm(d)
        self.token_embedding = nn.Embedding(vocab, d)
        self.dec_pos = nn.Parameter(torch.randn(64, d) * 0.01)
        self.dec = nn.ModuleList(WhisperBlock(d, h, cross=True) for _ in range(2))
        self.ln = nn.LayerNorm(d)

    def log_mel(self, spec_ri):  # spec_ri: (B, 201, frames, 2) real/imag of the STFT
        with torch.autocast(DEV, enabled=False):
            mag = spec_ri[..., :-1, :].pow(2).sum(-1)
            mel = self.mel @ mag
            log_spec = torch.clamp(mel, min=1e-10).log10()
            log_spec = torch.maximum(log_spec, log_spec.amax(dim=(-2, -1), keepdim=True) - 8.0)
            return (log_spec + 4.0) / 4.0

    def forward(self, spec_ri, tokens):
        x = self.log_mel(spec_ri)
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = (x + self.positional_embedding[: x.shape[1]]).to(x.dtype)
        for b in self.enc:
            x = b(x)
        xa = self.ln_post(x)
        y = self.token_embedding(tokens) + self.dec_pos[: tokens.shape[1]]
        for b in self.dec:
            y = b(y, xa, causal=True)
        y = self.ln(y)
        return (y @ self.token_embedding.weight.to(y.dtype).T).float()


@workload
def whisper_infer():
    m = Whisper().to(DEV).eval()
    audio = torch.randn(4, 16000 * 5, device=DEV) * 0.1
    win = torch.hann_window(400, device=DEV)
    spec = torch.stft(audio, 400, 160, window=win, return_complex=True)
    spec_ri = torch.view_as_real(spec).contiguous()
    tokens = torch.randint(0, 5000, (4, 24), device=DEV)
    fc = compile_(m)

    def step():
        with torch.no_grad(), autocast(torch.float16):
            return fc(spec_ri, tokens).argmax(-1)

    return step


# ====================================================================================================
# 15. VAE with KL loss (conv encoder, reparameterisation, transposed-conv decoder, BCE)
# ====================================================================================================
class VAE(nn.Module):
    def __init__(self, z=32):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1), nn.BatchNorm2d(32), nn.LeakyReLU(0.2),
                                 nn.Conv2d(32, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
        self.fc_mu, self.fc_logvar = nn.Linear(64 * 7 * 7, z), nn.Linear(64 * 7 * 7, z)
        self.fc_dec = nn.Linear(z, 64 * 7 * 7)
        self.dec = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ELU(),
                                 nn.ConvTranspose2d(32, 1, 4, 2, 1))

    def forward(self, x):
        h = self.enc(x).flatten(1)
        mu, logvar = self.fc_mu(h), self.fc_logvar(h)
        std = torch.exp(0.5 * logvar)
        zz = mu + torch.randn_like(std) * std
        r = self.dec(F.relu(self.fc_dec(zz)).view(-1, 64, 7, 7))
        return torch.sigmoid(r), mu, logvar


@workload
def vae_train():
    m = VAE().to(DEV).train()
    x = torch.rand(64, 1, 28, 28, device=DEV)
    opt = torch.optim.Adam(m.parameters(), 1e-3)

    def loss_fn(x):
        recon, mu, logvar = m(x)
        bce = F.binary_cross_entropy(recon, x, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (bce + kld) / x.shape[0]
        return loss

    return train_step(loss_fn, (x,), opt=opt)


# ====================================================================================================
# 16. Compiled AdamW optimizer step (+ grad clipping), on a ViT's parameters
# ====================================================================================================
@workload
def adamw_compiled():
    m = ViT(depth=2).to(DEV)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3,
                            weight_decay=0.05, betas=(0.9, 0.95))
    for p in m.parameters():
        p.grad = torch.randn_like(p) * 1e-3

    @compile_
    def opt_step():
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    def step():
        opt_step()

    return step


if __name__ == "__main__":
    capture.main()
