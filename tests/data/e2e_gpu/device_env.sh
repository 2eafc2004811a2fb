# Sourced by the GPU drivers in this folder (run on the lent GPU from the repository root): strict mode,
# unbuffered output, rocanalyze importable from the checkout, and its dependencies from the carried .whl/.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
python3 -m pip install -q --no-index --find-links .whl typer rich plotly jinja2 msgspec perfetto pyelftools zstandard msgpack 2>&1 | tail -2
# the workloads' step functions, for the small scripts the drivers write
WORKLOAD_STEP='import sys; sys.path.insert(0, "examples/workloads"); import launch_bound; from rocanalyze import step as mark; step = launch_bound.make("cuda")'
