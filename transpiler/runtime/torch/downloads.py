"""``keras.utils.get_file`` for generated PyTorch programs: download once, check, extract.

A file is fetched with ``torch.hub.download_url_to_file`` (a temporary file renamed into
place, so an interrupted download leaves nothing behind) into a cache of its own:
``$TRANSPILED_DATA_HOME`` if set, else ``$XDG_CACHE_HOME/transpiled_data`` (by default
``~/.cache/transpiled_data``). Inside it files are laid out as Keras lays out ``~/.keras``
(``<cache_subdir>/<fname>``, ``datasets/`` by default), so pointing the variable at a Keras
cache reuses what Keras downloaded. A file already there with the expected name and hash is
used as is; one whose hash differs is downloaded again, and a download whose hash differs
is refused. The file names, the extraction folder and the hash rules (sha256 or md5, told
apart by length) are Keras' own. Archives are extracted with members outside the target
folder (absolute paths, ``..``, links leaving it) refused.
"""

import hashlib
import os
import shutil
import tarfile
import urllib.parse
import zipfile

from torch.hub import download_url_to_file


def data_home():
    """The download cache: $TRANSPILED_DATA_HOME, else $XDG_CACHE_HOME/transpiled_data."""
    home = os.environ.get("TRANSPILED_DATA_HOME")
    if not home:
        home = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "transpiled_data")
    return os.path.expanduser(home)


def file_hash_matches(path, file_hash, algorithm="auto"):
    """Whether the file's sha256 (or md5: a 32-digit hash, or algorithm="md5") is file_hash."""
    if algorithm == "sha256" or (algorithm == "auto" and len(file_hash) == 64):
        hasher = hashlib.sha256()
    else:
        hasher = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            hasher.update(chunk)
    return hasher.hexdigest() == str(file_hash)


def inside(folder, name):
    """Whether ``name`` (a member path of an archive) stays inside ``folder``."""
    root = os.path.realpath(folder)
    target = os.path.realpath(os.path.join(root, name))
    return os.path.commonpath([root, target]) == root


def extract_archive(path, folder, archive_format="auto"):
    """Extract a tar (plain, gz, bz2, xz) or zip archive into ``folder``; False when the file
    is none of the formats asked ("auto": tar, then zip). A member leaving ``folder`` raises."""
    formats = ["tar", "zip"] if archive_format == "auto" else [archive_format] if isinstance(archive_format, str) \
        else list(archive_format or [])
    for kind in formats:
        if kind == "tar" and tarfile.is_tarfile(path):
            with tarfile.open(path) as archive:
                for member in archive.getmembers():
                    link = os.path.join(os.path.dirname(member.name), member.linkname) if member.issym() \
                        else member.linkname
                    if not inside(folder, member.name) or ((member.issym() or member.islnk())
                                                           and not inside(folder, link)):
                        raise ValueError(f"{path}: member {member.name!r} would be written outside {folder}")
                    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                        raise ValueError(f"{path}: member {member.name!r} is not a file or folder")
                # (checked above; Python's "data" filter, where there is one, checks again)
                archive.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            return True
        if kind == "zip" and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    if not inside(folder, name):
                        raise ValueError(f"{path}: member {name!r} would be written outside {folder}")
                archive.extractall(folder)
            return True
    return False


def cache_folder(cache_subdir="datasets", cache_dir=None):
    """The folder of the cache a file goes to (made if missing): <cache_dir or data_home()>/<cache_subdir>."""
    base = os.path.expanduser(cache_dir) if cache_dir is not None else data_home()
    os.makedirs(base, exist_ok=True)
    if not os.access(base, os.W_OK):
        base = os.path.join("/tmp", "transpiled_data")
    folder = os.path.join(base, cache_subdir)
    os.makedirs(folder, exist_ok=True)
    return folder


def fetch(origin, target, file_hash=None, hash_algorithm="auto", force_download=False):
    """Make ``target`` the file at ``origin``: a file already there is kept when its hash is
    ``file_hash`` (or when no hash is given), else it is downloaded; a download whose hash
    differs is removed and refused. True when it downloaded."""
    if not force_download and os.path.exists(target) and (
            file_hash is None or file_hash_matches(target, file_hash, hash_algorithm)):
        return False
    print(f"Downloading data from {origin}")
    download_url_to_file(origin, target, progress=False)
    if file_hash is not None and not file_hash_matches(target, file_hash, hash_algorithm):
        os.remove(target)
        raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not "
                         f"match the provided value of {file_hash}.")
    return True


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """keras.utils.get_file without Keras: the path of ``origin``'s file in the cache (its
    extraction folder when ``extract``/``untar``), downloaded only when missing or stale."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    folder = cache_folder(cache_subdir, cache_dir)
    given = fname
    fname = os.fspath(fname) if fname else os.path.basename(urllib.parse.urlsplit(origin).path)
    if not fname:
        raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'. "
                         "Please specify the `fname` argument.")
    if given and os.sep in fname:
        raise ValueError(f"Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    target = os.path.join(folder, fname)
    if extract or untar:  # Keras' names: the archive beside the folder it extracts to
        if given and "." in fname:
            extracted = os.path.join(folder, fname[: fname.find(".")] + "_extracted")
        else:
            extracted, target = target, target + "_archive"
    downloaded = fetch(origin, target, file_hash, hash_algorithm, force_download)
    if not (extract or untar):
        return target
    if downloaded or not os.path.isdir(extracted):
        partial = extracted + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        if not extract_archive(target, partial, "tar" if untar else archive_format):
            shutil.rmtree(partial, ignore_errors=True)
            raise ValueError(f"{target} is not an archive of the format {archive_format!r}")
        shutil.rmtree(extracted, ignore_errors=True)
        os.replace(partial, extracted)
    return extracted
