"""keras.utils.get_file → transpiler/runtime/torch/downloads.py (torch.hub's downloader, a
cache of its own, Keras' names and hash rules). Nothing leaves the machine: the "downloads"
are file:// URLs of synthetic files in a temporary folder, and the tests that must not
download replace the downloader with one that fails."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import zipfile

import pytest

torch = pytest.importorskip("torch")

from transpiler.runtime.torch import downloads  # noqa: E402


@pytest.fixture
def home(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("TRANSPILED_DATA_HOME", str(folder))
    return folder


@pytest.fixture
def served(tmp_path):
    """A folder of files "served" by file:// URLs."""
    folder = tmp_path / "served"
    folder.mkdir()
    return folder


def _url(path) -> str:
    return path.resolve().as_uri()


def _no_download(monkeypatch):
    def fail(url, *args, **kwargs):
        raise AssertionError(f"tried to download {url}")

    monkeypatch.setattr(downloads, "download_url_to_file", fail)


def _tar_gz(path, members: dict[str, bytes]):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_a_missing_file_is_downloaded_into_the_own_cache(home, served):
    (served / "data.csv").write_text("a,b\n1,2\n")
    path = downloads.get_file("data.csv", _url(served / "data.csv"))
    assert path == str(home / "datasets" / "data.csv")
    assert open(path).read() == "a,b\n1,2\n"


def test_the_file_name_defaults_to_the_urls_last_part(home, served):
    (served / "table.txt").write_text("x")
    assert downloads.get_file(origin=_url(served / "table.txt")) == str(home / "datasets" / "table.txt")


def test_the_cache_follows_xdg_when_the_variable_is_unset(tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSPILED_DATA_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert downloads.data_home() == str(tmp_path / "xdg" / "transpiled_data")


@pytest.mark.parametrize("algorithm", ["sha256", "md5"])
def test_a_cached_file_with_the_expected_hash_is_used_without_downloading(home, monkeypatch, algorithm):
    data = b"cached bytes"
    (home / "datasets").mkdir(parents=True)
    (home / "datasets" / "f.bin").write_bytes(data)
    digest = hashlib.new(algorithm, data).hexdigest()
    _no_download(monkeypatch)
    assert downloads.get_file("f.bin", "https://example.invalid/f.bin", file_hash=digest) == \
        str(home / "datasets" / "f.bin")
    assert downloads.get_file("f.bin", "https://example.invalid/f.bin", md5_hash=hashlib.md5(data).hexdigest())


def test_a_cached_file_with_another_hash_is_downloaded_again(home, served):
    good = b"the real file"
    (served / "f.bin").write_bytes(good)
    (home / "datasets").mkdir(parents=True)
    (home / "datasets" / "f.bin").write_bytes(b"truncated")
    path = downloads.get_file("f.bin", _url(served / "f.bin"), file_hash=hashlib.sha256(good).hexdigest())
    assert open(path, "rb").read() == good


def test_a_download_with_the_wrong_hash_is_refused_and_removed(home, served):
    (served / "f.bin").write_bytes(b"tampered")
    with pytest.raises(ValueError, match="hash"):
        downloads.get_file("f.bin", _url(served / "f.bin"), file_hash="0" * 64)
    assert not (home / "datasets" / "f.bin").exists()


def test_a_cached_file_without_a_hash_is_used(home, monkeypatch):
    (home / "datasets").mkdir(parents=True)
    (home / "datasets" / "f.bin").write_bytes(b"anything")
    _no_download(monkeypatch)
    assert downloads.get_file("f.bin", "https://example.invalid/f.bin").endswith("f.bin")


def test_cache_subdir_and_cache_dir_place_the_file_as_keras_does(tmp_path, home, served):
    (served / "w.h5").write_bytes(b"w")
    assert downloads.get_file("w.h5", _url(served / "w.h5"), cache_subdir="models") == str(home / "models" / "w.h5")
    other = tmp_path / "elsewhere"
    assert downloads.get_file("w.h5", _url(served / "w.h5"), cache_dir=str(other)) == str(other / "datasets" / "w.h5")


def test_a_path_as_fname_is_refused_as_keras_refuses_it(home):
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        downloads.get_file(os.path.join("a", "b.txt"), "https://example.invalid/b.txt")


# -- archives: the same names and trees as keras.utils.get_file -----------------------------------------------


def _keras_get_file(monkeypatch, keras_home, **kwargs):
    keras = pytest.importorskip("keras")
    from keras.src.backend import config as keras_config

    keras_home.mkdir()  # (Keras falls back to /tmp/.keras when its home is not there)
    monkeypatch.setenv("KERAS_HOME", str(keras_home))
    monkeypatch.setattr(keras_config, "_KERAS_DIR", str(keras_home))
    return keras.utils.get_file(**kwargs)


def _tree(folder) -> dict[str, bytes]:
    out = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            out[os.path.relpath(path, folder)] = open(path, "rb").read()
    return out


ARCHIVES = [
    ({"fname": "BSR", "untar": True}, "tar"),  # super_resolution_sub_pixel
    ({"fname": "spa-eng.zip", "extract": True}, "zip"),  # neural_machine_translation_with_transformer
    ({"extract": True, "archive_format": "zip"}, "zip"),  # timeseries_traffic_forecasting (no fname)
    ({"fname": "cifar-10-batches-py-target", "extract": True}, "tar"),  # keras.datasets.cifar10
]


@pytest.mark.parametrize("kwargs, kind", ARCHIVES, ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items())
                         if isinstance(v, dict) else v)
def test_archives_are_extracted_where_keras_extracts_them(tmp_path, home, served, monkeypatch, kwargs, kind):
    members = {"top/a.txt": b"alpha", "top/sub/b.bin": bytes(range(7))}
    source = served / ("data.tar.gz" if kind == "tar" else "data.zip")
    if kind == "tar":
        _tar_gz(source, members)
    else:
        with zipfile.ZipFile(source, "w") as zf:
            for name, data in members.items():
                zf.writestr(name, data)
    ours = downloads.get_file(origin=_url(source), **kwargs)
    keras_home = tmp_path / "keras_home"
    theirs = _keras_get_file(monkeypatch, keras_home, origin=_url(source), **kwargs)
    assert os.path.relpath(ours, home) == os.path.relpath(theirs, keras_home)
    assert _tree(ours) == _tree(theirs) == members
    _no_download(monkeypatch)  # the second call uses the cache
    assert downloads.get_file(origin=_url(source), **kwargs) == ours


@pytest.mark.parametrize("member", ["../evil.txt", "/abs/evil.txt"])
def test_an_archive_member_leaving_the_folder_is_refused(home, served, member):
    _tar_gz(served / "bad.tar.gz", {member: b"x"})
    with pytest.raises(ValueError, match="outside"):
        downloads.get_file("bad", _url(served / "bad.tar.gz"), untar=True)
    assert not (home / "evil.txt").exists() and not (home / "datasets" / "bad").exists()


def test_a_tar_link_leaving_the_folder_is_refused(home, served):
    with tarfile.open(served / "link.tar", "w") as tar:
        info = tarfile.TarInfo("top/link")
        info.type, info.linkname = tarfile.SYMTYPE, "../../../etc/passwd"
        tar.addfile(info)
    with pytest.raises(ValueError, match="outside"):
        downloads.get_file("link", _url(served / "link.tar"), extract=True)
