"""Triton capture: names from real traces, cache entries matched by name, artifacts copied."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocanalyze.collectors import triton_cache
from rocanalyze.collectors.triton_occupancy import kernel_record, write_occupancy
from tests.conftest import realdata_path

GEMM = "_gemm_afp4_wfp4_kernel_preshuffled_scales"


def _cache_with_real_entry(tmp_path: Path) -> Path:
    """A Triton cache laid out as Triton lays it out (<key>/<name>.<ext>), holding real artifacts."""
    src = realdata_path("triton_ir", "aiter_gemm_afp4wfp4_gfx950")
    cache = tmp_path / "cache"
    old, new = cache / "OLDKEY", cache / "NEWKEY"
    for entry in (old, new):
        entry.mkdir(parents=True)
        for f in src.iterdir():
            shutil.copy(f, entry / f.name)
        (entry / f"__grp__{GEMM}.json").write_text("{}")
        (entry / "launcher.so").write_bytes(b"\x7fELF")
    os.utime(old / f"{GEMM}.json", (1_000_000, 1_000_000))
    (cache / "OTHER").mkdir()
    (cache / "OTHER" / "triton_poi_fused_add_0.json").write_text(json.dumps({"name": "triton_poi_fused_add_0"}))
    return cache


def test_cache_dir_default_and_env(tmp_path: Path) -> None:
    assert triton_cache.cache_dir({"TRITON_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert triton_cache.cache_dir({}) == Path.home() / ".triton" / "cache"


@pytest.mark.realdata
def test_finds_the_newest_entry_by_name_and_copies_only_artifacts(tmp_path: Path) -> None:
    cache = _cache_with_real_entry(tmp_path)
    [kernel] = triton_cache.find_in_cache({GEMM, "void at::native::elementwise_kernel<128, 4>"}, cache)
    assert (kernel.name, kernel.found_by, kernel.launched) == (GEMM, "cache", False)
    assert kernel.hash == "4111fc65100efdce1b7f6e4a8db4a177657a3c18a1446d19ed954cf405f9fe78"
    assert Path(kernel.files[f"{GEMM}.json"]).parent.name == "NEWKEY"
    assert kernel.metadata["shared"] == 156672 and kernel.metadata["num_warps"] == 4
    folders = triton_cache.copy_artifacts([kernel], tmp_path / "run" / "triton")
    copied = tmp_path / "run" / "triton" / folders[kernel.hash]
    assert folders[kernel.hash] == f"{GEMM}-4111fc65100e"
    assert sorted(p.name for p in copied.iterdir()) == [
        f"__grp__{GEMM}.json", f"{GEMM}.amdgcn", f"{GEMM}.json", f"{GEMM}.ttgir"]
    assert (copied / f"{GEMM}.amdgcn").read_bytes() == Path(kernel.files[f"{GEMM}.amdgcn"]).read_bytes()


@pytest.mark.realdata
def test_occupancy_json_for_a_real_amd_triton_kernel(tmp_path: Path) -> None:
    [kernel] = triton_cache.find_in_cache({GEMM}, _cache_with_real_entry(tmp_path))
    run = tmp_path / "run"
    folders = triton_cache.copy_artifacts([kernel], run / "triton")
    record = kernel_record(kernel, folders[kernel.hash])
    assert {k: record[k] for k in ("kernel", "backend", "arch", "num_warps", "warp_size", "shared_bytes",
                                   "folder")} == {
        "kernel": GEMM, "backend": "hip", "arch": "gfx950", "num_warps": 4, "warp_size": 64,
        "shared_bytes": 156672, "folder": f"triton/{GEMM}-4111fc65100e"}
    [entry] = json.loads(write_occupancy(run, [kernel], folders).read_text())
    # .amdhsa_next_free_vgpr 292 with accum_offset 140: 140 arch VGPRs + 152 AGPRs, 1 wave per SIMD
    assert {k: entry[k] for k in ("kernel", "arch", "vgpr", "agpr", "lds_bytes", "waves_per_simd", "limiter",
                                  "workgroup_size")} == {
        "kernel": GEMM, "arch": "gfx950", "vgpr": 140, "agpr": 152, "lds_bytes": 156672,
        "waves_per_simd": 1.0, "limiter": "vgpr", "workgroup_size": 256}
    assert entry["source"] == f"{GEMM}-4111fc65100e/{GEMM}.amdgcn" and "error" not in entry
    assert entry["triton"]["hash"] == kernel.hash


def test_occupancy_error_is_one_line(tmp_path: Path) -> None:
    kernel = triton_cache.TritonKernel("k", "abc", {}, metadata={"name": "k", "num_warps": 4, "shared": 0,
                                                                "target": {"backend": "hip", "arch": "gfx942",
                                                                           "warp_size": 64}})
    (tmp_path / "triton" / "k-abc").mkdir(parents=True)
    (tmp_path / "triton" / "k-abc" / "k.json").write_text(json.dumps(kernel.metadata))
    [entry] = json.loads(write_occupancy(tmp_path, [kernel], {"abc": "k-abc"}).read_text())
    assert entry["error"].endswith("Triton metadata JSON without its .amdgcn or .hsaco beside it "
                                   "(registers unknown)")


@pytest.mark.realdata
def test_kernel_names_from_a_real_compiled_trace() -> None:
    names = triton_cache.kernel_names_in_trace(
        realdata_path("torch_traces", "tracelens", "mi300x_torch_compile_triton.json.gz"))
    assert {"attn_fwd", "triton_poi_fused__unsafe_view_add_3", "triton_red_fused_add_mean_mul_pow_rsqrt_0"} <= names
    assert len(names) == 8
    assert triton_cache.kernel_names_in_trace(
        realdata_path("torch_traces", "hta", "nvidia_triton_example.json.gz")) == {"triton_poi_fused_add_cos_sin_0"}


@pytest.mark.realdata
def test_kernel_names_from_rocprofv3_csv() -> None:
    csv = realdata_path("rocprofv3", "rocprofiler_sdk_docs", "kernel_trace.v2025.csv")
    names = triton_cache.kernel_names_in_csv(csv)
    assert "divide_kernel(float*, float const*, float const*, int, int)" in names
    assert "void addition_kernel<float>(float*, float const*, float const*, int, int)" in names


def test_selects_what_ran() -> None:
    a = triton_cache.TritonKernel("k_a", "h1", {}, launched=True)
    b = triton_cache.TritonKernel("k_b", "h2", {}, launched=False)
    assert triton_cache.select_ran([a, b], None) == [a]
    assert triton_cache.select_ran([a, b], {"k_b"}) == [b]


def test_nothing_loaded_without_triton() -> None:
    # a fresh interpreter: in this worker other tests may already have imported triton
    code = ("import sys; from rocanalyze.collectors import triton_cache; "
            "print(triton_cache.loaded_kernels(), 'triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "False"]


def test_cuda_kernel_uses_the_drivers_register_count(tmp_path: Path) -> None:
    # metadata as Triton 3.x writes it for sm_90; n_regs as CompiledKernel._init_handles reads it from the driver
    meta = {"name": "triton_poi_fused_add_0", "num_warps": 4, "shared": 0,
            "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}
    kernel = triton_cache.TritonKernel("triton_poi_fused_add_0", "f00d", {}, metadata=meta, n_regs=26,
                                       launched=True)
    [entry] = json.loads(write_occupancy(tmp_path, [kernel], {"f00d": "k"}).read_text())
    # 128 threads x 26 regs -> 1024 regs/warp; 64 warps/SM allow 16 blocks, blocks cap 32, regs allow 16
    assert {k: entry[k] for k in ("arch", "blocks_per_sm", "warps_per_sm", "occupancy_pct", "registers",
                                  "workgroup_size")} == {
        "arch": "sm_90", "blocks_per_sm": 16, "warps_per_sm": 64, "occupancy_pct": 100.0, "registers": 26,
        "workgroup_size": 128}
    assert entry["registers_from"] == "driver"
    unloaded = triton_cache.TritonKernel("k2", "beef", {}, metadata=meta)
    [entry] = json.loads(write_occupancy(tmp_path, [unloaded], {"beef": "k2"}).read_text())
    assert entry["error"] == "register count unknown: the kernel was never loaded here and no cubin states it"


def _compile_for_gfx942(cache: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """A real Triton compile (no GPU needed: an explicit HIP target), into a fresh cache."""
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")
    from triton.backends.compiler import GPUTarget

    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")

    @triton.jit
    def scale_add(x, y, out, n, alpha, BLOCK: tl.constexpr):  # noqa: N803 (Triton's constexpr style)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, alpha * tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    src = triton.compiler.ASTSource(fn=scale_add, constexprs={"BLOCK": 1024}, signature={
        "x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "alpha": "fp32", "BLOCK": "constexpr"})
    return triton.compile(src, target=GPUTarget("hip", "gfx942", 64))


def test_live_compiled_kernels_name_their_cache_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _compile_for_gfx942(tmp_path / "cache", monkeypatch)
    found = [k for k in triton_cache.loaded_kernels() if k.hash == compiled.hash]
    assert len(found) == 1
    [kernel] = found
    assert (kernel.name, kernel.found_by, kernel.launched) == ("scale_add", "process", False)
    assert {"scale_add.json", "scale_add.amdgcn", "scale_add.hsaco", "scale_add.ttgir"} <= set(kernel.files)
    assert all(Path(p).parent.parent == tmp_path / "cache" for p in kernel.files.values())
    assert kernel.metadata["num_warps"] == 4 and kernel.metadata["target"]["arch"] == "gfx942"
    # as the trace would say it ran: copied, then occupancy from the real gfx942 ISA
    [ran] = triton_cache.select_ran(found, {"scale_add", "void at::native::vectorized_elementwise_kernel"})
    run = tmp_path / "run"
    folders = triton_cache.copy_artifacts([ran], run / "triton")
    [entry] = json.loads(write_occupancy(run, [ran], folders).read_text())
    assert "error" not in entry, entry
    assert (entry["kernel"], entry["arch"], entry["workgroup_size"], entry["wave_size"]) == (
        "scale_add", "gfx942", 256, 64)
    assert entry["vgpr"] > 0 and entry["waves_per_simd"] > 0 and entry["limiter"]
    copied = sorted(p.name for p in (run / "triton" / folders[ran.hash]).iterdir())
    assert copied == ["scale_add.amdgcn", "scale_add.hsaco", "scale_add.json", "scale_add.llir", "scale_add.source",
                      "scale_add.ttgir", "scale_add.ttir"]


def test_static_launcher_kernels_get_the_cache_entry_of_their_hash(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    compiled = _compile_for_gfx942(cache, monkeypatch)
    [entry] = list(cache.iterdir())
    decoy = cache / "DECOY"                      # a newer entry of the same name, another specialization
    shutil.copytree(entry, decoy)
    meta = json.loads((decoy / "scale_add.json").read_text())
    (decoy / "scale_add.json").write_text(json.dumps({**meta, "hash": "0" * 64}))
    os.utime(entry / "scale_add.json", (1_000_000, 1_000_000))
    # what Inductor's StaticallyLaunchedCudaKernel knows: name, hash, warps, shared, the driver's counts
    kernel = triton_cache.TritonKernel("scale_add", compiled.hash, {}, metadata={"name": "scale_add", "num_warps": 4,
                                                                                "shared": 0},
                                       n_regs=12, n_spills=0, launched=True, found_by="static-launcher")
    triton_cache.attach_cache_files([kernel], cache)
    assert Path(kernel.files["scale_add.amdgcn"]).parent == entry
    assert kernel.metadata["target"] == {"backend": "hip", "arch": "gfx942", "warp_size": 64}
    assert (kernel.n_regs, kernel.found_by) == (12, "static-launcher")
    assert triton_cache.find_in_cache({"scale_add"}, cache)[0].hash == "0" * 64     # by name alone: the newest
