"""Analysis: one plain function per question, each reading the EventTable (cut to the window) and the
GPU spec, each filling one part of the `Analysis`. `ANALYZERS` lists them in the order the pipeline
(rocanalyze.analysis.build) runs them; docs/analyze.md names each one, and a test checks that every
entry resolves to its function and appears there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Analyzer:
    name: str
    question: str
    function: str        # "module:function", imported when run (keeps `import rocanalyze` cheap)
    fills: str           # the Analysis field(s) it fills
    needs: tuple[str, ...] = ()  # EventTable columns it reads beyond start/dur/name


ANALYZERS: tuple[Analyzer, ...] = (
    Analyzer("classify", "Which category does each GPU activity belong to?",
             "rocanalyze.analysis.classify:classify_table", "gpu.category", ("kind", "op_index")),
    Analyzer("window", "Which stretch is analyzed (steps, steady state) and how long was start-up?",
             "rocanalyze.analysis.window:choose_window", "window, startup_us", ("launch_index",)),
    Analyzer("time", "Where does the window's time go: busy by category, idle by cause, launches?",
             "rocanalyze.analysis.timeaccount:account",
             "busy_us, idle_us, idle_breakdown_us, categories_us, overlap, launch, steps",
             ("stream", "category", "launch_index", "copy_kind", "graph")),
    Analyzer("kernels", "Which kernels take the time, launched by which op and module?",
             "rocanalyze.analysis.kernels:kernel_table", "kernels, top_kernels", ("op_index",)),
    Analyzer("ops", "Where does each op sit on the roofline (FLOPs, bytes, achieved rate, bound)?",
             "rocanalyze.analysis.opmodel:model_ops", "ops, kernels[].tflops/gbps", ("op_index",)),
    Analyzer("occupancy", "How many waves fit per SIMD for the dispatched kernels, and what limits them?",
             "rocanalyze.analysis.dispatch_occupancy:dispatch_occupancy", "occupancy",
             ("vgpr", "agpr", "sgpr", "lds_bytes", "block_x")),
    Analyzer("patterns", "Which multi-kernel patterns cost time (unfused attention, QKV, eager chains, syncs)?",
             "rocanalyze.analysis.patterns:find_patterns", "patterns", ("op_index", "launch_index")),
    Analyzer("timeline", "What did each stream do over the window (downsampled)?",
             "rocanalyze.analysis.timeline:timeline", "timeline", ("stream", "category")),
    Analyzer("recommend", "What should be tuned next, at which level of the ladder, saving how much?",
             "rocanalyze.analysis.recommend:recommend", "recommendations"),
)
