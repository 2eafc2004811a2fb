"""The in-process runner: the script sees what `python script.py` gives it, and its exit code comes back."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from rocanalyze.collectors.runner import Target, run_target, validate_target
from rocanalyze.errors import UserError

PROBE = """
import json, sys
json.dump({"argv": sys.argv, "name": __name__, "file": __file__, "path0": sys.path[0],
           "main_is_me": sys.modules["__main__"].__dict__ is globals()}, open(sys.argv[1], "w"))
"""


def _script(tmp_path: Path, body: str, name: str = "script.py") -> Path:
    path = tmp_path / "proj" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(body)
    return path


def test_script_sees_what_python_gives_it(tmp_path: Path) -> None:
    script = _script(tmp_path, PROBE)
    out = tmp_path / "probe.json"
    argv, path = list(sys.argv), list(sys.path)
    outcome = run_target(Target("script", str(script), [str(out), "--lr", "3"]))
    assert (outcome.exit_code, outcome.failed) == (0, False)
    seen = json.loads(out.read_text())
    assert seen == {"argv": [str(script), str(out), "--lr", "3"], "name": "__main__",
                    "file": str(script), "path0": str(script.parent), "main_is_me": True}
    assert (sys.argv, sys.path) == (argv, path)          # restored for the analysis that follows


def test_module_runs_as_dash_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "probe.py").write_text(PROBE)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "probe.json"
    assert run_target(Target("module", "mypkg.probe", [str(out)])).exit_code == 0
    seen = json.loads(out.read_text())
    assert seen["argv"] == [str(pkg / "probe.py"), str(out)] and seen["name"] == "__main__"
    assert seen["path0"] == str(tmp_path)


@pytest.mark.parametrize(("body", "code", "failed", "stderr"), [
    ("import sys; sys.exit()", 0, False, ""),
    ("import sys; sys.exit(3)", 3, True, ""),
    ("import sys; sys.exit(256 + 7)", 7, True, ""),
    ("raise SystemExit('bad config')", 1, True, "bad config\n"),
])
def test_sys_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, code: int,
                        failed: bool, stderr: str) -> None:
    outcome = run_target(Target("script", str(_script(tmp_path, body))))
    assert (outcome.exit_code, outcome.failed, outcome.raised) == (code, failed, False)
    assert capsys.readouterr().err == stderr


def test_crash_prints_the_users_traceback_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(tmp_path, "def f():\n    raise ValueError('bad shape')\n\nf()\n")
    outcome = run_target(Target("script", str(script)))
    assert (outcome.exit_code, outcome.raised, outcome.error) == (1, True, "ValueError: bad shape")
    assert capsys.readouterr().err == (
        "Traceback (most recent call last):\n"
        f'  File "{script}", line 4, in <module>\n    f()\n'
        f'  File "{script}", line 2, in f\n    raise ValueError(\'bad shape\')\n'
        "ValueError: bad shape\n")


def test_ctrl_c_returns_130(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(tmp_path, "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n")
    outcome = run_target(Target("script", str(script)))
    assert (outcome.exit_code, outcome.interrupted, outcome.raised) == (130, True, True)
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n") and err.endswith("KeyboardInterrupt\n")


def test_validate_target(tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        validate_target(Target("script", str(tmp_path / "nope.py")))
    assert str(err.value) == f"{tmp_path / 'nope.py'}: script not found"
    bad = _script(tmp_path, "def f(:\n")
    with pytest.raises(UserError, match=r"the script does not parse: .* \(line 1\)"):
        validate_target(Target("script", str(bad)))
    with pytest.raises(UserError) as err:
        validate_target(Target("module", "no_such_module_xyz"))
    assert str(err.value) == "no module named 'no_such_module_xyz' (as `python -m no_such_module_xyz` would say)"
    validate_target(Target("module", "json.tool"))
    assert os.path.exists(bad)
    nul = _script(tmp_path, "print(1)\0\n", "nul.py")       # a binary saved as .py: no "(line None)"
    with pytest.raises(UserError) as err:
        validate_target(Target("script", str(nul)))
    assert str(err.value) == f"{nul}: the script does not parse: source code string cannot contain null bytes"
    with pytest.raises(UserError) as err:
        validate_target(Target("script", str(tmp_path)))
    assert str(err.value) == f"{tmp_path}: a folder with no __main__.py: give the script to run"


def test_folder_and_zip_run_their_main_as_python_does(tmp_path: Path) -> None:
    """`python DIR` and `python app.zip` run the __main__.py inside, with the folder or zip on sys.path."""
    import zipfile
    app = tmp_path / "app"
    app.mkdir()
    (app / "__main__.py").write_text("import helper\n" + PROBE)
    (app / "helper.py").write_text("")
    out = tmp_path / "dir.json"
    validate_target(Target("script", str(app)))
    assert run_target(Target("script", str(app), [str(out)])).exit_code == 0
    seen = json.loads(out.read_text())
    assert (seen["argv"], seen["name"], seen["path0"]) == ([str(app), str(out)], "__main__", str(app))
    assert seen["file"] == str(app / "__main__.py")

    archive = tmp_path / "app.pyz"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("__main__.py", PROBE.replace("__file__", "__name__") + "raise SystemExit(4)\n")
    validate_target(Target("script", str(archive)))
    assert run_target(Target("script", str(archive), [str(out)])).exit_code == 4
    assert json.loads(out.read_text())["path0"] == str(archive)

    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("train.py", "")
    with pytest.raises(UserError) as err:
        validate_target(Target("script", str(empty)))
    assert str(err.value) == f"{empty}: a zip archive with no __main__.py: give the script to run"
