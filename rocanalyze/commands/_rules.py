"""The `--rules FILE` option the analyzing commands share: the user's own kernel-classification rules."""

from __future__ import annotations

from pathlib import Path

import typer

RULES_HELP = ("Your own kernel-classification rules: a TOML file in kernel_rules.toml's format, tried before "
              "the built-in rules (repeatable). See docs/classification.md, 'Your own rules'.")


def rules_option() -> object:
    return typer.Option(None, "--rules", metavar="FILE", help=RULES_HELP)


def use_rules(files: list[Path] | None) -> None:
    """Load each rules file (a bad one is a UserError: exit 2, one line)."""
    if not files:
        return
    from rocanalyze.analysis.classify import use_rules_file  # numpy/pandas: only when asked for

    for path in files:
        use_rules_file(path)
