"""GPU check (run on the lent H100, not in CI): profile examples/workloads/compiled.py in-process, then
compare each captured Triton kernel's occupancy.json (rocanalyze.occupancy.cuda with the driver's
n_regs and the metadata's shared/num_warps) against the CUDA driver's own
cuOccupancyMaxActiveBlocksPerMultiprocessor on the live kernel handle.

    python tests/data/e2e_gpu/check_triton_occupancy.py RUN_FOLDER
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

from rocanalyze.collectors import triton_cache
from rocanalyze.collectors.cubin import cubin_registers
from rocanalyze.collectors.finish import finish_run, print_summary
from rocanalyze.collectors.runner import Target
from rocanalyze.collectors.session import ProfileOptions, profile


def driver_blocks(function: int, block: int, shared: int) -> int:
    from cuda.bindings import driver

    err, blocks = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(driver.CUfunction(function), block, shared)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor: {err}")
    return int(blocks)


def main(run: Path) -> int:
    result = profile(ProfileOptions(Target("script", "examples/workloads/compiled.py", []), output=run))
    print_summary(result, finish_run(result, report=True, wait_ranks_s=0))
    occupancy = run / "occupancy.json"
    entries = {e["kernel"]: e for e in json.loads(occupancy.read_text())} if occupancy.is_file() else {}
    live = {k.name: k for k in triton_cache.loaded_kernels() if k.launched}
    handles = {}                      # name -> (function handle, threads per block, shared bytes)
    for obj in gc.get_objects():
        kind = type(obj).__name__
        if kind == "CompiledKernel" and getattr(obj, "function", None):
            handles[obj.name] = (obj.function, obj.metadata.num_warps * 32, obj.metadata.shared, obj.n_regs)
        elif kind.startswith("StaticallyLaunched") and getattr(obj, "function", None):
            handles[obj.name] = (obj.function, obj.num_warps * 32, obj.shared, obj.n_regs)
    rows, bad = [], 0
    for name, entry in sorted(entries.items()):
        if name not in handles or "blocks_per_sm" not in entry:
            rows.append(f"{name}: not checkable ({entry.get('error', 'no live handle')})")
            continue
        function, block, shared, driver_regs = handles[name]
        ours, theirs = entry["blocks_per_sm"], driver_blocks(int(function), int(block), int(shared))
        cubin = run / entry["triton"]["folder"] / f"{name}.cubin"
        from_cubin = cubin_registers(cubin, name) if cubin.is_file() else None
        bad += ours != theirs or (from_cubin is not None and from_cubin != driver_regs)
        rows.append(f"{name}: regs {entry['registers']} (driver {driver_regs}, cubin {from_cubin}) shared "
                    f"{entry['shared_bytes']} block {block}: rocanalyze {ours} blocks/SM, driver {theirs} "
                    f"{'OK' if ours == theirs else 'MISMATCH'} (found by {entry['triton']['found_by']})")
    print("\n".join(rows))
    print(f"triton kernels: {len(entries)} in occupancy.json, {len(live)} launched in-process, "
          f"{len(rows) - sum('not checkable' in r for r in rows)} checked, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
