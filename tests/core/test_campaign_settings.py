"""campaign.toml is one record, CampaignSettings, and one writer of it
(results.store.write_campaign): a run's, an aging run's and an import's campaign are each
built as the record, written and read back the same (issue 63)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import fslab
from fslab.aging.age import campaign_settings as aging_settings
from fslab.aging.config import AgingConfig
from fslab.core.campaign_settings import CampaignSettings, LookCell
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from fslab.results.store import CAMPAIGN_FILE, write_campaign
from fslab.targets import TargetSpec

SRC = Path(fslab.__file__).parent


def written_and_read(tmp_path: Path, settings: CampaignSettings) -> CampaignSettings:
    write_campaign(tmp_path, settings)
    assert (tmp_path / CAMPAIGN_FILE).read_text() == settings.to_toml()
    return CampaignSettings.read(tmp_path / CAMPAIGN_FILE)


def test_a_run_campaign_round_trips_through_campaign_toml(tmp_path):
    parsed = CampaignFile.model_validate({
        "name": "round", "iterations": 4, "seed": 9, "margin": "5%", "primary": ["iops"],
        "labels": {"kernel": "6.18"}, "sweep": {"iodepth": [1, 4]},
        "tune": {"mount_options.atime": ["relatime", "noatime"], "max_runs": 40},
        "target": [{"name": "a", "fs": "null", "scale": 1.2}, {"name": "b", "fs": "null"}],
        "workload": [{"preset": "null", "options": {"iops": 100}}]})
    campaign = resolve(parsed, Overrides(), tmp_path)
    campaign.looks = [4, 6]
    campaign.look_cells = [[LookCell("a", "w1", 6, 3, 1.5)]]
    settings = campaign.settings()
    assert (settings.name, settings.iterations, settings.seed) == ("round", 4, 9)
    assert settings.margin == 0.05 and settings.primary == ("iops",)
    assert settings.looks == (4, 6) and settings.look_cells[0][0].weight == 1.5
    assert settings.levels["iodepth"] == ["1", "4"] and settings.scopes["iodepth"] == "job"
    back = written_and_read(tmp_path, settings)
    assert back == settings
    assert tomllib.loads(settings.to_toml())["tune"]["max_runs"] == 40


def test_an_aging_run_and_an_import_write_the_same_record(tmp_path):
    spec = TargetSpec(name="ext4", fs="ext4", size=256 * 1024**2)
    aged = aging_settings("aged", spec, AgingConfig(seed=3, ops=500), "sparse")
    assert aged.name == "aged" and aged.seed == 3 and aged.aging["ops"] == 500
    assert written_and_read(tmp_path, aged) == aged
    imported = CampaignSettings.from_table({"name": "imp", "imported_from": ["/x"],
                                            "pattern": "(guessed)"})
    (tmp_path / "i").mkdir()
    assert written_and_read(tmp_path / "i", imported) == imported
    assert imported.iterations == 0 and imported.seed is None  # not recorded


def test_campaign_toml_has_one_writer():
    """Only results/store.py's write_campaign writes campaign.toml: no other module of
    fslab serialises a campaign to TOML."""
    writers = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        if "tomli_w" in text and path.name not in ("campaign_settings.py", "outputs.py"):
            writers.append(str(path))
        if '"campaign.toml"' in text and path.name == "store.py":
            assert "CAMPAIGN_FILE" in text
    assert not writers, writers
    calls = [node for path in SRC.rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("to_toml")]
    assert len(calls) == 1  # store.write_campaign's


def test_a_tune_table_is_typed_and_written_back_as_given():
    """[tune] is a TuneTable on the campaign: its factors' levels as the file gave them,
    its limits typed, written back into campaign.toml as they were; a key that is neither
    a factor nor a limit is one clear error."""
    import pytest

    from fslab.core.errors import UserError
    from fslab.plan.schema import TuneTable

    given = {"iodepth": [1, 4], "mount_options.atime": ["relatime", "noatime"],
             "max_runs": 40, "margin": "3%", "subject_to": ["p99_clat<=2ms"]}
    table = TuneTable.from_table(given)
    assert table.factors == {"iodepth": [1, 4], "mount_options.atime": ["relatime", "noatime"]}
    assert (table.max_runs, table.margin, table.budget) == (40, "3%", None)
    assert table.to_table() == given and list(table.to_table()) == list(given)
    assert TuneTable.from_table(table.to_table()) == table
    assert not TuneTable() and table
    with pytest.raises(UserError, match=r"\[tune\] budgets: give a list of levels"):
        TuneTable.from_table({"budgets": "1h"})
