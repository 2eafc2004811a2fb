"""env.json: an allowlist of variables, secrets redacted, versions and GPUs from torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocanalyze.collectors import environment
from rocanalyze.collectors.environment import REDACTED, nvidia_driver_version


def test_only_allowlisted_variables_are_recorded() -> None:
    env = {"PATH": "/usr/bin", "HOME": "/root", "HIP_FORCE_DEV_KERNARG": "1", "PYTORCH_TUNABLEOP_ENABLED": "1",
           "HSA_NO_SCRATCH_RECLAIM": "1", "NCCL_DEBUG": "INFO", "RCCL_MSCCL_ENABLE": "0",
           "HIP_VISIBLE_DEVICES": "0,1", "CUDA_VISIBLE_DEVICES": "3", "TORCHINDUCTOR_MAX_AUTOTUNE": "1",
           "AWS_SECRET_ACCESS_KEY": "abc", "HF_TOKEN": "hf_x", "GPU_MAX_HW_QUEUES": "2",
           "TORCH_BLAS_PREFER_HIPBLASLT": "1", "MIOPEN_FIND_MODE": "FAST", "TORCH_NCCL_HIGH_PRIORITY": "1"}
    assert environment.allowed_variables(env) == {
        "CUDA_VISIBLE_DEVICES": "3", "GPU_MAX_HW_QUEUES": "2", "HIP_FORCE_DEV_KERNARG": "1",
        "HIP_VISIBLE_DEVICES": "0,1", "HSA_NO_SCRATCH_RECLAIM": "1", "MIOPEN_FIND_MODE": "FAST",
        "NCCL_DEBUG": "INFO", "PYTORCH_TUNABLEOP_ENABLED": "1", "RCCL_MSCCL_ENABLE": "0",
        "TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCH_BLAS_PREFER_HIPBLASLT": "1", "TORCH_NCCL_HIGH_PRIORITY": "1"}


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("NCCL_IB_HCA", "mlx5_0,mlx5_1", "mlx5_0,mlx5_1"),
    ("TRITON_CACHE_DIR", "/scratch/users/alice/some/very/long/path/to/a/triton/cache/dir",
     "/scratch/users/alice/some/very/long/path/to/a/triton/cache/dir"),
    ("NCCL_AUTH_TOKEN", "x", REDACTED),                                   # the name says secret
    ("TRITON_REMOTE_CACHE", "https://bob:hunter2@cache.example.com/t", f"https://bob:{REDACTED}@cache.example.com/t"),
    ("TORCHINDUCTOR_FX_REMOTE", "ghp_" + "a1B2" * 9, REDACTED),         # a GitHub token as a value
    ("NCCL_SOMETHING", "hf_" + "Q" * 34, REDACTED),
    ("TRITON_X", "AKIAIOSFODNN7EXAMPLE", REDACTED),
    ("MIOPEN_USER_DB_PATH", "0123456789abcdef0123456789abcdef0123456789abcdef", REDACTED),
])
def test_redaction(name: str, value: str, expected: str) -> None:
    assert environment.redact(name, value) == expected


def test_sysctls_are_read_from_proc(tmp_path: Path) -> None:
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "numa_balancing").write_text("1\n")
    assert environment.read_sysctls(tmp_path) == {"kernel.numa_balancing": "1"}
    assert environment.read_sysctls(tmp_path / "absent") == {"kernel.numa_balancing": None}


def test_rocm_version_file(tmp_path: Path) -> None:
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.4.1-83\n")
    assert environment.rocm_version((str(tmp_path / "none"), str(tmp_path))) == "6.4.1-83"


def test_capture_with_cpu_torch() -> None:
    torch = pytest.importorskip("torch")
    env = environment.capture_environment({"HIP_FORCE_DEV_KERNARG": "1", "HOME": "/root"}, torch)
    assert env["variables"] == {"HIP_FORCE_DEV_KERNARG": "1"}
    facts = env["torch"]
    assert facts["version"] == torch.__version__
    assert facts["float32_matmul_precision"] in ("highest", "high", "medium")
    assert facts["gpu_available"] == torch.cuda.is_available()
    assert len(facts["gpus"]) == (torch.cuda.device_count() if facts["gpu_available"] else 0)
    assert set(env) == {"rocanalyze", "python", "platform", "torch", "triton", "rocm", "driver", "sysctl",
                        "variables"}


def test_versions_of_packages_not_imported() -> None:
    from importlib import metadata

    assert environment.module_version("json_no_such_module", ("pytest",)) == metadata.version("pytest")
    assert environment.module_version("no_such_module_xyz") is None


@pytest.mark.parametrize(("banner", "version"), [
    # the open kernel module (the lent H100/H200 run it): the word after "Module" is "for"
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  555.58.02  Release Build  "
     "(dvs-builder@U16-I3-B03-4-3)  Tue Jun 25 01:26:03 UTC 2024\nGCC version:  gcc version 14.2.1", "555.58.02"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (VirtualGPU)", "560.35.03"),
    # the proprietary module
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 19:21:56 UTC 2022\n"
     "GCC version:  gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)", "515.76"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  440.95.01  Thu May 28 07:03:08 UTC 2020", "440.95.01"),
])
def test_nvidia_driver_version_from_the_proc_banner(banner: str, version: str) -> None:
    assert nvidia_driver_version(banner) == version
