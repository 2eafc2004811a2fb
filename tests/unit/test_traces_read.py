"""rocanalyze.traces.read: detection by content, folders as one run, bad input as one-line UserErrors."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from rocanalyze.errors import UserError
from rocanalyze.traces import FORMATS, read
from tests.conftest import REALDATA, REALDATA_ABSENT, data_path, realdata_path

pytestmark = pytest.mark.realdata

_BROKEN = {"rocprof_v1/hpctraining_finite_difference_mi250x/results.json",
           "rocprof_v1/hpctraining_seismic_stencils_mi250x/results.json"}


def _trace_paths() -> list:
    """Every realdata file, and every folder holding files directly (a run folder)."""
    if not REALDATA.is_dir():  # one skipped case that says why, not pytest's "empty parameter set"
        return [pytest.param("", marks=pytest.mark.skip(reason=REALDATA_ABSENT))]
    paths = []
    for p in sorted(REALDATA.rglob("*")):
        if p.name in ("PROVENANCE.md", "provenance.tsv"):
            continue
        if p.is_file() or any(c.is_file() for c in p.iterdir()):
            paths.append(str(p.relative_to(REALDATA)))
    return paths


@pytest.mark.parametrize("rel", _trace_paths())
def test_every_realdata_path_reads_or_is_refused_in_one_line(rel: str) -> None:
    path = realdata_path(*rel.split("/"))
    try:
        table = read(path)
    except UserError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith(str(path))
        return
    assert rel not in _BROKEN
    assert (table.gpu["dur_ns"] >= 0).all()
    assert set(table.quality) >= {"gpu_events", "kernels_without_launch", "negative_gaps", "dropped_events"}


def test_every_format_declares_sniff_read_description() -> None:
    for module in FORMATS:
        assert callable(module.sniff) and callable(module.read) and module.DESCRIPTION


def test_rocprof_v1_folder_keeps_one_copy_of_each_dispatch() -> None:
    table = read(realdata_path("rocprof_v1", "batched_gemm_mi300x"))
    assert len(table.gpu) == 4 and len(table.runtime) == 12  # results.db and results.json hold the same
    assert len(table.aggregates) == 0
    assert "skipped results.json: the same dispatches as results.db" in table.notes
    assert "skipped results.sysinfo.txt: not a trace" in table.notes


def test_stats_only_folder_gives_aggregates(tmp_path: Path) -> None:
    for name in ("results.stats.csv", "results.hip_stats.csv"):
        shutil.copy(realdata_path("rocprof_v1", "batched_gemm_mi300x", name), tmp_path / name)
    table = read(tmp_path)
    assert len(table.gpu) == 0
    assert table.aggregates.groupby("kind", observed=True).size().to_dict() == {"kernel": 1, "runtime": 6}


def test_v3_csv_folder_joins_kernels_to_api_by_correlation() -> None:
    table = read(realdata_path("rocprofv3", "llamacpp_strixhalo_subset"))
    decode = table.gpu[table.gpu["launch_index"] >= 0]
    assert len(decode) > 0
    launches = table.runtime.iloc[decode["launch_index"]]
    assert (launches["correlation"].to_numpy() == decode["correlation"].to_numpy()).all()
    assert any("counter-collection replay" in n for n in table.notes)


def test_kineto_rank_files_become_one_multirank_run() -> None:
    table = read(realdata_path("torch_traces", "hta", "nvidia_multirank"))
    assert table.gpu["rank"].value_counts().sort_index().to_dict() == {0: 1204, 1: 1154}
    assert (table.runtime["rank"].to_numpy()[table.gpu["launch_index"]] == table.gpu["rank"].to_numpy()).all()


def test_lone_non_trace_file_refused() -> None:
    path = realdata_path("rocprof_compute", "batched_gemm_bmm1_mi300x", "sysinfo.csv")
    with pytest.raises(UserError) as err:
        read(path)
    assert str(err.value) == (f"{path}: rocprof-compute-sysinfo describes the machine but holds no events: "
                              "give the trace file or the whole output folder")


def test_empty_and_unknown_and_missing(tmp_path: Path) -> None:
    empty = tmp_path / "trace.json"
    empty.write_bytes(b"")
    with pytest.raises(UserError, match=r"trace.json: empty file: not a trace$"):
        read(empty)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(UserError, match=r"notes.txt: not a trace format rocanalyze reads \(it reads: "):
        read(text)
    with pytest.raises(UserError, match="no such file or folder"):
        read(tmp_path / "missing.json")


def test_truncated_gzip_and_json(tmp_path: Path) -> None:
    source = realdata_path("torch_traces", "tracelens", "nvidia_b200_eager_trace.json.gz")
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(source.read_bytes()[:200_000])
    with pytest.raises(UserError, match=r"cut.json.gz: truncated or corrupt gzip data"):
        read(cut)
    with gzip.open(source) as fh:
        text = fh.read()
    half = tmp_path / "half.json"
    half.write_bytes(text[: len(text) // 2])
    with pytest.raises(UserError, match=r"half.json: truncated or corrupt JSON \(the event array never closes\)"):
        read(half)


def test_cpu_only_fixture_reads_with_quality() -> None:
    table = read(data_path("traces", "cpu_only.json"))
    assert table.quality["gpu_events"] == 0 and table.quality["kernels_without_launch"] is None


@pytest.mark.parametrize("parts", [("torch_traces", "hta", "nvidia_alexnet_trace.json.gz"),
                                   ("rocprof_v1", "aiter_triton_fp4_gemm_gfx950", "profiling_output.json")])
def test_invalid_utf8_inside_a_name_is_a_user_error_at_its_byte(tmp_path: Path, parts: tuple[str, ...]) -> None:
    """A flipped byte inside a string (msgspec raises UnicodeDecodeError there, not DecodeError) was a
    traceback (exit 1); now exit 2 naming the byte, counted in the (decompressed) JSON text."""
    source = realdata_path(*parts)
    text = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    key = re.search(rb'"name": ?"', text[len(text) // 2:])
    at = len(text) // 2 + key.end() + 1  # inside a name, mid-file
    broken = tmp_path / source.name
    corrupt = text[:at] + b"\xe3" + text[at + 1:]
    broken.write_bytes(gzip.compress(corrupt) if source.suffix == ".gz" else corrupt)
    with pytest.raises(UserError) as err:
        read(broken)
    assert str(err.value) == (f"{broken}: invalid UTF-8 (byte 0xe3) at byte {at} of the JSON text: the file is "
                              "corrupt; re-capture or re-copy it")


def test_non_utf8_text_in_a_sqlite_database_is_a_user_error(tmp_path: Path) -> None:
    """A damaged byte in the schema text of rocprof's results.db was a traceback (UnicodeDecodeError from
    the sqlite3 module); one inside a value was already sqlite3's own 'Could not decode' error."""
    import sqlite3

    source = realdata_path("rocprof_v1", "hip_programming_mi300a", "results.db")
    data = bytearray(source.read_bytes())
    data[data.index(b'CREATE TABLE COPY ("BeginNs"') + 20] = 0xE3  # inside the COPY table's column list
    schema = tmp_path / "schema.db"
    schema.write_bytes(bytes(data))
    with pytest.raises(UserError) as err:
        read(schema)
    assert str(err.value) == (f"{schema}: corrupt SQLite database: text that is not UTF-8 (invalid continuation "
                              "byte, byte 0xe3); re-capture or re-copy it")
    value = tmp_path / "value.db"
    shutil.copy(source, value)
    with sqlite3.connect(value) as conn:  # the kernel dispatch's name, its last byte damaged
        conn.execute("update OPS set Name = cast(x'6b65726e656ce3' as text)")
    with pytest.raises(UserError, match=r"value.db: corrupt SQLite database \(Could not decode to UTF-8 column"):
        read(value)


def test_a_utf8_bom_before_the_text_is_skipped(tmp_path: Path) -> None:
    """Windows editors and PowerShell write a byte-order mark before JSON or CSV text; the JSON trace was
    then 'not a trace format'. With the mark, plain or gzipped, each file reads as the original does."""
    kineto = data_path("torch_profiler", "h100_captures", "item_sync.json.gz")
    csv = realdata_path("rocprofv3", "rocprofiler_sdk_docs", "kernel_trace.v2025.csv")
    text = gzip.decompress(kineto.read_bytes())
    cases = {"trace.json": (kineto, b"\xef\xbb\xbf" + text),
             "trace.json.gz": (kineto, gzip.compress(b"\xef\xbb\xbf" + text, compresslevel=1)),
             "kernel_trace.csv": (csv, b"\xef\xbb\xbf" + csv.read_bytes().replace(b"\n", b"\r\n"))}
    for name, (original, content) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        marked, plain = read(path), read(original)
        assert len(marked.gpu) == len(plain.gpu) > 0 and marked.source_format == plain.source_format, name
        assert marked.gpu["name"].astype(str).tolist() == plain.gpu["name"].astype(str).tolist(), name
