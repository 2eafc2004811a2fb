"""Second round of whole torch.profiler kernel tables (random weights, configs only): BERT fp16 fine-tune,
T5 training, Mixtral MoE fwd+bwd, Qwen2/Gemma/Phi generate (greedy+beam), Llama eager fp32, torchvision
detection/segmentation/mobile convnets channels_last, GroupNorm UNet, LSTM/GRU LM, compile max-autotune.

    OUT=outdir python scripts/capture_model_tables2.py
"""

import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision as TV
import transformers as T
from _profile_tables import TableCapture

dev = "cuda"
tables = TableCapture(os.environ.get("OUT", "/tmp/o"), budget_s=float(os.environ.get("BUDGET", "300")))
cap = tables.capture


def run(tag, build, warm=2, iters=2):
    try:
        fn = build()
    except Exception:
        tables.failed(tag)
        return
    cap(tag, fn, warm, iters)


def b_bert():
    m = T.BertForSequenceClassification(T.BertConfig(num_hidden_layers=4, num_labels=3)).to(dev)
    o = torch.optim.AdamW(m.parameters(), lr=2e-5)
    sc = torch.amp.GradScaler()
    ids = torch.randint(0, 30522, (16, 128), device=dev)
    am = torch.ones_like(ids)
    am[:, 100:] = 0
    y = torch.randint(0, 3, (16,), device=dev)

    def f():
        with torch.autocast("cuda", torch.float16):
            loss = m(input_ids=ids, attention_mask=am, labels=y).loss
        sc.scale(loss).backward()
        sc.unscale_(o)
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        sc.step(o)
        sc.update()
        o.zero_grad()

    return f


run("w1_bert_finetune_fp16", b_bert)


def b_roberta():
    m = T.RobertaForTokenClassification(
        T.RobertaConfig(num_hidden_layers=2, num_labels=9, attn_implementation="eager")
    ).to(dev)
    o = torch.optim.AdamW(m.parameters(), lr=2e-5, foreach=False)
    ids = torch.randint(3, 50265, (8, 128), device=dev)
    y = torch.randint(0, 9, (8, 128), device=dev)

    def f():
        with torch.autocast("cuda", torch.float16):
            loss = m(input_ids=ids, labels=y).loss
        loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w2_roberta_tokcls_eager_amp", b_roberta)


def b_t5():
    m = T.T5ForConditionalGeneration(
        T.T5Config(d_model=512, d_ff=2048, num_layers=3, num_decoder_layers=3, num_heads=8)
    ).to(dev, torch.bfloat16)
    o = (
        torch.optim.Adafactor(m.parameters(), lr=1e-3)
        if hasattr(torch.optim, "Adafactor")
        else torch.optim.AdamW(m.parameters())
    )
    x = torch.randint(0, 32128, (8, 256), device=dev)
    y = torch.randint(0, 32128, (8, 64), device=dev)

    def f():
        m(input_ids=x, labels=y).loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w3_t5_train_bf16_adafactor", b_t5)


def b_mix():
    c = T.MixtralConfig(
        vocab_size=8000,
        hidden_size=512,
        intermediate_size=1024,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=2,
        num_local_experts=8,
        num_experts_per_tok=2,
        output_router_logits=True,
    )
    m = T.MixtralForCausalLM(c).to(dev, torch.bfloat16)
    ids = torch.randint(0, 8000, (4, 256), device=dev)

    def f():
        m(input_ids=ids, labels=ids).loss.backward()
        m.zero_grad()

    return f


run("w4_mixtral_moe_fwd_bwd_bf16", b_mix)


def b_qwen():
    c = T.Qwen2Config(
        vocab_size=16000,
        hidden_size=512,
        intermediate_size=1408,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=2,
    )
    m = T.Qwen2ForCausalLM(c).to(dev, torch.float16).eval()
    x = torch.randint(0, 16000, (2, 32), device=dev)

    def f():
        with torch.no_grad():
            m.generate(x, max_new_tokens=12, do_sample=False, pad_token_id=0)
            m.generate(x, max_new_tokens=8, num_beams=4, do_sample=False, pad_token_id=0, repetition_penalty=1.2)

    return f


run("w5_qwen2_generate_greedy_beam_fp16", b_qwen, 1, 1)


def b_gemma():
    c = T.GemmaConfig(
        vocab_size=16000,
        hidden_size=512,
        intermediate_size=1024,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=128,
    )
    m = T.GemmaForCausalLM(c).to(dev, torch.bfloat16).eval()
    c2 = T.PhiConfig(
        vocab_size=16000, hidden_size=512, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=8
    )
    p = T.PhiForCausalLM(c2).to(dev, torch.bfloat16).eval()
    x = torch.randint(0, 16000, (2, 32), device=dev)

    def f():
        with torch.no_grad():
            m.generate(x, max_new_tokens=8, do_sample=True, temperature=0.7, top_p=0.95, pad_token_id=0)
            p.generate(x, max_new_tokens=8, do_sample=True, top_k=20, min_p=0.05 if False else None, pad_token_id=0)

    return f


run("w6_gemma_phi_sample_bf16", b_gemma, 1, 1)


def b_llama_eager():
    torch.backends.cuda.matmul.allow_tf32 = False
    c = T.LlamaConfig(
        vocab_size=8000,
        hidden_size=512,
        intermediate_size=1408,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=8,
        attn_implementation="eager",
    )
    m = T.LlamaForCausalLM(c).to(dev)
    o = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
    ids = torch.randint(0, 8000, (4, 256), device=dev)

    def f():
        m(input_ids=ids, labels=ids).loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w7_llama_eager_fp32_train", b_llama_eager)


def b_frcnn():
    m = TV.models.detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5).to(dev).train()
    o = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    imgs = [torch.rand(3, 512, 512, device=dev) for _ in range(2)]
    tg = []
    for _ in range(2):
        xy = torch.rand(4, 2, device=dev) * 300
        wh = torch.rand(4, 2, device=dev) * 150 + 20
        tg.append({"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, 5, (4,), device=dev)})

    def f():
        loss = sum(m(imgs, tg).values())
        loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w8_fasterrcnn_train", b_frcnn, 1, 1)


def b_mrcnn_eval():
    m = TV.models.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5).to(dev).eval()
    imgs = [torch.rand(3, 400, 400, device=dev) for _ in range(2)]

    def f():
        with torch.no_grad():
            m(imgs)

    return f


run("w9_maskrcnn_eval", b_mrcnn_eval, 1, 1)


def b_deeplab():
    m = (
        TV.models.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=21, aux_loss=True)
        .to(dev)
        .to(memory_format=torch.channels_last)
    )
    o = torch.optim.SGD(m.parameters(), lr=0.01)
    x = torch.randn(4, 3, 256, 256, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 21, (4, 256, 256), device=dev)
    y[:, :8] = 255

    def f():
        with torch.autocast("cuda", torch.float16):
            out = m(x)
            loss = F.cross_entropy(out["out"], y, ignore_index=255) + 0.4 * F.cross_entropy(
                out["aux"], y, ignore_index=255
            )
        loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w10_deeplabv3_train_amp_cl", b_deeplab)


def b_mobile():
    ms = [TV.models.efficientnet_b0(), TV.models.mobilenet_v3_small(), TV.models.convnext_tiny()]
    ms = [mm.to(dev).to(memory_format=torch.channels_last) for mm in ms]
    o = torch.optim.RMSprop([p for mm in ms for p in mm.parameters()], lr=1e-3)
    x = torch.randn(16, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (16,), device=dev)

    def f():
        with torch.autocast("cuda", torch.bfloat16):
            loss = sum(F.cross_entropy(mm(x), y, label_smoothing=0.1) for mm in ms)
        loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w11_effnet_mbv3_convnext_train_cl", b_mobile)


class Blk(nn.Module):
    def __init__(s, i, o):
        super().__init__()
        s.n1 = nn.GroupNorm(8, i)
        s.c1 = nn.Conv2d(i, o, 3, padding=1)
        s.n2 = nn.GroupNorm(8, o)
        s.c2 = nn.Conv2d(o, o, 3, padding=1)
        s.sk = nn.Conv2d(i, o, 1) if i != o else nn.Identity()

    def forward(s, x):
        h = s.c1(F.silu(s.n1(x)))
        h = s.c2(F.dropout(F.silu(s.n2(h)), 0.1, s.training))
        return h + s.sk(x)


class UNet(nn.Module):
    def __init__(s):
        super().__init__()
        s.i = nn.Conv2d(4, 64, 3, padding=1)
        s.d1 = Blk(64, 64)
        s.d2 = Blk(64, 128)
        s.m = Blk(128, 128)
        s.u2 = Blk(256, 64)
        s.u1 = Blk(128, 64)
        s.o = nn.ConvTranspose2d(64, 4, 4, 2, 1)
        s.pool = nn.AvgPool2d(2)
        s.att = nn.MultiheadAttention(128, 4, batch_first=True)

    def forward(s, x):
        h0 = s.d1(s.i(x))
        h1 = s.d2(s.pool(h0))
        h = s.m(F.max_pool2d(h1, 2))
        b, c, hh, ww = h.shape
        t = h.flatten(2).transpose(1, 2)
        t = s.att(t, t, t)[0]
        h = h + t.transpose(1, 2).reshape(b, c, hh, ww)
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        h = s.u2(torch.cat([h, h1], 1))
        h = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)
        h = s.u1(torch.cat([h, h0], 1))
        return s.o(h)


def b_unet():
    m = UNet().to(dev)
    o = torch.optim.AdamW(m.parameters(), fused=True)
    x = torch.randn(8, 4, 64, 64, device=dev)

    def f():
        with torch.autocast("cuda", torch.bfloat16):
            loss = F.mse_loss(m(x), torch.randn(8, 4, 128, 128, device=dev)) + F.smooth_l1_loss(
                m(x), torch.zeros(8, 4, 128, 128, device=dev)
            )
        loss.backward()
        o.step()
        o.zero_grad()

    return f


run("w12_unet_groupnorm_train_bf16", b_unet)


class RNNLM(nn.Module):
    def __init__(s):
        super().__init__()
        s.e = nn.Embedding(10000, 256)
        s.loss = nn.LSTM(256, 512, 2, batch_first=True, dropout=0.2)
        s.g = nn.GRU(512, 256, 1, batch_first=True, bidirectional=True)
        s.h = nn.Linear(512, 10000)

    def forward(s, x):
        return s.h(s.g(s.l(s.e(x))[0])[0])


def b_rnn():
    m = RNNLM().to(dev)
    o = torch.optim.Adam(m.parameters(), foreach=True)
    x = torch.randint(0, 10000, (16, 64), device=dev)

    def f():
        lo = m(x)
        loss = F.nll_loss(F.log_softmax(lo, -1).view(-1, 10000), x.view(-1))
        loss.backward()
        nn.utils.clip_grad_value_(m.parameters(), 1.0)
        o.step()
        o.zero_grad()

    return f


run("w13_lstm_gru_lm_train_fp32", b_rnn)


def b_misc():
    # a few ops that real pipelines use: ctc loss, embedding_bag max, cumsum, topk, sort, nonzero, kl_div,
    # gelu tanh, layer norm bwd
    ctc = nn.CTCLoss()
    lp = torch.randn(50, 8, 32, device=dev, requires_grad=True)

    def f():
        loss = ctc(
            lp.log_softmax(-1),
            torch.randint(1, 32, (8, 20), device=dev),
            torch.full((8,), 50, device=dev),
            torch.full((8,), 20, device=dev),
        )
        loss.backward()
        a = torch.randn(4096, 1000, device=dev)
        torch.topk(a, 10)
        a.cumsum(1)
        a.sort(1)
        (a > 2).nonzero()
        torch.multinomial(a.softmax(-1), 4)
        F.kl_div(a.log_softmax(-1), a.softmax(-1), reduction="batchmean")
        torch.unique(a.long() % 100)
        torch.bucketize(a, torch.linspace(-2, 2, 10, device=dev))
        torch.histc(a, 50)
        a.median(1)
        a.kthvalue(3, 1)

    return f


run("w14_misc_ops", b_misc)


def b_compile():
    class Blk2(nn.Module):
        def __init__(s):
            super().__init__()
            s.ln = nn.LayerNorm(512)
            s.q = nn.Linear(512, 1536)
            s.o = nn.Linear(512, 512)
            s.ln2 = nn.LayerNorm(512)
            s.f1 = nn.Linear(512, 2048)
            s.f2 = nn.Linear(2048, 512)

        def forward(s, x):
            b, t, c = x.shape
            q, k, v = s.q(s.ln(x)).view(b, t, 3, 8, 64).permute(2, 0, 3, 1, 4)
            x = x + s.o(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c))
            return x + s.f2(F.gelu(s.f1(s.ln2(x)), approximate="tanh"))

    m = nn.Sequential(Blk2(), Blk2()).to(dev, torch.bfloat16)
    cm = torch.compile(m, mode="max-autotune-no-cudagraphs")
    o = torch.optim.AdamW(m.parameters(), fused=True)
    x = torch.randn(8, 256, 512, device=dev, dtype=torch.bfloat16)

    def f():
        cm(x).float().pow(2).mean().backward()
        o.step()
        o.zero_grad()

    return f


run("w15_compile_maxautotune_transformer_bf16", b_compile, 2, 2)
print("done", round(time.time() - tables.start, 1))
