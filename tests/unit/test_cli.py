from __future__ import annotations

import subprocess
import sys

from rocanalyze import __version__
from rocanalyze.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rocanalyze {__version__}"


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("profile", "analyze", "report", "compare", "occupancy", "ceilings"):
        assert name in out


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


def test_installed_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "rocanalyze", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and __version__ in proc.stdout
