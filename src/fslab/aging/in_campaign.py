"""Aging as a step of a campaign: "age, then measure, against a fresh copy".

A `[[target]]` with `age = { recipe = "interleaved", seed = 1, ... }` (the keys of an aging
config) is aged once, before the campaign's runs, into DIR/aged/<target>/ (aging.json,
the op log, fragmentation probes, image.img), exactly as `fslab age` would; every run
then starts from a private copy of that image. Another target with `fresh_copy_of =
"<that target>"` holds the same files laid out fresh. A resumed campaign reuses a
finished aging; an interrupted one is aged again.
"""

from __future__ import annotations

import dataclasses
import shutil
from typing import Any

from fslab.aging.age import age
from fslab.aging.config import AgingConfig
from fslab.core.errors import UserError
from fslab.host.lab import Lab
from fslab.results.store import ResultsDir
from fslab.targets import TargetSpec
from fslab.targets.images import FILE_NAMES

AGED_DIR = "aged"
TARGET_REF = "target:"


def aging_config(settings: dict[str, Any], where: str) -> AgingConfig:
    """An aging config from a target's `age` table (default: the interleaved recipe)."""
    from pydantic import TypeAdapter, ValidationError

    data = {"ops": None, "recipe": "interleaved", **settings}
    try:
        config = TypeAdapter(AgingConfig).validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"])
        raise UserError(f"{where}: age.{key}: {error['msg']}") from None
    config.validate()
    return config


def age_targets(targets: list[TargetSpec], lab: Lab, results: ResultsDir) -> list[str]:
    """Age the targets that ask for it (or reuse their finished aging); point them and
    their fresh copies at the image. Returns one line per target aged now."""
    done = []
    for spec in targets:
        settings = spec.options.get("age")
        if settings is None:
            continue
        out = results.path / AGED_DIR / spec.name
        image = out / FILE_NAMES["sparse"]
        if not (image.exists() and (out / "image.json").exists()):
            shutil.rmtree(out, ignore_errors=True)  # an interrupted aging starts over
            config = aging_config(settings, f"target {spec.name}")
            plain = dataclasses.replace(spec, options={k: v for k, v in spec.options.items()
                                                       if k != "age"})
            record = age(plain, config, out, lab, image="sparse")
            done.append(f"aged {spec.name}: {record.ops_succeeded} operations, stopped by "
                        f"{record.stopped_by} ({out})")
        spec.options["image"] = str(image)
    for spec in targets:
        reference = str(spec.options.get("fresh_copy_of", ""))
        if reference.startswith(TARGET_REF):
            spec.options["fresh_copy_of"] = str(
                results.path / AGED_DIR / reference[len(TARGET_REF):] / FILE_NAMES["sparse"])
    return done

