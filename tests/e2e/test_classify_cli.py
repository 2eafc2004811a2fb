"""`rocanalyze classify` end to end through the real CLI boundary (rocanalyze.cli.main)."""

from __future__ import annotations

import gzip
import json

from rocanalyze.cli import main
from tests.conftest import data_path

FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
        "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
# ATen's padding copy as the symbol table of libtorch_cuda.so spells it (tests/data/classify/symbol_forms.tsv.gz);
# mangled C++ is demangled before the rules
MANGLED_PAD = "_ZN2at6native13add_padding_2IN3c104HalfEEEvPKT_PS4_S4_PKiS9_iiii"
LABELED = data_path("classify", "labeled_kernels.tsv.gz")


def test_names_get_their_category_and_the_rule_that_decided(capsys):
    assert main(["classify", FILL, "compute_fd_z_kernel", MANGLED_PAD]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("memset ") and "kernel_rules.toml rule" in out[1] and "FillFunctor" in out[1]
    assert out[2].startswith("other ") and "no rule matched" in out[3]
    assert out[4].startswith("memcpy ") and out[5].strip() == "as void at::native::add_padding_2<c10::Half>(" \
        "c10::Half const*, c10::Half*, c10::Half, int const*, int const*, int, int, int, int)"
    assert "padding / unpadding copies" in out[6]


def test_the_launching_op_decides_an_unknown_kernel(capsys):
    assert main(["classify", "--json", "--op", "aten::mm", "my_kernel"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["category"] == "gemm" and "matmul op" in row["rule"]


def test_your_rules_file_is_named_and_wins(tmp_path, capsys):
    rules = tmp_path / "ours.toml"
    rules.write_text('[[rule]]\ncategory = "elementwise"\nfamily = "our stencils"\nname = [\'^compute_fd_\']\n'
                     'examples = ["compute_fd_z_kernel"]\n')
    names = tmp_path / "names.txt"
    names.write_text("# from our rocprof run\ncompute_fd_z_kernel\n\n" + FILL + "\n")
    assert main(["classify", "-f", str(names), "--rules", str(rules), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["category"] for r in rows] == ["elementwise", "memset"]
    assert rows[0]["rule"] == f"{rules} rule 1: our stencils"


def test_labels_score_the_rules_and_list_every_miss(tmp_path, capsys):
    labels = tmp_path / "labels.tsv"
    labels.write_text(f"memset\t{FILL}\telse\nelementwise\tcompute_fd_z_kernel\nmemcpy\t{MANGLED_PAD}\n")
    assert main(["classify", "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 of 3 names agree with the labels (66.7%)")
    assert "label elementwise, rules say other: compute_fd_z_kernel" in out


def test_labels_read_the_projects_gzipped_set(capsys):
    rows = [line for line in gzip.open(LABELED, "rt") if line.strip() and not line.startswith("#")]
    assert main(["classify", "--json", "--labels", str(LABELED)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["names"] == len(rows) == 1000
    assert result["agree"] == 1000 - len(result["misses"]) and result["agreement"] >= 0.985
    assert sum(c["names"] for c in result["per_category"].values()) == 1000


def test_user_errors_are_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("gemm\tCijk_Ailk\nfast\tmy_kernel\n")
    assert main(["classify", "--labels", str(bad)]) == 2
    assert main(["classify", "--labels", str(tmp_path / "missing.tsv")]) == 2
    assert main(["classify"]) == 2
    assert main(["classify", "x", "--labels", str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith("rocanalyze: error: ") for line in err)
    assert "line 2: expected 'category<TAB>kernel name'" in err[0] and "missing.tsv: file not found" in err[1]
