"""The HTML report in headless Chromium, opened from disk with the network off.

No console errors, every plot rendered (plotly's .main-svg inside each plot div), the kernel table
sortable and searchable, names shown as text, and a screenshot of each section saved under the
test's tmp dir (ROCANALYZE_SCREENSHOTS=DIR keeps them). Needs Debian's chromium + chromedriver and
selenium (scripts/install-browser.sh); skips, saying why, only when the browser is missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rocanalyze.analysis.build import analyze
from rocanalyze.reports import html
from tests.conftest import data_path, realdata_path

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
EVIL = 'k<b>&amp;</script><img src=x onerror="document.title=\'pwned\'">'


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("chromium/chromedriver not installed: run scripts/install-browser.sh")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium missing: scripts/install-browser.sh")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost",
                "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "--disable-background-networking"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def open_report(driver, page: str, path: Path) -> list[dict]:
    path.write_text(page, encoding="utf-8")
    driver.get(path.resolve().as_uri())
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def plots(driver) -> dict[str, int]:
    return driver.execute_script(
        "const out = {}; document.querySelectorAll('.js-plotly-plot').forEach("
        "e => out[e.id] = e.querySelectorAll('.main-svg').length); return out;")


def shoot(driver, folder: Path, prefix: str) -> list[Path]:
    from selenium.webdriver.common.by import By

    shots = []
    for section_id, _ in html.SECTIONS:
        el = driver.find_element(By.ID, section_id)
        driver.execute_script("arguments[0].scrollIntoView()", el)
        shot = folder / f"{prefix}_{section_id}.png"
        el.screenshot(str(shot))
        assert shot.stat().st_size > 2000, f"{shot} is blank"
        shots.append(shot)
    keep = os.environ.get("ROCANALYZE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for s in shots:
            shutil.copy(s, keep)
    return shots


def test_h100_report_renders_offline(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    a = analyze(data_path("torch_profiler", "h100_captures", "train_step.json.gz"))
    kernels = [dict(k) for k in a.kernels]
    kernels[0]["name"] = EVIL
    errors = open_report(browser, html.render(a.replace(kernels=kernels)), tmp_path / "h100.html")
    assert errors == []
    expected = {"plot-categories": 3, "plot-timeline": 3, "plot-roofline": 3}
    if any(isinstance(o.get("occupancy_pct"), (int, float)) for o in a.occupancy):
        expected["plot-occupancy"] = 3  # CUPTI registers + shared memory per dispatch, once computed
    assert plots(browser) == expected
    assert browser.title.startswith("rocanalyze: train_step.json.gz")  # the evil name ran nothing
    rows = browser.find_elements(By.CSS_SELECTOR, "#kernel-table tbody tr")
    assert len(rows) == len(kernels)
    assert rows[0].find_element(By.CSS_SELECTOR, "td").text == EVIL  # shown as text
    browser.find_element(By.ID, "kernel-search").send_keys("gemm")
    visible = [r for r in rows if r.is_displayed()]
    assert len(visible) == sum(1 for k in kernels if "gemm" in (k["name"] + k["category"]).lower()
                               or "gemm" in str(k.get("op") or "") + str(k.get("module") or ""))
    assert 0 < len(visible) < len(rows)
    browser.find_element(By.CSS_SELECTOR, "#kernel-table th:nth-child(3)").click()  # sort by calls
    shown = [r for r in browser.find_elements(By.CSS_SELECTOR, "#kernel-table tbody tr") if r.is_displayed()]
    assert len(shown) == len(visible)  # the filter survives the re-sort
    calls = [int(r.find_elements(By.CSS_SELECTOR, "td")[2].text.replace(",", "")) for r in shown]
    assert calls == sorted(calls, reverse=True)
    assert len(shoot(browser, tmp_path, "h100")) == 8


def test_amd_report_with_occupancy_renders(browser, tmp_path: Path) -> None:
    a = analyze(realdata_path("torch_traces", "tracelens", "mi300x_resnet_act_checkpoint_train.json.gz"))
    # Derived: one occupancy entry as the occupancy engine writes it, so that plot is drawn too.
    entry = {"kernel": a.kernels[0]["name"], "arch": "gfx942", "waves_per_simd": 2, "occupancy_pct": 25.0,
             "limiter": "vgpr", "vgpr": 170, "agpr": 0, "sgpr": 40, "lds_bytes": 0, "scratch_bytes": 0,
             "what_if": {"fewer": 2, "most": 168, "next_waves_per_simd": 3, "waves_per_eu_hint": 3}}
    errors = open_report(browser, html.render(a.replace(occupancy=[entry])), tmp_path / "amd.html")
    assert errors == []
    assert plots(browser) == {"plot-categories": 3, "plot-timeline": 3, "plot-roofline": 3, "plot-occupancy": 3}
    kheads = texts(browser, "#kernel-table th")
    assert texts(browser, "#kernel-table tbody tr:first-child td")[kheads.index("Occupancy")] == \
        "25% · 2 waves/SIMD (vgpr)"
    heads = texts(browser, "#occupancy-table th")
    assert {"Waves/SIMD", "VGPR", "AGPR", "SGPR", "What-if"} <= set(heads) and "Warps/SM" not in heads
    roofs = browser.execute_script("return document.getElementById('plot-roofline').data"
                                   ".filter(t => t.mode === 'lines').map(t => t.name);")
    # MI300X: fp32 and fp32_matrix share one rate, so one line; no fp64 roof for double scalars
    assert "fp32 / fp32_matrix peak 163.4 TFLOP/s" in roofs and not any("fp64" in r for r in roofs)
    no_nulls(browser)
    assert len(shoot(browser, tmp_path, "mi300x")) == 8


def texts(driver, css: str) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.textContent);", css)


def no_nulls(driver) -> None:
    body = driver.execute_script("return document.querySelector('main').innerText;")
    for bad in ("null", "undefined", "NaN", "[object Object]"):
        assert bad not in body, bad


def test_nvidia_occupancy_in_warps_and_blocks_per_sm(browser, tmp_path: Path) -> None:
    a = analyze(data_path("torch_profiler", "h100_captures", "train_step.json.gz"))
    first = a.occupancy[0]
    assert first["arch"] == "sm_90" and first.get("waves_per_simd") is None  # CUPTI: warps and blocks per SM
    assert open_report(browser, html.render(a), tmp_path / "nv.html") == []
    heads = texts(browser, "#occupancy-table th")
    assert {"Warps/SM", "Blocks/SM", "Regs/thread", "Limiter"} <= set(heads)
    assert not {"Waves/SIMD", "AGPR", "SGPR", "What-if"} & set(heads)
    row = texts(browser, "#occupancy-table tbody tr:first-child td")
    assert str(first["warps_per_sm"]) == row[heads.index("Warps/SM")]
    assert str(first["blocks_per_sm"]) == row[heads.index("Blocks/SM")]
    kheads = texts(browser, "#kernel-table th")
    kcell = texts(browser, "#kernel-table tbody tr:first-child td")[kheads.index("Occupancy")]
    k0 = next(o for o in a.occupancy if o["kernel"] == a.kernels[0]["name"])
    assert kcell.startswith(f"{k0['occupancy_pct']:.0f}% · {k0['warps_per_sm']} warps/SM")
    assert "No occupancy could be computed" not in browser.page_source
    assert texts(browser, "#occupancy-notes p") == []
    no_nulls(browser)


def test_amd_occupancy_unknown_arch_is_a_note(browser, tmp_path: Path) -> None:
    # rocprof's MI250X stencil run kept no sysinfo: the arch is not known there
    a = analyze(realdata_path("rocprof_v1", "hpctraining_seismic_stencils_mi250x"))
    assert a.occupancy and all("error" in o for o in a.occupancy)
    assert open_report(browser, html.render(a), tmp_path / "rdna.html") == []
    notes = texts(browser, "#occupancy-notes p")
    assert len(notes) == 1 and f"for {len(a.occupancy)} of {len(a.occupancy)} kernels" in notes[0]
    assert "pass --gpu NAME" in notes[0]
    heads = texts(browser, "#occupancy-table th")
    assert {"VGPR", "SGPR", "LDS bytes"} <= set(heads)
    assert not {"Occupancy %", "Limiter", "Waves/SIMD", "Warps/SM"} & set(heads)  # no columns of blanks
    assert browser.execute_script("return document.getElementById('plot-occupancy').hidden;")
    assert "TFLOP/s" not in texts(browser, "#kernel-table th")  # no FLOPs recorded: no empty column
    no_nulls(browser)


def test_long_names_clip_to_two_lines_with_the_full_name(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    a = analyze(data_path("torch_profiler", "h100_captures", "train_step.json.gz"))
    long = "void ck::kernel_gemm_xdl_cshuffle_v3<" + ", ".join(f"ck::Sequence<{i}, 8, 1>" for i in range(40)) + ">(X)"
    assert len(long) > 500
    kernels = [dict(k) for k in a.kernels]
    kernels[0]["name"] = long
    occupancy = [dict(a.occupancy[0], kernel=long)] + a.occupancy[1:]
    assert open_report(browser, html.render(a.replace(kernels=kernels, occupancy=occupancy)),
                       tmp_path / "long.html") == []
    for table in ("kernel-table", "occupancy-table"):
        clip = browser.find_element(By.CSS_SELECTOR, f"#{table} tbody tr:first-child td .clip")
        assert clip.get_attribute("title") == long and clip.get_attribute("textContent") == long
        line = browser.execute_script("return parseFloat(getComputedStyle(arguments[0]).lineHeight);", clip)
        assert clip.size["height"] <= 2.5 * line, table  # two lines, not twenty
        browser.execute_script("arguments[0].scrollIntoView(); arguments[0].click();", clip)
        assert clip.size["height"] > 3 * line  # a click opens the whole name
    search = browser.find_element(By.ID, "kernel-search")
    search.send_keys("sequence<39, 8, 1>")  # the end of the name, hidden by the clip, still matches
    shown = [r for r in browser.find_elements(By.CSS_SELECTOR, "#kernel-table tbody tr") if r.is_displayed()]
    assert len(shown) == 1


def test_kernels_recorded_mangled_show_demangled(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    a = analyze(realdata_path("torch_traces", "tracelens", "mi300x_sglang_qwen3-8b_decode.json.gz"))
    assert open_report(browser, html.render(a), tmp_path / "sglang.html") == []
    clips = browser.find_elements(By.CSS_SELECTOR, "#kernel-table tbody tr td:first-child .clip")
    texts = [c.get_attribute("textContent") for c in clips]
    assert not [t for t in texts if t.startswith("_Z")]  # every mangled name shown demangled or outlined
    # sgl-kernel's act_and_mul: a `Tn` mangling that c++filt 2.40 cannot read either, shown by its outline
    assert "sgl_hip::activation::act_and_mul_kernel<__hip_bfloat16…>" in texts
    norm = next(c for c in clips if "aiter::add_rmsnorm_quant_kernel<std::bfloat16_t" in c.get_attribute("textContent"))
    assert "(recorded as _ZN5aiter24add_rmsnorm_quant_kernel" in norm.get_attribute("title")
    search = browser.find_element(By.ID, "kernel-search")
    search.send_keys("_zn5aiter24add_rmsnorm")  # the recorded (mangled) name still finds the row
    shown = [r for r in browser.find_elements(By.CSS_SELECTOR, "#kernel-table tbody tr") if r.is_displayed()]
    expected = sum(k["name"].startswith("_ZN5aiter24add_rmsnorm") for k in a.kernels)
    assert len(shown) == expected >= 2 and all("add_rmsnorm_quant" in r.text for r in shown)
