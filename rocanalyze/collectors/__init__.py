"""Collectors: what `rocanalyze profile` runs around the user's script, one module per source.

  runner           run a script/module in-process as `python` would; its exit code and traceback
  torch_profiler   torch.profiler (Kineto) pass: ops, kernels, copies, steps, memory
  markers          rocanalyze.step() and step detection from optimizer steps
  rocprof, child   rocprofv3 pass in a child process; the child runner it wraps
  join             --collector both: the two passes matched by kernel name and order
  triton_cache     which Triton kernels ran, their cache artifacts copied into the run folder
  triton_occupancy occupancy.json for those kernels
  environment      env.json: versions, GPUs, allowlisted and redacted variables
  distributed      torchrun rank and job identity
  session, finish  one profile run end to end; analysis, reports and the printed summary
"""
