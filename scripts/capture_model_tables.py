"""Whole torch.profiler kernel tables of nine real model architectures (random weights) on the lent GPU:
the source of draw 17 in tests/data/classify/labeled_kernels_draws.tsv.gz (run by a helper on the H200,
torch 2.11, transformers 5.17). Needs transformers, torchvision, torchaudio and torch_geometric.

    OUT=outdir python scripts/capture_model_tables.py

Writes OUT/tables.json: per workload, [kernel name, calls, self device time] for every CUDA row of
key_averages(). The wav2vec2 workload failed in that run (its CTC arguments), so draw 17 has none of it.
"""

import os
import traceback

import torch
import torchaudio
import torchvision
import transformers as T
from _profile_tables import TableCapture

dev = "cuda"
cap = TableCapture(os.environ.get("OUT", "/tmp/o")).capture


# t1 Llama training bf16 AdamW (HF eager, sdpa)
cfg = T.LlamaConfig(
    vocab_size=32000,
    hidden_size=1024,
    intermediate_size=2816,
    num_hidden_layers=4,
    num_attention_heads=16,
    num_key_value_heads=4,
    attn_implementation="sdpa",
)
m = T.LlamaForCausalLM(cfg).to(dev, torch.bfloat16)
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
ids = torch.randint(0, 32000, (4, 512), device=dev)


def f1():
    loss = m(input_ids=ids, labels=ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    opt.zero_grad()


cap("t1_hf_llama_train_bf16", f1)
m = opt = None  # free GPU memory before the next workload
# t2 GPT-2 generate fp16 with KV cache
g = T.GPT2LMHeadModel(T.GPT2Config(n_layer=6)).to(dev, torch.float16).eval()
gi = torch.randint(0, 50257, (2, 64), device=dev)


def f2():
    with torch.no_grad():
        g.generate(gi, max_new_tokens=16, do_sample=True, top_k=50, top_p=0.9, pad_token_id=0)


cap("t2_hf_gpt2_generate_fp16", f2, 1, 1)
g = None  # free GPU memory before the next workload
# t3 ResNet-50 training AMP channels_last

r = torchvision.models.resnet50().to(dev).to(memory_format=torch.channels_last)
ro = torch.optim.SGD(r.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(32, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
y = torch.randint(0, 1000, (32,), device=dev)


def f3():
    with torch.autocast("cuda", torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(r(x), y)
    loss.backward()
    ro.step()
    ro.zero_grad()


cap("t3_resnet50_train_amp", f3)
r = ro = None  # free GPU memory before the next workload
# t4 ViT (HF) inference fp16 + Swin via torchvision
v = T.ViTForImageClassification(T.ViTConfig()).to(dev, torch.float16).eval()
vx = torch.randn(16, 3, 224, 224, device=dev, dtype=torch.float16)


def f4():
    with torch.no_grad():
        v(pixel_values=vx)


cap("t4_hf_vit_infer_fp16", f4)
v = None  # free GPU memory before the next workload
s = torchvision.models.swin_t().to(dev).eval()
sx = torch.randn(8, 3, 224, 224, device=dev)


def f4b():
    with torch.no_grad(), torch.autocast("cuda", torch.float16):
        s(sx)


cap("t5_swin_t_infer_amp", f4b)
s = None  # free GPU memory before the next workload
# t6 Whisper (speech) train step fp32 w/ tf32
torch.backends.cuda.matmul.allow_tf32 = True
w = T.WhisperForConditionalGeneration(
    T.WhisperConfig(
        encoder_layers=2, decoder_layers=2, d_model=384, encoder_attention_heads=6, decoder_attention_heads=6
    )
).to(dev)
wo = torch.optim.Adam(w.parameters(), lr=1e-4, fused=True)
feat = torch.randn(2, 80, 3000, device=dev)
lab = torch.randint(0, 50000, (2, 32), device=dev)


def f6():
    w(input_features=feat, labels=lab).loss.backward()
    wo.step()
    wo.zero_grad()


cap("t6_hf_whisper_train_fp32", f6)
w = wo = None  # free GPU memory before the next workload
# t7 wav2vec2 torchaudio + melspec

a = torchaudio.models.wav2vec2_base(aux_num_out=32).to(dev)
wav = torch.randn(4, 32000, device=dev)
mel = torchaudio.transforms.MelSpectrogram(16000).to(dev)
ctc = torch.nn.CTCLoss()


def f7():
    mel(wav)
    lp, ln = a(wav)
    lp = lp.log_softmax(-1).transpose(0, 1)
    ctc(lp, torch.randint(1, 32, (4, 20), device=dev), ln, torch.full((4,), 20, device=dev)).backward()


cap("t7_wav2vec2_ctc_train", f7)
a = None  # free GPU memory before the next workload
# t8 DLRM-style recsys training
E = torch.nn.EmbeddingBag(100000, 64, mode="sum", sparse=False).to(dev)
mlp = torch.nn.Sequential(torch.nn.Linear(64 * 9, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1)).to(dev)
bot = torch.nn.Sequential(torch.nn.Linear(13, 64), torch.nn.ReLU()).to(dev)
po = torch.optim.Adagrad(list(E.parameters()) + list(mlp.parameters()) + list(bot.parameters()))
dense = torch.randn(2048, 13, device=dev)
idx = torch.randint(0, 100000, (2048 * 8 * 4,), device=dev)
off = torch.arange(0, 2048 * 8 * 4, 4, device=dev)
lbl = torch.randint(0, 2, (2048, 1), device=dev).float()


def f8():
    sp = E(idx, off).view(2048, 8 * 64)
    z = torch.cat([bot(dense), sp], 1)
    torch.nn.functional.binary_cross_entropy_with_logits(mlp(z), lbl).backward()
    po.step()
    po.zero_grad()


cap("t8_dlrm_style_train", f8)
# t9 torch.compile Llama training
cfg2 = T.LlamaConfig(
    vocab_size=8000,
    hidden_size=512,
    intermediate_size=1408,
    num_hidden_layers=2,
    num_attention_heads=8,
    num_key_value_heads=8,
)
mc = T.LlamaForCausalLM(cfg2).to(dev)
oc = torch.optim.AdamW(mc.parameters(), fused=True)
cm = torch.compile(mc)
ci = torch.randint(0, 8000, (4, 256), device=dev)


def f9():
    with torch.autocast("cuda", torch.bfloat16):
        loss = cm(input_ids=ci, labels=ci).loss
    loss.backward()
    oc.step()
    oc.zero_grad()


cap("t9_compile_llama_train_amp", f9, 2, 2)
# t10 torch.compile GCN (torch_geometric)
try:
    from torch_geometric.nn import GCNConv

    class G(torch.nn.Module):
        def __init__(s):
            super().__init__()
            s.c1 = GCNConv(128, 256)
            s.c2 = GCNConv(256, 16)

        def forward(s, x, ei):
            return s.c2(torch.relu(s.c1(x, ei)), ei)

    gm = G().to(dev)
    go = torch.optim.Adam(gm.parameters())
    gx = torch.randn(20000, 128, device=dev)
    ei = torch.randint(0, 20000, (2, 200000), device=dev)
    gy = torch.randint(0, 16, (20000,), device=dev)

    def f10():
        torch.nn.functional.cross_entropy(gm(gx, ei), gy).backward()
        go.step()
        go.zero_grad()

    cap("t10_pyg_gcn_train", f10)
except Exception:
    traceback.print_exc()
print("done")
