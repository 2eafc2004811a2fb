"""`rocanalyze occupancy`: waves per SIMD of AMD GPU kernels, what limits them, and what buys more."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from rocanalyze.errors import UserError
from rocanalyze.occupancy import analyze_kernel, compute_occupancy, get_arch, read_paths
from rocanalyze.occupancy.compute import check_what_if
from rocanalyze.occupancy.render import render_json, render_markdown, render_table


def command(
    paths: list[Path] = typer.Argument(None, help="Kernel files or directories (walked)."),
    arch: str = typer.Option(None, "--arch", help="gfx target, e.g. gfx942 (what-if, or for bare counts)."),
    vgpr: int = typer.Option(None, "--vgpr", help="Arch VGPRs per lane."),
    agpr: int = typer.Option(None, "--agpr", help="AGPRs (accumulation VGPRs) per lane."),
    sgpr: int = typer.Option(None, "--sgpr", help="SGPRs per wave."),
    lds: int = typer.Option(None, "--lds", help="LDS bytes per workgroup (static + dynamic)."),
    num_warps: int = typer.Option(None, "--num-warps", help="Waves per workgroup (Triton num_warps)."),
    block_size: int = typer.Option(None, "--block-size", help="Threads per workgroup."),
    wave_size: int = typer.Option(None, "--wave-size", help="32 or 64."),
    waves_per_eu: int = typer.Option(None, "--waves-per-eu", help="The waves_per_eu hint given to the compiler."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list, one object per kernel."),
    markdown: bool = typer.Option(False, "--markdown", help="Print a Markdown table (for a PR)."),
) -> None:
    """Occupancy of AMD GPU kernels: waves per SIMD, what limits them, and the next level.

    Reads AMDGCN assembly (.s/.amdgcn/.isa, AMDGCN_ENABLE_DUMP logs), code objects (.hsaco/.co) and
    clang offload bundles (CCOB too), Triton metadata JSON, TTGIR/MLIR dumps and Triton cache
    directories, by content. The flags override a file's values (what-if), or describe a kernel
    with no file at all.

    \b
    Examples:
      rocanalyze occupancy examples/occupancy/matmul_gfx942.amdgcn
      rocanalyze occupancy ~/.triton/cache --markdown
      rocanalyze occupancy --arch gfx942 --vgpr 170 --num-warps 4 --lds 32768
    """
    if as_json and markdown:
        raise UserError("--json and --markdown exclude each other; pick one")
    wave = wave_size or (get_arch(arch).default_wave_size if arch else None)
    size = block_size
    if num_warps is not None:
        if block_size is not None:
            raise UserError("--num-warps and --block-size both give the workgroup size; pass one")
        size = num_warps * (wave or 64)  # for a file, the kernel's own wave size counts (below)
    errors: list[str] = []
    if paths:
        kernels, errors = read_paths(list(paths))
        results = []
        for kernel in kernels:
            try:
                results.append(analyze_kernel(kernel, arch=arch, vgpr=vgpr, agpr=agpr, sgpr=sgpr, lds_bytes=lds,
                                              workgroup_size=block_size, num_warps=num_warps,
                                              wave_size=wave_size, waves_per_eu=waves_per_eu))
            except UserError as err:
                errors.append(str(err))
    else:
        if arch is None or vgpr is None or size is None:
            raise UserError("give kernel files, or --arch, --vgpr and --num-warps/--block-size for a what-if")
        check_what_if(arch, vgpr=vgpr, agpr=agpr, workgroup_size=size)
        results = [compute_occupancy(arch, vgpr=vgpr, agpr=agpr or 0, sgpr=sgpr, lds_bytes=lds or 0,
                                     workgroup_size=size, wave_size=wave, waves_per_eu=waves_per_eu,
                                     kernel="what-if", source="flags")]
    if as_json:
        sys.stdout.write(render_json(results))
    elif markdown:
        sys.stdout.write(render_markdown(results))
    elif results:
        render_table(results, Console(width=200))
    for line in errors[:-1]:
        print(f"rocanalyze: error: {line}", file=sys.stderr)
    if errors:  # the last one goes through the CLI boundary: exit 2, after the good files were reported
        raise UserError(errors[-1])
