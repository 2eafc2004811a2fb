"""Kernel classification: every rule example, the labeled real-name set, the known traps, name forms,
op context, and classify_table on real traces."""

from __future__ import annotations

import gzip
import re
import time
from collections import Counter
from functools import cache

import numpy as np
import pandas as pd
import pytest

from rocanalyze.analysis.classify import (
    CATEGORIES,
    classify_kernel,
    classify_table,
    clear_user_rules,
    demangle_lite,
    load_rules,
    match_rule,
    normalize_name,
    rules_digest,
    strip_arguments,
    use_rules_file,
)
from rocanalyze.analysis.demangle import available as demangle_available
from rocanalyze.analysis.demangle import demangle, outline
from rocanalyze.traces import read
from rocanalyze.traces.schema import GPU_COLUMNS, OP_COLUMNS, EventTable, make_frame
from tests.conftest import data_path, realdata_path

EXAMPLES = [(rule.index, rule.category, name, op) for rule in load_rules() for name, op in rule.examples]


@pytest.mark.parametrize(("index", "category", "name", "op"), EXAMPLES,
                         ids=[f"r{i}-{c}-{n[:40]}" for i, c, n, _ in EXAMPLES])
def test_rule_example_is_matched_by_its_own_rule(index: int, category: str, name: str, op: str | None) -> None:
    rule = match_rule(name, op)
    assert rule is not None and rule.index == index, f"matched by rule {rule and rule.index}: {rule and rule.family}"
    assert classify_kernel(name, op) == category


def test_every_rule_has_examples_and_a_source() -> None:
    for rule in load_rules():
        assert rule.examples, rule.family
        assert rule.source, rule.family
        assert rule.category in CATEGORIES


LABELED = "labeled_kernels.tsv.gz"            # 1,000 names: realdata traces, captures, public profiles
DRAWS = "labeled_kernels_draws.tsv.gz"       # 20,679 names drawn in forty-four rounds, each labeled before its fixes


@cache  # read once per test process: the trap tests alone ask for both files 27 times
def _labeled(filename: str = LABELED) -> tuple[tuple[str, str, str], ...]:
    rows = []
    with gzip.open(data_path("classify", filename), "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        if line and not line.startswith("#"):
            category, name, source = line.split("\t")
            rows.append((category, name, source))
    return tuple(rows)


# (file, minimum rows, minimum accuracy): the draws hold user kernels whose names say nothing
# (`add_func`, `NormKernel1`) and truncated ATen copies that may or may not cast, so their bar is lower
LABELED_SETS = [(LABELED, 600, 0.985), (DRAWS, 500, 0.96)]
# most misses one category may hold, as a share of its labeled names. Inductor names the zero fill before a
# scatter after the scatter (`triton_poi_fused_new_zeros_scatter_add_1` is the fill, `_2` the scatter); of the
# labeled pointwise names with both a zero word and a scatter word, 70 are scatters and 34 fills, so the rules
# answer `index`, and 41 of the 59 memset misses are such fills
MISS_SHARE = {"memset": 0.20}


@pytest.mark.parametrize(("filename", "min_rows", "_min_accuracy"), LABELED_SETS)
def test_labeled_set_is_large_diverse_and_sourced(filename: str, min_rows: int, _min_accuracy: float) -> None:
    rows = _labeled(filename)
    assert len(rows) >= min_rows
    assert len({name for _, name, _ in rows}) == len(rows)
    assert {c for c, _, _ in rows} == set(CATEGORIES)
    assert all(source.strip() for _, _, source in rows)


def test_labeled_sets_do_not_overlap() -> None:
    first = {name for _, name, _ in _labeled(LABELED)}
    assert not first & {name for _, name, _ in _labeled(DRAWS)}


@pytest.mark.parametrize(("filename", "_min_rows", "min_accuracy"), LABELED_SETS)
def test_accuracy_on_the_labeled_set(filename: str, _min_rows: int, min_accuracy: float) -> None:
    rows = _labeled(filename)
    wrong = [(c, classify_kernel(n), n[:120]) for c, n, _ in rows if classify_kernel(n) != c]
    accuracy = 1 - len(wrong) / len(rows)
    # when written: 996/1000 and 19980/20679 (96.6%; 17544/18169 before the 2,044 blind names of draws 39-42)
    assert accuracy >= min_accuracy, f"accuracy {accuracy:.4f}; misclassified: {wrong}"
    per_category = Counter(c for c, _, _ in rows)
    misses = Counter(c for c, _, _ in wrong)
    for category, total in per_category.items():
        assert misses[category] / total <= MISS_SHARE.get(category, 0.15), (category, misses[category], total)


def _tsv_rows(filename: str) -> list[list[str]]:
    """The tab-separated rows of a gzipped file in tests/data/classify, comment lines left out."""
    with gzip.open(data_path("classify", filename), "rt", encoding="utf-8") as fh:
        return [line.split("\t") for line in fh.read().splitlines() if line and not line.startswith("#")]


def test_agreement_with_a_second_labeler() -> None:
    """Round 43: 800 labeled names labeled again by helpers who saw only the names and issue 4's category text,
    with a third deciding where labels or rules differed (tests/data/classify/README.md). A held-out set is
    labeled by someone else: the rules must agree with the adjudicated labels, not only with ours."""
    # columns: adjudicated, confidence, second labeler, ours before the round, group, name
    rows = [(r[0], r[2], r[4], r[5]) for r in _tsv_rows("second_labeler_round43.tsv.gz")]
    assert len(rows) == 800 and {g for _, _, g, _ in rows} == {"first", "whole", "rest"}
    got = {name: classify_kernel(name) for _, _, _, name in rows}
    agree = {group: [got[n] == a for a, _, g, n in rows if g == group] for group in ("first", "whole", "rest")}
    share = {group: sum(v) / len(v) for group, v in agree.items()}
    # when written: realdata names 259/260, whole-table names 333/340, the rest 190/200; the second labeler's own
    # first labels, unadjudicated, 754/800
    assert share["first"] >= 0.99 and share["whole"] >= 0.97 and share["rest"] >= 0.93, share
    assert sum(got[n] == second for _, second, _, n in rows) >= 0.935 * len(rows)


def test_agreement_on_fresh_workload_tables_labeled_by_others() -> None:
    """Round 44: every distinct kernel name of 25 workloads no earlier capture ran, labeled by helpers from issue 4's
    text alone, disagreements with the rules adjudicated by another. Blind, before the round's fixes, the rules agreed
    with the adjudicated labels on 1,147 of 1,189 (96.5%; fresh names 95.1%), with the first labels on 95.0%."""
    # columns: adjudicated, confidence, first label, group, workload, name
    rows = [(r[0], r[2], r[3], r[5]) for r in _tsv_rows("second_labeler_round44.tsv.gz")]
    assert len(rows) == 1189 and {g for *_, g, _ in rows} == {"known", "fresh"}
    right = [classify_kernel(name) == adjudicated for adjudicated, _, _, name in rows]
    fresh = [ok for ok, (_, _, group, _) in zip(right, rows, strict=True) if group == "fresh"]
    # when written, after the fixes: 1,169/1,189 (98.3%), fresh names 454/466
    assert sum(right) >= 0.975 * len(rows) and sum(fresh) >= 0.965 * len(fresh)


def test_agreement_on_rocm_symbols_labeled_by_another() -> None:
    """Round 45: kernel symbols a PyTorch training job loaded on an MI350X (ATen HIP, Tensile/hipBLASLt, rocPRIM,
    RCCL/MSCCL, ROCclr blits), at most 30 per category and one per family, labeled by a helper from issue 4's text
    alone. When written: 256 of 258 agreed; the two others are ATen's embedding `renorm_kernel` (norm here, the
    helper's index)."""
    rows = _tsv_rows("second_labeler_round45_rocm.tsv.gz")
    assert len(rows) == 258 and len({c for c, _ in rows}) >= 10
    assert sum(classify_kernel(name) == label for label, name in rows) >= 0.98 * len(rows)


# ops of the H200 op zoo capture and the category their own compute kernels have
ZOO_OPS = {"aten::mm": "gemm", "aten::addmm": "gemm", "aten::bmm": "gemm", "aten::baddbmm": "gemm",
           "aten::cudnn_convolution": "conv", "aten::_softmax": "softmax", "aten::_log_softmax": "softmax",
           "aten::native_layer_norm": "norm", "aten::native_group_norm": "norm", "aten::native_batch_norm": "norm",
           "aten::cudnn_batch_norm": "norm", "aten::fill_": "memset", "aten::zero_": "memset", "aten::sort": "sort",
           "aten::cumsum": "sort", "aten::index_select": "index", "aten::embedding": "index", "aten::sum": "reduction",
           "aten::mean": "reduction", "aten::max_pool2d_with_indices": "reduction"}


def test_op_zoo_kernels_take_their_ops_category_unless_they_move_data() -> None:
    # Real (kernel, launching op) pairs from one call per PyTorch op on an H200 (scripts/capture_op_zoo.py).
    # Classified by name alone, each compute kernel gets its op's category; the op's data-movement helpers
    # (cuDNN layout transposes, memsets, a copy before cuBLAS, a sparse index conversion) keep their own.
    with gzip.open(data_path("classify", "op_zoo_h200", "op_zoo.tsv.gz"), "rt", encoding="utf-8") as fh:
        pairs = [line.split("\t")[:2] for line in fh.read().splitlines() if line and not line.startswith("#")]
    checked = [(name, op) for name, op in pairs if op in ZOO_OPS]
    assert len(checked) >= 100
    off = [(op, classify_kernel(name), name[:100]) for name, op in checked if classify_kernel(name) != ZOO_OPS[op]]
    assert {got for _, got, _ in off} <= {"memcpy", "memset", "index"}, off
    assert len(off) <= 12, off


TRAPS = [
    # (marker in real labeled names, a regex, and the category every such name must get)
    ("gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda", "memcpy"),  # same-dtype copy
    ("LoadWithCast<1>, at::native::memory::StoreWithCast<1>", "elementwise"),   # dtype-changing copy
    ("bfloat16_copy_kernel_cuda", "elementwise"),
    ("FillFunctor", "memset"),
    ("^(?!triton_(tem|poi)).*native_layer_norm", "norm"),  # triton_per/red_fused_..._native_layer_norm
    # a pointwise kernel named after a norm is its scale-and-shift step (a gather or a pool when it says so)
    ("^triton_poi_fused(?!.*(embedding|index|pool)).*(native_layer_norm|batch_norm|group_norm)", "elementwise"),
    ("^triton_tem_fused_\\w*addmm", "gemm"),        # a GEMM template whose epilogue feeds a layer norm
    ("^(?!triton_poi).*add_mean_mul_pow_rsqrt", "norm"),  # RMSNorm written out, fused by inductor
    # inductor dtype conversion (not fused into a norm, an embedding, index math such as the clamped source
    # coordinates of an interpolation, or an im2col)
    ("triton_poi_fused__to_copy(?!.*(norm|rsqrt|index|arange|scatter|gather|embedding|im2col|clamp_(floor_)?sub_\\d+$))",
     "elementwise"),
    ("triton_poi_fused__to_copy_embedding", "index"),             # ... fused into an embedding lookup
    ("igemm_", "conv"),                              # MIOpen implicit GEMM convolutions
    ("^(?!.*maxpool::).*_implicit_gemm_", "conv"),   # cuDNN xmma implicit GEMM convolutions
    ("sparse::maxpool::(for|back)ward", "reduction"),  # spconv pooling: 'implicit_gemm' only names its index layout
    ("ms_deformable_(im2col|col2im)", "index"),      # deformable attention samples bilinearly: not an im2col conv
    ("splitKreduce", "gemm"),
    ("CatArrayBatchedCopy", "memcpy"),
    ("reshape_and_cache", "index"),                  # names say 'flash', still a KV-cache write
    ("rope_norm", "elementwise"),                    # RoPE, not a norm
    ("topkGating", "sort"),                          # MoE routing, not softmax
    ("FP8_quantize", "elementwise"),                 # fbgemm_gpu quantize: 'fbgemm' is not a GEMM
    ("kernel_grouped_conv_fwd", "conv"),             # CK grouped conv over a GridwiseGemm
    ("ClassNLLCriterion", "reduction"),              # updateOutput_kernel is not a put_kernel
    ("^(?!triton_tem_).*linalg_vector_norm", "reduction"),  # a vector norm, not a norm layer (nor a GEMM it feeds)
    ("fused_attn_rocm::(add|remove)_pad", "memcpy"), # TE padding copies in the fused-attention namespace
    ("cross_device_reduce", "communication"),        # custom all-reduce, not a reduction
    ("mbtopk::fill", "memset"),                      # a fill inside top-k
    ("quantize_mmq", "elementwise"),                 # quantize for a quantized matmul, not the matmul
    ("indexed_moe_mm", "gemm"),                      # 'indexed' MoE matmul, not an index op
]


@pytest.mark.parametrize(("marker", "category"), TRAPS, ids=[m for m, _ in TRAPS])
def test_traps(marker: str, category: str) -> None:
    names = [n for _, n, _ in _labeled() + _labeled(DRAWS) if re.search(marker, n)]
    assert names, marker
    assert {classify_kernel(n) for n in names} == {category}


def test_name_forms_agree() -> None:
    mangled = ("_ZN2at6native12_GLOBAL__N_135CatArrayBatchedCopy_alignedK_contigINS1_10OpaqueTypeILj8EEEjLi3ELi128ELi1"
               "ELi16EEEvPT_NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_")
    assert demangle_lite(mangled) == ("at native _GLOBAL__N_1 CatArrayBatchedCopy_alignedK_contig OpaqueType "
                                      "CatArrInputTensorMetadata TensorSizeStride")
    assert classify_kernel(mangled) == classify_kernel(mangled + ".kd") == "memcpy"
    add = "vector_add(float*, float*, float*, int)"
    assert normalize_name(add + " [clone .kd]") == add
    fmla = "void kn_get_mla_metadata<FlashMlaKernelTrait<576, 512, 64, 16, 4>>(int*, int*, int const*, int, int)"
    assert normalize_name(fmla + " (.kd)") == fmla
    assert strip_arguments(fmla) == "void kn_get_mla_metadata<FlashMlaKernelTrait<576, 512, 64, 16, 4>>"
    # Triton before 3.0 appended the argument specialisation; a name merely ending in a digit and 'd' keeps it
    assert normalize_name("triton_poi_fused_clone_1_0d1d2") == "triton_poi_fused_clone_1"
    assert normalize_name("original_kernel_0d1d2d3de4de5de6de7c8de9c10de11c") == "original_kernel"
    assert normalize_name("triton_scale_swizzle_per_group_3d") == "triton_scale_swizzle_per_group_3d"
    assert classify_kernel("triton_poi_fused_clone_1_0d1d2") == classify_kernel("triton_poi_fused_clone_1") == "memcpy"
    # nsys prints templates with casts and T1 placeholders; rocprof truncates to the bare function name
    assert classify_kernel("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, "
                           "std::array<char *, (unsigned long)3>>(int, T2, T3)") == "elementwise"
    assert classify_kernel("reduce_kernel") == "reduction"
    assert classify_kernel("updtrcjip_kernel") == "other"  # a user kernel whose name says nothing


def test_cut_mark_is_not_part_of_the_name() -> None:
    # torch.profiler's key_averages table cuts names at 55 columns and ends them with '...'; other tables use '…'
    cut = "void at::native::reduce_kernel<512, 1, at::nat"
    assert normalize_name(cut + "...") == cut
    assert normalize_name("_fwd_kernel.kd…") == "_fwd_kernel"
    names = [(label, n) for label, n, _ in _labeled() + _labeled(DRAWS) if classify_kernel(n) == label]
    assert len(names) > 18000
    assert [n for label, n in names if classify_kernel(n + "...") != label or classify_kernel(n + " …") != label] == []


SYMBOL_FORMS = "symbol_forms.tsv.gz"  # 2,193 mangled kernel symbols from ROCm and CUDA binaries, with c++filt's output


def _symbol_forms() -> list[list[str]]:
    with gzip.open(data_path("classify", SYMBOL_FORMS), "rt") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]


@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_demangle_prints_what_cxxfilt_prints() -> None:
    rows = _symbol_forms()
    assert len(rows) > 2000 and len({r[2] for r in rows}) >= 10  # ROCm code objects and CUDA cubins of 13 binaries
    assert [r[1] for r in rows if demangle(r[0]) != r[1]] == []
    assert demangle("_ZN5aiter19fmha_fwd_hd128_bf16E") == "aiter::fmha_fwd_hd128_bf16"  # an aiter asm kernel's symbol
    assert demangle("_ZN11onnxruntime4rocm10Fill") is None  # cut short by a profiler
    assert demangle("vector_add") is None
    # nvprof's form of a static kernel (XGC's Cabana particle push on Summit): nvcc's file prefix, then the symbol
    static = ("__nv_static_59__46_tmpxft_0001d062_00000000_6_cabana_code_cpp1_ii_a54055bf__ZN6Kokkos4Impl33cuda_"
              "parallel_launch_local_memoryINS0_11ParallelForIZ13particle_pushEUliE_NS_11RangePolicyIJNS_4CudaEEEES5_EEEEvT_")
    assert demangle(static).startswith("void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<"
                                       "particle_push::{lambda(int)#1}, Kokkos::RangePolicy<Kokkos::Cuda>")


@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_category_does_not_depend_on_the_form_of_the_name() -> None:
    """A profiler may show a kernel mangled, demangled with its parameters, or cut to its name (rocprof
    truncation); the category must be the same. Before symbols were demangled in full, 5.3% of 26,855
    real symbols changed category with the form."""
    rows = _symbol_forms()
    by_form = [(classify_kernel(m), classify_kernel(d), classify_kernel(strip_arguments(d)), d[:120])
               for m, d, _ in rows]
    changed = [forms for forms in by_form if len(set(forms[:3])) > 1]
    assert changed == []


@pytest.mark.realdata
@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_mangled_names_in_real_rocm_traces_demangle() -> None:
    """The mangled kernel names that ROCm traces record (aiter, CK, sgl-kernel, RCCL code objects) all
    demangle, std::bfloat16_t (DF16b) included, which libstdc++ 12 does not know. The few that do not are
    CK kernels nested deeper than the demangler's recursion limit (binutils c++filt 2.40 prints them only
    with --no-recurse-limit) and newer manglings (`Tn` template parameters); they classify by their
    identifiers and are shown by their outline (test below)."""
    names: set[str] = set()
    for parts in (("rocprofv3", "tracelens_mi350x_aorta", "908_results.json.gz"),
                  ("torch_traces", "tracelens", "mi300x_sglang_qwen3-8b_decode.json.gz"),
                  ("torch_traces", "tracelens", "mi300x_resnet_act_checkpoint_train.json.gz")):
        with gzip.open(realdata_path(*parts), "rt") as f:
            names |= set(re.findall(r'"(_Z[^"]*)"', f.read()))
    failed = sorted(n for n in names if demangle(n) is None)
    assert len(names) > 4000
    assert len(failed) <= 6  # when written: 6 of 4,467
    assert all(classify_kernel(n) != "other" for n in failed)
    aiter_norm = ("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEE"
                  "vPT0_PT_PfS4_S4_S4_diiiiiiib")
    assert demangle(aiter_norm) == (
        "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 256, 16, true, false, true, 1>"
        "(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, "
        "int, int, int, int, int, int, int, bool)")


def test_outline_reads_the_head_cxxfilt_prints() -> None:
    """The outline (for display, where no demangler takes a symbol) is the qualified name and the head of
    the first template argument: for all 2,193 real symbols both are what c++filt prints, in that order."""
    rows = _symbol_forms()
    for mangled, text, _ in rows:
        shown = outline(mangled)
        head, _, argument = shown.partition("<")
        argument = argument.split("<")[0].removesuffix("…>").removesuffix("…")
        assert head in text and (not argument or f"{head}<{argument}" in text), (shown, text[:200])
    assert outline("_ZN11onnxruntime4rocm10Fill") is None and outline("vector_add") is None  # cut short; not mangled


@pytest.mark.realdata
def test_symbols_no_runtime_demangles_are_shown_by_their_outline() -> None:
    """CK's convolutions in the MI300X ResNet trace exceed the demangler's recursion limit, sgl-kernel's
    activation uses a `Tn` template parameter, cuDNN's CUTLASS convolution on the H100 is nested as deep;
    FlashMLA's ROCm port takes _Float16 (DF16_), which libstdc++ 12 does not know but now demangles."""
    from rocanalyze.analysis.kernels import display_name

    shown: dict[str, str] = {}
    for parts in (("torch_traces", "tracelens", "mi300x_resnet_act_checkpoint_train.json.gz"),
                  ("torch_traces", "tracelens", "mi300x_sglang_qwen3-8b_decode.json.gz"),
                  ("torch_traces", "hta", "nvidia_nccl_data.json.gz"),
                  ("torch_traces", "aiter_fmla", "mi308x_flash_mla_trace.json")):
        path = realdata_path(*parts)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            for name in set(re.findall(r'"name": ?"(_Z[^"]*)"', f.read())):
                shown[name] = display_name(name)
    assert all(shown.values())
    assert {v for k, v in shown.items() if demangle(k) is None} >= {
        "ck::tensor_operation::device::kernel_batched_gemm_xdlops_bwd_weight"
        "<ck::GridwiseGemm_bk0mk1_bk0nk1_mn_xdlops_bwd_weight<…>…>",
        "ck::tensor_operation::device::(anonymous namespace)::kernel_grouped_conv_fwd_xdl_cshuffle_v3"
        "<ck::GridwiseGemm_xdl_cshuffle_v3<…>…>",
        "sgl_hip::activation::act_and_mul_kernel<__hip_bfloat16…>",
        "cutlass_cudnn_train::Kernel<cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution<…>…>"}
    if demangle_available():
        assert "void flash_fwd_splitkv_mla_kernel<FlashMlaKernelTrait<576, 512, 16, 64, 4>, _Float16, float, true>" \
               "(FlashMlaFwdParams)" in shown.values()


def test_without_a_runtime_demangler_identifiers_still_classify() -> None:
    """Where no C++ runtime can be loaded, normalize_name falls back to a mangled name's identifiers."""
    rows = _symbol_forms()
    agree = sum(classify_kernel(demangle_lite(m)) == classify_kernel(d) for m, d, _ in rows) / len(rows)
    assert agree >= 0.92  # when written: 2,051 of 2,193 (93.5%)


def test_op_context_decides_for_bare_launcher_names() -> None:
    assert classify_kernel("vectorized_elementwise_kernel") == "elementwise"
    assert classify_kernel("vectorized_elementwise_kernel", "aten::fill_") == "memset"
    assert classify_kernel("elementwise_kernel_manual_unroll", "aten::copy_") == "memcpy"
    assert classify_kernel("unrolled_elementwise_kernel", "aten::copy_ (dtype change)") == "elementwise"
    assert classify_kernel("updtrcjip_kernel", "aten::mm") == "gemm"
    assert classify_kernel("updtrcjip_kernel", "aten::_scaled_dot_product_flash_attention") == "attention"
    # a recognised name wins over the op that launched it
    fill = next(n for c, n, _ in _labeled() if "FillFunctor<float>" in n)
    assert classify_kernel(fill, "aten::copy_") == "memset"


def _kineto(*parts: str) -> EventTable:
    return read(realdata_path(*parts))


@pytest.mark.realdata
def test_classify_table_on_a_real_trace_agrees_with_the_launching_ops() -> None:
    table = _kineto("torch_traces", "tracelens", "mi300x_bert-small_inference.json.gz")
    classify_table(table)
    gpu = table.gpu
    assert isinstance(gpu["category"].dtype, pd.CategoricalDtype)
    assert list(gpu["category"].cat.categories) == list(CATEGORIES)
    ops = table.ops["name"].astype(str).to_numpy()
    launcher = np.where(gpu["op_index"] >= 0, ops[gpu["op_index"].clip(lower=0)], "")
    by_op: dict[str, set[str]] = {}
    for op, cat in zip(launcher, gpu["category"].astype(str), strict=True):
        by_op.setdefault(op, set()).add(cat)
    assert by_op["aten::addmm"] == {"gemm"}
    assert by_op["aten::_flash_attention_forward"] == {"attention"}
    assert by_op["aten::native_layer_norm"] == {"norm"}
    assert by_op["aten::index_select"] == {"index"}
    assert by_op["aten::gelu"] == {"elementwise"}
    assert Counter(gpu["category"].astype(str))["gemm"] == 26  # 26 aten::addmm, one GEMM each


@pytest.mark.realdata
def test_classify_table_copy_engine_rows_take_their_kind() -> None:
    table = _kineto("torch_traces", "hta", "nvidia_alexnet_trace.json.gz")
    classify_table(table)
    kind, cat = table.gpu["kind"].astype(str), table.gpu["category"].astype(str)
    assert (kind == "memcpy").sum() > 0 and (kind == "memset").sum() > 0
    assert (cat[kind == "memcpy"] == "memcpy").all() and (cat[kind == "memset"] == "memset").all()
    kernels = table.gpu[kind == "kernel"]
    expected = [classify_kernel(n) for n in kernels["name"].astype(str)]
    assert list(kernels["category"].astype(str)) == expected


def test_classify_table_dtype_changing_copy_op() -> None:
    ops = make_frame(OP_COLUMNS, {"name": ["aten::copy_", "aten::copy_"],
                                  "dtypes": [["float", "c10::BFloat16"], ["float", "float"]]})
    names = ["unrolled_elementwise_kernel", "unrolled_elementwise_kernel", "Memcpy DtoD (Device -> Device)"]
    gpu = make_frame(GPU_COLUMNS, {"name": names, "op_index": [0, 1, -1], "kind": ["kernel", "kernel", "memcpy"]})
    table = EventTable.build(source_format="test", paths=[], gpu=gpu, ops=ops)
    classify_table(table)
    assert list(table.gpu["category"].astype(str)) == ["elementwise", "memcpy", "memcpy"]


def test_classify_table_two_million_events_well_under_a_second() -> None:
    names = [n for _, n, _ in _labeled()]
    rng = np.random.default_rng(0)
    n = 2_000_000
    picked = np.asarray(names, dtype=object)[rng.integers(0, len(names), n)]
    gpu = make_frame(GPU_COLUMNS, {"name": pd.Categorical(picked), "op_index": rng.integers(-1, 3, n)})
    ops = make_frame(OP_COLUMNS, {"name": ["aten::copy_", "aten::mm", "aten::add"]})
    table = EventTable.build(source_format="test", paths=[], gpu=gpu, ops=ops)
    classify_kernel.cache_clear()
    match_rule.cache_clear()
    start = time.perf_counter()
    classify_table(table)
    elapsed = time.perf_counter() - start
    # each distinct (name, launching op) pair is classified once, whatever the number of events
    pairs = len(set(zip(table.gpu["name"].astype(str), table.gpu["op_index"].clip(lower=-1), strict=True)))
    assert classify_kernel.cache_info().misses == pairs
    # ~0.5 s on the development machine; the bound leaves room for a loaded CI runner
    assert elapsed < 3.0, f"{elapsed:.2f} s for {n} events, {len(names)} distinct names x 4 op keys"
    assert (table.gpu["category"].astype(str) != "").all()


def test_a_users_rules_file_is_tried_before_the_built_in_rules(tmp_path) -> None:
    builtin = len(load_rules())
    name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"
    assert classify_kernel(name) == "elementwise" and classify_kernel("my_team_decode_step") == "other"
    rules = tmp_path / "ours.toml"
    rules.write_text("[[rule]]\ncategory = 'attention'\nfamily = 'our decode'\nname = ['^my_team_decode']\n"
                     "examples = ['my_team_decode_step']\n\n"
                     "[[rule]]\ncategory = 'memcpy'\nfamily = 'we call every ATen add a copy'\n"
                     "name = ['cudafunctor_add']\nexamples = ['CUDAFunctor_add<float>']\n")
    digest = rules_digest()
    try:
        assert use_rules_file(rules) == 2
        assert rules_digest() != digest    # analyses made with these rules say so (compare warns)
        assert len(load_rules()) == builtin + 2 and load_rules()[0].family == "our decode"
        assert classify_kernel("my_team_decode_step") == "attention"
        assert classify_kernel(name) == "memcpy"  # the user's rule wins over the built-in one
        assert classify_kernel("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NTN") == "gemm"  # the rest is unchanged
    finally:
        clear_user_rules()
    assert len(load_rules()) == builtin and classify_kernel(name) == "elementwise" and rules_digest() == digest


def test_category_words_inside_argument_types_do_not_decide() -> None:
    # torch's header-only accessors carry `HeaderOnlyIndexBoundsCheck`, k2 lambdas `std::unique_ptr`,
    # DALI kernels `...SampleDesc`: `[names].type_noise` drops them, so the kernel's own name decides
    noisy = [(c, n) for c, n, _ in _labeled(DRAWS)
             if re.search(r"HeaderOnlyIndexBoundsCheck|std::unique_ptr<|SampleDesc", n)]
    assert len(noisy) >= 10
    wrong = [(c, classify_kernel(n), n[:100]) for c, n in noisy if classify_kernel(n) != c]
    assert len(wrong) <= 2, wrong  # when written: 2 of 17 (a dtype-changing DALI slice and paste)
