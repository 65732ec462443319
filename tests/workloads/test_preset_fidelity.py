"""Every value a preset labels [study] is the study's own, and every value a study gives is
labelled so (issue 23). The studies' values are kept here, each with its place in the
study, so the test needs no copy of the studies (users' clones lack ../shared)."""

import json

from fslab.plan.listings import presets_json

# preset -> (study, {job or "published" or "published:JOB": {param: value}}); comments give
# the place in the study.
DESKTOP = {  # the notebook's bash script: randread.fio ... mixed.fio
    "randread": {"rw": "randread", "bs": "4k", "numjobs": 4, "ioengine": "sync",
                 "time_based": 1},
    "randwrite": {"rw": "randwrite", "bs": "4k", "numjobs": 4, "ioengine": "sync",
                  "time_based": 1},
    "seqread": {"rw": "read", "bs": "1M", "numjobs": 1, "ioengine": "sync", "time_based": 1},
    "seqwrite": {"rw": "write", "bs": "1M", "numjobs": 1, "ioengine": "sync",
                 "time_based": 1},
    "mixed": {"rw": "randrw", "bs": "4k", "numjobs": 4, "ioengine": "sync",
              "rwmixread": 70, "time_based": 1},
    # runtime=60s, size=1G in every job file; `for i in {0..9}`; Btrfs, Ext4, XFS, ZFS
    "published": {"runtime": 60, "file_size": "1G", "iterations": 10,
                  "filesystems": ["btrfs", "ext4", "xfs", "zfs"]},
}
SERVER_GLOBAL = {"ioengine": "libaio", "direct": 1, "time_based": 1, "group_reporting": 1,
                 "cpus_allowed_policy": "split", "stonewall": 1}  # section 5, [global]
MIRROR_JOB = {"rw": "randrw", "rwmixread": 70, "numjobs": 8, "direct": 1,
              "ioengine": "libaio", "group_reporting": 1,  # the fio command line
              "iodepth": 1,  # its output: "ioengine=libaio, iodepth=1", "IO depths : 1=100.0%"
              "time_based": 0}  # no --time_based: ZFS's 16k run ended at 519,310 ms
MIRROR_PUBLISHED = {"runtime": 600, "file_size": "1G",
                    "filesystems": ["md-raid1-ext4", "md-raid1-xfs", "zfs-mirror"]}
MIRROR_FS = {"filesystems": MIRROR_PUBLISHED["filesystems"]}
STUDY_VALUES = {
    "basic5": ("desktop-fio", DESKTOP),
    "direct5": ("desktop-fio", {  # fslab's variant: O_DIRECT and a ramp are fslab's
        job: {k: v for k, v in values.items()} for job, values in DESKTOP.items()}),
    "server6": ("btrfs-zfs-hpc", {
        "seqread": {**SERVER_GLOBAL, "rw": "read", "bs": "1M", "numjobs": 1},
        "seqwrite": {**SERVER_GLOBAL, "rw": "write", "bs": "1M", "numjobs": 1},
        "randread": SERVER_GLOBAL, "randwrite": SERVER_GLOBAL, "mixed": SERVER_GLOBAL,
        "web": {**SERVER_GLOBAL, "rw": "randrw", "rwmixread": 80, "iodepth": 64},  # 6.4
        "db": {**SERVER_GLOBAL, "rw": "randrw", "rwmixread": 50, "bsrange": "8k-64k",
               "iodepth": 128, "numjobs": 1},  # section 5, [job_6_db_server]
        "hpc": {k: v for k, v in SERVER_GLOBAL.items() if k != "time_based"},
        "published": {"runtime": 600, "file_size": "10G",
                      "filesystems": ["btrfs", "xfs", "zfs"]},  # section 3
        "published:seqread": {"size": "100G"}, "published:seqwrite": {"size": "100G"},
        "published:db": {"size": "100G"}, "published:web": {"size": "100G"},  # 6.4
        # 6.1 'RAIDZ topologies'; section 5: caching on and off (primarycache = none)
        "published target zfs": {"layout": "raidz1", "primarycache": ["all", "none"]},
    }),
    "randrw16k": ("raid1-fs", {"randrw16k": {**MIRROR_JOB, "bs": "16k"},
                               "published": MIRROR_PUBLISHED}),
    "randrw128k": ("raid1-fs", {"randrw128k": {**MIRROR_JOB, "bs": "128k"},
                                "published": MIRROR_PUBLISHED}),
    # the same job as a factor of block size: 16k first, sweep bs = ["16k", "128k"]
    "randrw": ("raid1-fs", {"randrw": {**MIRROR_JOB, "bs": "16k"},
                            "published": MIRROR_PUBLISHED}),
    "bonnie": ("raid1-fs", {  # "writes 128 GB ... because the server has 64 GB RAM"; -n 16
        "published": {**MIRROR_FS, "file_size": "2xRAM", "files_k": 16}}),
    "smallfiles": ("raid1-fs", {  # Tests using Perl: 100.000 files with 4KB and 128KB
        "smallfiles_4k": {"count": 100_000, "size": "4k",
                          "phases": "write, rewrite, read, delete; a sync after each"},
        "smallfiles_128k": {"count": 100_000, "size": "128k",
                            "phases": "write, rewrite, read, delete; a sync after each"},
        "published": {**MIRROR_FS, "count": 100_000}}),
    "files": ("usb-files", {  # Setup; Sample Sizes; How I ran tests
        "files_small": {"size": "10M"}, "files_large": {"size": "100M"},
        "published": {"small_size": "10M", "large_size": "100M", "small_count": 500,
                      "large_count": 250, "tool": "dd", "flush": "none",
                      "filesystems": ["fat32", "ext2", "ext4", "ntfs", "xfs"]}}),
    "aged": ("aging-thesis", {  # section 6.1, FIO settings; 6.2; 7.5
        "aged": {"bs": "4k", "filesize": "4k", "openfiles": 100, "create_on_open": 1,
                 "file_service_type": "gauss", "time_based": 1},
        "published": {"runtime": 600, "filesystems": ["xfs", "ext4"], "fresh": "run",
                      "fstrim": True}}),  # 6.2: sync, fstrim, dropped caches before each
}
# Values the studies do not give, which must never be labelled [study] again (None), and
# values once wrongly used in place of the study's.
NOT_FROM_A_STUDY = [
    ("randrw16k", "randrw16k", "iodepth", 16), ("server6", "db", "bssplit", None),
    ("server6", "randread", "rw", None), ("server6", "mixed", "rwmixread", None),
    ("server6", "web", "bssplit", None), ("server6", "hpc", "rw", None),
    ("server6", "hpc", "numjobs", None),
    ("aged", "aged", "rw", None), ("aged", "aged", "fsync", None),
    ("aged", "aged", "ioengine", None), ("aged", "aged", "nrfiles", None),
    ("files", "files_small", "flush", None), ("files", "files_small", "count", None),
]


def _normal(value):
    return list(value) if isinstance(value, tuple | list) else value


def labelled_study_values(preset):
    """(place, param) -> (value, study) for every [study] value `presets --json` gives."""
    found = {}
    for job, params in preset["jobs"].items():
        for key, param in params.items():
            if param["source"] == "study":
                found[(job, key)] = (param["value"], param["study"])
    published = preset["published"] or {}
    for key, param in published.items():  # every campaign-level value, new ones too
        if isinstance(param, dict) and param.get("source") == "study":
            found[("published", key)] = (param["value"], param["study"])
    for key, param in (published.get("options") or {}).items():
        if param["source"] == "study":
            found[("published", key)] = (param["value"], param["study"])
    for job, values in (published.get("sections") or {}).items():
        for key, param in values.items():
            if param["source"] == "study":
                found[(f"published:{job}", key)] = (param["value"], param["study"])
    for fs, values in (published.get("targets") or {}).items():
        for key, param in values.items():
            if param["source"] == "study":
                found[(f"published target {fs}", key)] = (param["value"], param["study"])
    return found


def test_every_parameter_of_every_preset_has_a_source():
    data = json.loads(presets_json())
    kinds = {"study", "fio default", "fslab's choice", "campaign"}
    for name, preset in data["presets"].items():
        assert preset["jobs"], name
        for job, params in preset["jobs"].items():
            assert params, (name, job)
            for key, param in params.items():
                assert param["source"] in kinds, (name, job, key, param)
                if param["source"] == "study":
                    assert param["study"] in data["studies"] and param["where"], (name, key)
                elif param["source"] == "fslab's choice":
                    assert param["why"], (name, job, key)  # fslab says why


def test_every_study_value_is_the_studys_and_labelled_so():
    presets = json.loads(presets_json())["presets"]
    for name, (study, table) in STUDY_VALUES.items():
        found = labelled_study_values(presets[name])
        expected = {(place, key): value for place, values in table.items()
                    for key, value in values.items()}
        for (place, key), (value, source_study) in found.items():
            assert (place, key) in expected, f"{name} {place} {key}={value} says [study]"
            assert _normal(value) == expected[(place, key)], (name, place, key, value)
            assert source_study == study, (name, place, key)
        missing = sorted(set(expected) - set(found))
        assert not missing, f"{name}: the study gives these, not labelled [study]: {missing}"


def test_values_no_study_gives_are_not_labelled_study():
    presets = json.loads(presets_json())["presets"]
    for name, job, key, wrong in NOT_FROM_A_STUDY:
        param = presets[name]["jobs"][job].get(key)
        if wrong is None:
            assert param is None or param["source"] != "study", (name, job, key)
        else:
            assert param["value"] != wrong, (name, job, key)


def test_presets_from_a_study_name_it_and_fslabs_own_say_so():
    data = json.loads(presets_json())
    for name, preset in data["presets"].items():
        if name in STUDY_VALUES and name != "direct5":
            assert preset["study"] == STUDY_VALUES[name][0], name
            assert preset["published"]["study"] == preset["study"], name
        else:
            assert preset["study"] is None, name
            assert preset["cite"] == "fslab's own", name
