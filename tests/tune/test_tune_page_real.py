"""tune.html in Chromium: every chart drawn, no script error, and no label cut off at its
chart's edge (the options themselves: '-J size=16', 'commit=60, -I 128'), the set and
each option's share beside the whole configuration shown (issues 44, 61)."""

from __future__ import annotations

import re

import pytest

from fslab import api
from fslab.host.lab import Lab
from fslab.tune.request import Request
from tests.conftest import requires
from tests.ingest.test_import_report import chromium
from tests.tune.test_tune import simulator

FACTORS = {"mount_options.atime": ["relatime", "noatime", "lazytime"],
           "mount_options.commit": ["commit=5", "commit=60"],
           "mkfs_options.inode": ["-I 256", "-I 128"],
           "mkfs_options.journal_size_in_megabytes": ["-J size=64", "-J size=16"]}


@pytest.mark.privileged
def test_the_tune_page_draws_the_set_and_each_option_with_no_label_clipped(tmp_path):
    requires("chromium", root=False)
    # lazytime without effect: not a near twin of noatime (one would send the race's runs
    # to the confirmation: tune/twins.py), so the race and its set are drawn
    effects = {"noatime": 1.3, "-J size=16": 1.25, "-I 128": 0.85}
    out = tmp_path / "tune"
    api.tune(simulator(5, effects), Request(FACTORS, 0.10, max_runs=150), out,
             lab=Lab(tmp_path / "lab"))
    page = out / "tune.html"
    html = page.read_text()
    assert "its share" in html and "the whole configuration" in html and "the set" in html
    dom = chromium(page, tmp_path)
    rendered = int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1))
    assert 'data-js-errors="0"' in dom
    assert rendered == html.count('data-chart="') and rendered >= 3
    clipped = re.search(r'data-labels-clipped="(\d+)"', dom)
    assert clipped is not None and clipped.group(1) == "0", re.search(
        r'data-clipped-labels="([^"]*)"', dom)
