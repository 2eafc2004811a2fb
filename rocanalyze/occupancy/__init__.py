"""Occupancy of AMD GPU kernels: arch table, LLVM's rules, readers (AMDGCN, code objects, Triton), lint.

Public API for other modules:
  compute_occupancy(arch, *, vgpr, agpr=0, sgpr=None, lds_bytes=0, workgroup_size, ...) -> Occupancy
  read_kernels(path) -> list[KernelResources]
  analyze_kernel(KernelResources) -> Occupancy (with lint)
"""

from rocanalyze.occupancy.analyze import analyze_kernel
from rocanalyze.occupancy.arches import ArchSpec, get_arch, load_arches
from rocanalyze.occupancy.compute import Occupancy, compute_occupancy
from rocanalyze.occupancy.read import read_kernels, read_paths
from rocanalyze.occupancy.resources import KernelResources

__all__ = ["ArchSpec", "KernelResources", "Occupancy", "analyze_kernel", "compute_occupancy", "get_arch",
           "load_arches", "read_kernels", "read_paths"]
