"""rocanalyze: where GPU time goes in PyTorch/Triton workloads on AMD ROCm (and NVIDIA), and why.

Public API (imported lazily so `import rocanalyze` stays cheap inside a profiled script):
  analyze(path) -> Analysis        read any supported trace or run folder and analyze it
  classify_kernel(name, op=None)   the category of one GPU kernel
  use_rules_file(path)             add your own kernel-classification rules, tried before the built-in ones
  step()                           mark a training/inference step boundary while profiling
"""

from __future__ import annotations

from typing import Any

from rocanalyze._version import __version__

__all__ = ["__version__", "analyze", "classify_kernel", "use_rules_file", "step", "Analysis"]

_LAZY = {
    "analyze": ("rocanalyze.analysis.build", "analyze"),
    "classify_kernel": ("rocanalyze.analysis.classify", "classify_kernel"),
    "use_rules_file": ("rocanalyze.analysis.classify", "use_rules_file"),
    "step": ("rocanalyze.collectors.markers", "step"),
    "Analysis": ("rocanalyze.analysis.result", "Analysis"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'rocanalyze' has no attribute {name!r}")
