"""The run folder `profile` writes: named from the script, never overwritten, files written atomically.

Layout (single process): RUN/trace.json.gz, run.json, env.json, memory.json, occupancy.json,
triton/, rocprof/, then analysis.json and the reports. Under torchrun each rank writes RUN/rank{N}/
and RUN/job.json names the job that owns the folder, so a folder left by an earlier job is never
reused.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from rocanalyze.errors import UserError

JOB_FILE = "job.json"
DONE_FILE = "done"


def default_run_name(target: str, now: float | None = None) -> str:
    """Folder name for a run of `target` (a script path, module or program): rocanalyze-<stem>-<time>."""
    stem = Path(target).name
    for suffix in (".py", ".pyw", ".pyz", ".zip"):
        stem = stem.removesuffix(suffix)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "run"
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"rocanalyze-{stem}-{stamp}"


def choose_run_folder(target: str, output: Path | None, base: Path | None = None) -> Path:
    """The folder to create: `output` when given (must not exist), else a fresh name in `base` (cwd)."""
    if output is not None:
        if output.exists():
            raise UserError("output folder already exists; choose another -o or remove it", output)
        return output
    base = Path.cwd() if base is None else base
    name = default_run_name(target)
    path = base / name
    n = 2
    while path.exists():
        path = base / f"{name}-{n}"
        n += 1
    return path


def create_run_folder(path: Path) -> Path:
    """Create the run folder; UserError when it exists or cannot be created (no overwrite, ever)."""
    try:
        path.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        raise UserError("output folder already exists; choose another -o or remove it", path) from None
    except OSError as err:
        raise UserError(f"cannot create the output folder: {err.strerror}", path) from None
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path: Path) -> None:
    """UserError before any work when `path` (a file or folder to be made) could not be written: the nearest
    existing folder above it is a file, or is not writable. Checked first, so a long analysis is not lost."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing != path and not existing.is_dir():
        raise UserError(f"cannot write there: {existing} is not a folder", path)
    folder = existing if existing.is_dir() else existing.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"cannot write there: {existing} is not writable", path)
    try:  # access() can say yes where nothing can be created (/proc, some network and read-only mounts)
        os.rmdir(tempfile.mkdtemp(prefix=".rocanalyze-probe-", dir=folder))
    except OSError as err:
        raise UserError(f"cannot write there: {err.strerror or err}", path) from None


def json_destination(json_out: Path | None) -> tuple[bool, Path | None]:
    """`--json PATH`: (to stdout, the file to write). `--json -` means stdout, not a file named '-'."""
    if json_out is not None and str(json_out) == "-":
        return True, None
    return False, json_out


def make_folder(path: Path) -> Path:
    """Create `path` (and its parents) if needed; UserError naming it when that fails."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the output folder: {err.strerror}", path) from None
    return path


def write_atomic(path: Path, data: bytes | str) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and a rename; UserError when the
    folder cannot take it (missing, read-only, full)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise UserError(f"cannot write: {err.strerror}", path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is shared like any other file
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"cannot write: {err.strerror}", path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: Path, obj: Any) -> Path:
    """Write `obj` as indented JSON (sorted keys, deterministic) atomically."""
    return write_atomic(path, json.dumps(obj, indent=1, sort_keys=True, default=str) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def read_record(path: Path, kind: type[dict] | type[list] = dict) -> tuple[Any, str | None]:
    """A run folder's JSON record (run.json, env.json, occupancy.json...) and None, or None and a note
    saying why it was left out: a damaged record must not cost the analysis of the trace beside it."""
    try:
        value = read_json(path)
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None, f"{path.name} left out: unreadable ({str(exc).splitlines()[0][:80]})"
    if not isinstance(value, kind):
        return None, f"{path.name} left out: a JSON {type(value).__name__}, not the {kind.__name__} it should hold"
    return value, None


def claim_job_folder(run: Path, job_id: str, world_size: int, rank: int, info: dict[str, Any]) -> Path:
    """Join (or create) the multi-rank folder `run` for `job_id`; return this rank's RUN/rank{N}.

    The first rank to arrive writes job.json with O_EXCL; the others check it names the same job.
    A folder without job.json, or with another job's id, is an earlier run: UserError.
    """
    if run.exists() and not (run / JOB_FILE).exists() and any(run.iterdir()):
        raise UserError("output folder already exists and holds no job of this torchrun; "
                        "choose another -o or remove it", run)
    run.mkdir(parents=True, exist_ok=True)
    job_path = run / JOB_FILE
    record = {"job_id": job_id, "world_size": world_size, **info}
    try:
        fd = os.open(job_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        existing = _wait_for_json(job_path)
        if existing.get("job_id") != job_id:
            raise UserError(f"output folder belongs to an earlier job ({existing.get('job_id')}); "
                            "choose another -o or remove it", run) from None
    else:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1, sort_keys=True)
    return create_run_folder(run / f"rank{rank}")


def _wait_for_json(path: Path, timeout_s: float = 10.0) -> dict[str, Any]:
    """Read a JSON file another process is writing right now (O_EXCL create, then the write)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return dict(read_json(path))
        except (json.JSONDecodeError, OSError):
            if time.monotonic() > deadline:
                raise UserError("cannot read the job record; is another job writing here?", path) from None
            time.sleep(0.05)


def mark_done(rank_folder: Path, exit_code: int) -> Path:
    """Write this rank's done marker (its exit code), the last file a rank writes."""
    return write_json(rank_folder / DONE_FILE, {"exit_code": exit_code, "time": time.time()})


def wait_for_ranks(run: Path, world_size: int, timeout_s: float, poll_s: float = 0.2) -> list[int]:
    """Wait up to `timeout_s` for every rank's done marker; return the ranks still missing."""
    deadline = time.monotonic() + timeout_s
    while True:
        missing = [r for r in range(world_size) if not (run / f"rank{r}" / DONE_FILE).exists()]
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(poll_s)
