"""Reading a configs/bundle directory: which device each file belongs to, which kind it is,
what is skipped and said."""

from __future__ import annotations

import shutil
from pathlib import Path

from aifabric.dialects.load import load_observed

EV = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
SONIC = EV / "sonic-config-db" / "db-migrator-reference-format-3-0-1" / "input.json"
NXOS = EV / "nxos-config" / "amd-n9364e-dcqcn" / "input.txt"
TCLASS = EV / "rdma-traffic-class" / "ucx-pr11105-readback" / "input.txt"


def test_device_by_file_name_prefix_and_directory(tmp_path: Path) -> None:
    shutil.copy(SONIC, tmp_path / "leaf01-config_db.json")
    (tmp_path / "leaf02").mkdir()
    shutil.copy(NXOS, tmp_path / "leaf02" / "running-config")
    (tmp_path / "srv01").mkdir()
    shutil.copy(TCLASS, tmp_path / "srv01" / "traffic_class")
    obs = load_observed(configs=tmp_path, devices=["leaf01", "leaf02", "leaf010", "srv01"])
    assert obs.devices["leaf01"].dialect == "sonic"
    assert obs.devices["leaf02"].dialect == "nxos"
    host = obs.devices["srv01"]
    assert host.role == "host"
    # Global tclass=106: ToS 106 -> DSCP 26 (106 >> 2)
    assert [v.value for v in host.host_dscp] == [26]


def test_bare_number_sysfs_file_is_read_by_its_name(tmp_path: Path) -> None:
    (tmp_path / "srv01").mkdir()
    (tmp_path / "srv01" / "default_roce_tos").write_text("104\n")
    obs = load_observed(bundle=tmp_path, devices=["srv01"])
    assert [v.value for v in obs.devices["srv01"].host_dscp] == [26]


def test_unrecognised_files_are_listed_not_lost(tmp_path: Path) -> None:
    shutil.copy(SONIC, tmp_path / "leaf01.json")
    (tmp_path / "notes.txt").write_text("rack 4 was recabled on Tuesday\n")
    (tmp_path / "empty.cfg").write_text("")
    obs = load_observed(configs=tmp_path, devices=["leaf01"])
    assert set(obs.devices) == {"leaf01"}
    skipped = "\n".join(obs.skipped)
    assert "notes.txt" in skipped and "empty.cfg" in skipped


def test_two_files_of_one_switch_merge(tmp_path: Path) -> None:
    (tmp_path / "leaf01").mkdir()
    shutil.copy(SONIC, tmp_path / "leaf01" / "config_db.json")
    shutil.copy(NXOS, tmp_path / "leaf01" / "extra.cfg")
    obs = load_observed(configs=tmp_path, devices=["leaf01"])
    dev = obs.devices["leaf01"]
    assert len(dev.files) == 2
