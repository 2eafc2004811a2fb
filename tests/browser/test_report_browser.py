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
    calls = [int(r.find_elements(By.CSS_SELECTOR, "td")[2].text) for r in shown]
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
    assert len(shoot(browser, tmp_path, "mi300x")) == 8
