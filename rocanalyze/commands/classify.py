"""`rocanalyze classify`: the category of kernel names and the rule that decided it; agreement with your labels.

For the engineer who asks "why is my kernel `other`?" or writes a `--rules` file: each name is shown
with the rule that matched it (built-in rule number and family, or your file's), and a labeled file
scores the rules against a team's own judgement before they trust a report built on them.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rocanalyze.commands._rules import rules_option, use_rules
from rocanalyze.errors import UserError

if TYPE_CHECKING:
    from rocanalyze.analysis.classify import Rule

_MAX_MISSES_SHOWN = 50
_PROGRESS_FROM = 2000  # labeled names: below this the answer comes in about 3 s


def _stderr_console() -> object:
    from rich.console import Console

    return Console(stderr=True)


def command(
    names: list[str] = typer.Argument(None, help="Kernel names as a profiler prints them (quote them)."),
    file: Path = typer.Option(None, "--file", "-f", help="Kernel names, one per line ('-' reads stdin)."),
    labels: Path = typer.Option(None, "--labels", help="Score the rules on a labeled file: one "
                                "'category<TAB>kernel name' per line (more tab columns are ignored)."),
    op: str = typer.Option(None, "--op", help="The CPU op that launched the kernels, e.g. aten::mm."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
    rules: list[Path] = rules_option(),
) -> None:
    """Classify kernel names: the category each gets and the rule that decided it, or the rules'
    agreement with your own labels.

    \b
    Examples:
      rocanalyze classify "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>"
      rocanalyze classify -f kernel_names.txt --rules our_rules.toml
      rocanalyze classify --labels our_labels.tsv       # agreement, per category, and every miss
    """
    from rocanalyze.analysis.classify import CATEGORIES, match_rule, normalize_name

    use_rules(rules)
    if labels is not None:
        if names or file is not None:
            raise UserError("--labels scores a labeled file on its own; leave out names and --file")
        _score(_read_labels(labels), op, as_json, CATEGORIES, match_rule)
        return
    todo = list(names or []) + (_read_names(file) if file is not None else [])
    if not todo:
        raise UserError("give kernel names, --file FILE or --labels FILE")
    rows = []
    for name in todo:
        rule = match_rule(name, op)
        rows.append({"name": name, "category": rule.category if rule else "other",
                     "rule": _describe(rule), "matched_form": normalize_name(name)})
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
        return
    for row in rows:
        print(f"{row['category']:<13} {row['name']}")
        if row["matched_form"] != row["name"]:  # mangled or .kd names: the form the rules searched
            print(f"{'':<13} as {row['matched_form']}")
        print(f"{'':<13} {row['rule']}")


def _describe(rule: Rule | None) -> str:
    """Which rule decided: its file, its number there and its family; or that none did."""
    if rule is None:
        return "no rule matched: other (add one with --rules; see docs/classification.md)"
    return f"{rule.where} rule {rule.number}: {rule.family or rule.category}"


def _read_lines(path: Path) -> list[str]:
    try:
        if str(path) == "-":
            text = sys.stdin.read()
        elif path.suffix == ".gz":  # the project's own labeled sets are gzipped
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        else:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError("file not found", path) from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise UserError(f"not a readable text file ({exc})", path) from None
    return [line.rstrip("\r\n") for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _read_names(path: Path) -> list[str]:
    return [line.strip() for line in _read_lines(path)]


def _read_labels(path: Path) -> list[tuple[str, str]]:
    from rocanalyze.analysis.classify import CATEGORIES

    rows = []
    for number, line in enumerate(_read_lines(path), start=1):
        label, _, rest = line.partition("\t")
        name = rest.split("\t", 1)[0].strip()
        if label.strip() not in CATEGORIES or not name:
            raise UserError(f"line {number}: expected 'category<TAB>kernel name' with a category among "
                            f"{', '.join(CATEGORIES)}; got {line[:80]!r}", path)
        rows.append((label.strip(), name))
    if not rows:
        raise UserError("no labeled names", path)
    return rows


def _score(rows: list[tuple[str, str]], op: str | None, as_json: bool, categories: tuple[str, ...],
           match_rule: object) -> None:
    misses = []
    todo: Iterable[tuple[str, str]] = rows
    if len(rows) > _PROGRESS_FROM and sys.stderr.isatty():  # about 1.6 s per 1,000 new names
        from rich.progress import track

        todo = track(rows, description="classifying", console=_stderr_console(), transient=True)
    for label, name in todo:
        rule = match_rule(name, op)  # type: ignore[operator]
        got = rule.category if rule else "other"
        if got != label:
            misses.append({"label": label, "category": got, "rule": _describe(rule), "name": name})
    total, per_label = len(rows), Counter(label for label, _ in rows)
    missed = Counter(m["label"] for m in misses)
    agreement = 1 - len(misses) / total
    if as_json:
        sys.stdout.write(json.dumps({"names": total, "agree": total - len(misses), "agreement": round(agreement, 4),
                                     "per_category": {c: {"names": per_label[c], "agree": per_label[c] - missed[c]}
                                                      for c in categories if per_label[c]},
                                     "misses": misses}, indent=1) + "\n")
        return
    print(f"{total - len(misses)} of {total} names agree with the labels ({100 * agreement:.1f}%)")
    print(f"{'category':<13} {'names':>6} {'agree':>6}")
    for c in categories:
        if per_label[c]:
            print(f"{c:<13} {per_label[c]:>6} {100 * (1 - missed[c] / per_label[c]):>5.1f}%")
    for m in misses[:_MAX_MISSES_SHOWN]:
        print(f"\nlabel {m['label']}, rules say {m['category']}: {m['name']}\n  {m['rule']}")
    if len(misses) > _MAX_MISSES_SHOWN:
        print(f"\n... and {len(misses) - _MAX_MISSES_SHOWN} more misses (--json lists them all)")
