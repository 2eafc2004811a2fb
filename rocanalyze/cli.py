"""The typer app, its command list and the error boundary.

Exit codes: 0 ok, 1 internal error (traceback kept), 2 user error (one line), 3 regression found by
`compare`, 130 Ctrl-C; `profile` returns the profiled script's own code.
"""

from __future__ import annotations

import sys

import typer

from rocanalyze._version import __version__
from rocanalyze.commands import COMMANDS
from rocanalyze.errors import RegressionFound, ScriptExit, UserError

HELP = """Where the GPU time of a PyTorch/Triton workload goes, why, and which level of the tuning
ladder to work on next. AMD ROCm first; the same code paths work on NVIDIA.

Examples:

\b
  rocanalyze analyze examples/traces/train_step.json.gz      # report on a captured trace, no GPU
  rocanalyze profile train.py --epochs 1                      # run a script under the profiler
  rocanalyze occupancy kernel.amdgcn                          # waves per SIMD and what limits them
"""


_CLICK_USER_ERRORS = {"UsageError", "BadParameter", "MissingParameter", "NoSuchOption", "BadOptionUsage",
                      "BadArgumentUsage", "FileError", "ClickException", "NoArgsIsHelpError"}


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"rocanalyze {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.callback()
    def _root(version: bool = typer.Option(False, "--version", callback=_version_callback,
                                           is_eager=True, help="Print the version and exit.")) -> None:
        """rocanalyze: GPU time, bottlenecks and the next tuning step."""

    for name, command, context_settings in COMMANDS:
        app.command(name, context_settings=context_settings)(command)
    return app


def main(argv: list[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (tests drive the real boundary through this)."""
    app = build_app()
    try:
        return _run(app, argv)
    finally:
        classify = sys.modules.get("rocanalyze.analysis.classify")
        if classify is not None:  # --rules files hold for one command (tests run many in one process)
            classify.clear_user_rules()


def _run(app: typer.Typer, argv: list[str] | None) -> int:
    try:
        app(args=argv, prog_name="rocanalyze", standalone_mode=False)
    except UserError as err:
        print(f"rocanalyze: error: {err}", file=sys.stderr)
        return UserError.exit_code
    except RegressionFound as err:
        print(f"rocanalyze: {err}", file=sys.stderr)
        return RegressionFound.exit_code
    except ScriptExit as err:
        return err.code
    except KeyboardInterrupt:
        print("rocanalyze: interrupted", file=sys.stderr)
        return 130
    except typer.Exit as err:  # raised by --version and by commands that end early on purpose
        return err.exit_code
    except typer.Abort:
        return 130
    except SystemExit as err:  # click raises it for --help
        return err.code if isinstance(err.code, int) else 0
    except Exception as err:
        # click's usage errors (typer may vendor its own click) are user errors: exit 2
        if type(err).__name__ in _CLICK_USER_ERRORS and hasattr(err, "show"):
            err.show()
            return 2
        raise
    return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
