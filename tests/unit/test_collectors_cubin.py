"""Registers from a cubin (EIATTR_REGCOUNT), checked against NVIDIA's cuobjdump on a real Triton compile."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from rocanalyze.collectors import triton_cache
from rocanalyze.collectors.cubin import EIATTR_REGCOUNT, EIFMT_SVAL, cubin_registers, nv_info_records
from rocanalyze.collectors.triton_occupancy import write_occupancy
from tests.conftest import data_path


def test_nv_info_records() -> None:
    # EIATTR_REGCOUNT for symbol 5 = 30 registers, then EIATTR_MIN_STACK_SIZE, then a 2-byte HVAL record
    data = bytes([0x04, 0x2F, 8, 0]) + (5).to_bytes(4, "little") + (30).to_bytes(4, "little") + \
        bytes([0x04, 0x12, 8, 0]) + (5).to_bytes(4, "little") + bytes(4) + bytes([0x03, 0x1B, 0xFF, 0x00])
    assert nv_info_records(data) == [(EIFMT_SVAL, EIATTR_REGCOUNT, data[4:12]), (EIFMT_SVAL, 0x12, data[16:24]),
                                     (0x03, 0x1B, b"\xff\x00")]


@pytest.fixture(scope="module")
def sm90_kernel(tmp_path_factory: pytest.TempPathFactory) -> object:
    """Triton compiles for sm_90 without a GPU (its bundled ptxas); skipped where that is unavailable."""
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")
    from triton.backends.compiler import GPUTarget

    mp = pytest.MonkeyPatch()
    mp.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")

    @triton.jit
    def softmax_row(x, out, n, BLOCK: tl.constexpr):  # noqa: N803 (Triton's constexpr style)
        offs = tl.arange(0, BLOCK)
        row = tl.load(x + tl.program_id(0) * n + offs, mask=offs < n, other=-float("inf"))
        e = tl.exp(row - tl.max(row, axis=0))
        tl.store(out + tl.program_id(0) * n + offs, e / tl.sum(e, axis=0), mask=offs < n)

    src = triton.compiler.ASTSource(fn=softmax_row, constexprs={"BLOCK": 2048},
                                    signature={"x": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"})
    try:
        kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    except Exception as err:  # no ptxas in this triton build
        pytest.skip(f"Triton cannot compile for sm_90 here: {err}")
    finally:
        mp.undo()
    return kernel


def test_registers_match_cuobjdump(sm90_kernel: object) -> None:
    cubin = Path(sm90_kernel.metadata_group["softmax_row.cubin"])
    regs = cubin_registers(cubin, "softmax_row")
    assert regs is not None and 8 <= regs <= 255
    assert cubin_registers(cubin, "other_kernel") is None
    tool = Path(__import__("triton").__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not tool.exists():
        pytest.skip("cuobjdump is not bundled with this Triton")
    usage = subprocess.run([str(tool), "-res-usage", str(cubin)], capture_output=True, text=True, check=True).stdout
    assert f"REG:{regs} " in usage and re.search(r"Function softmax_row:", usage)


def test_cache_only_cuda_kernel_gets_registers_from_its_cubin(sm90_kernel: object, tmp_path: Path) -> None:
    [kernel] = [k for k in triton_cache.loaded_kernels() if k.hash == sm90_kernel.hash]
    assert kernel.n_regs is None                       # never loaded on a device here
    folders = triton_cache.copy_artifacts([kernel], tmp_path / "triton")
    [entry] = json.loads(write_occupancy(tmp_path, [kernel], folders).read_text())
    regs = cubin_registers(Path(kernel.files["softmax_row.cubin"]), "softmax_row")
    assert (entry["registers"], entry["registers_from"], entry["arch"], entry["workgroup_size"]) == (
        regs, "cubin", "sm_90", 128)
    assert entry["shared_bytes"] == kernel.metadata["shared"] and entry["blocks_per_sm"] >= 1


def test_cubin_registers_equal_the_h100_drivers() -> None:
    """Eight Inductor Triton kernels captured by `rocanalyze profile` on an H100: the register count in each
    cubin equals what the CUDA driver reported for the loaded kernel (occupancy.json, registers_from=driver)."""
    run = data_path("e2e_gpu", "h100_20261121", "compiled")
    entries = json.loads((run / "occupancy.json").read_text())
    assert len(entries) == 8
    for entry in entries:
        assert entry["registers_from"] == "driver" and entry["triton"]["found_by"] == "static-launcher"
        cubin = run / "cubin" / (Path(entry["triton"]["folder"]).name + ".cubin")
        assert cubin_registers(cubin, entry["kernel"]) == entry["registers"], entry["kernel"]
