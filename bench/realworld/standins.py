"""Synthetic stand-ins for the downloads of real-world programs: small files of the right format.

Two registries, neither keyed by script name:

* ``KERAS_DATASETS``: ``keras.datasets.<name>.load_data()`` reads Keras' cache
  (``$KERAS_HOME/datasets``); the maker writes the file(s) Keras expects there, under the
  names Keras uses. Keras checks some of them against a hash built into Keras: the run's
  instrumentation waives the check for the files planted here (and only for them).
* ``URL_STANDINS``: a URL pattern (a download the program names in its text) -> a maker of a
  local file in the format the URL serves. The harness rewrites that URL, in its own copies
  of the program, to the local file (``file://`` works for ``keras.utils.get_file``,
  ``urllib``'s ``urlretrieve`` and pandas alike).

Every maker is deterministic (seeded) and writes once into a cache folder shared by a run.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import re
import shutil
import tarfile
import threading
import zipfile
from dataclasses import dataclass, field

import numpy as np

RNG_SEED = 1234


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng([RNG_SEED, sum(map(ord, name))])


def _atomic_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # -j N: two workers may plant one file
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


# ------------------------------------------------------------------ keras.datasets
# Sizes: small round numbers (programs split by fixed batch counts: 51,000 // 500), except where
# Keras' loader fixes them (CIFAR-10's five batches of 10,000) or programs slice by the real
# count (MNIST: ``x_train[:30000]``, ``x_train[30000:]``): MNIST's train set has its real 60,000.
N_TRAIN, N_TEST = 1000, 500
N_MNIST_TRAIN, N_MNIST_TEST = 60000, 1000
#: keras.io's mixup holds out the last 2,000 training images for validation: a smaller stand-in
#: left it an empty training set (StopIteration at its first batch, on both sides)
N_FASHION_TRAIN = 4000


def _images(name, n, shape, classes):
    rng = _rng(name)
    return rng.integers(0, 256, size=(n, *shape), dtype=np.uint8), rng.integers(0, classes, size=n).astype(np.uint8)


def _mnist(datadir):
    xtr, ytr = _images("mnist-train", N_MNIST_TRAIN, (28, 28), 10)
    xte, yte = _images("mnist-test", N_MNIST_TEST, (28, 28), 10)
    path = os.path.join(datadir, "mnist.npz")
    _atomic_bytes(path, _npz_bytes(x_train=xtr, y_train=ytr, x_test=xte, y_test=yte))
    return [path]


def _idx(array: np.ndarray, images: bool) -> bytes:
    header = (b"\x00\x00\x08\x03" + len(array).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2) if images \
        else (b"\x00\x00\x08\x01" + len(array).to_bytes(4, "big"))
    return gzip.compress(header + array.tobytes(), compresslevel=1, mtime=0)


def _fashion_mnist(datadir):
    xtr, ytr = _images("fashion-train", N_FASHION_TRAIN, (28, 28), 10)
    xte, yte = _images("fashion-test", N_TEST, (28, 28), 10)
    folder = os.path.join(datadir, "fashion-mnist")
    files = {"train-labels-idx1-ubyte.gz": _idx(ytr, False), "train-images-idx3-ubyte.gz": _idx(xtr, True),
             "t10k-labels-idx1-ubyte.gz": _idx(yte, False), "t10k-images-idx3-ubyte.gz": _idx(xte, True)}
    paths = []
    for name, data in files.items():
        paths.append(os.path.join(folder, name))
        _atomic_bytes(paths[-1], data)
    return paths


def _cifar_pickle(x, labels: dict) -> bytes:
    batch = {b"data": x.reshape(len(x), -1)}
    batch.update({k.encode(): list(map(int, v)) for k, v in labels.items()})
    return pickle.dumps(batch, protocol=4)  # bytes keys as bytes: what Keras' safe unpickler reads


def _cifar10(datadir):
    members = {}
    for i in range(1, 6):  # keras.datasets.cifar10 fills 5 x 10,000 rows
        x, y = _images(f"cifar10-{i}", 10000, (3, 32, 32), 10)
        members[f"cifar-10-batches-py/data_batch_{i}"] = _cifar_pickle(x, {"labels": y})
    x, y = _images("cifar10-test", 1000, (3, 32, 32), 10)
    members["cifar-10-batches-py/test_batch"] = _cifar_pickle(x, {"labels": y})
    path = os.path.join(datadir, "cifar-10-batches-py-target_archive")
    _atomic_bytes(path, _tar_gz(members))
    return [path]


def _cifar100(datadir):
    members = {}
    for split, n in (("train", N_TRAIN), ("test", N_TEST)):
        x, y = _images(f"cifar100-{split}", n, (3, 32, 32), 100)
        members[f"cifar-100-python/{split}"] = _cifar_pickle(x, {"fine_labels": y, "coarse_labels": y % 20})
    path = os.path.join(datadir, "cifar-100-python-target_archive")
    _atomic_bytes(path, _tar_gz(members))
    return [path]


def _boston_housing(datadir):
    rng = _rng("boston")
    x = rng.uniform(0, 100, size=(506, 13)).astype("float64")
    y = rng.uniform(5, 50, size=506).astype("float64")
    path = os.path.join(datadir, "boston_housing.npz")
    _atomic_bytes(path, _npz_bytes(x=x, y=y))
    return [path]


KERAS_DATASETS = {
    "mnist": _mnist,
    "fashion_mnist": _fashion_mnist,
    "cifar10": _cifar10,
    "cifar100": _cifar100,
    "boston_housing": _boston_housing,
}


# ------------------------------------------------------------------ URL stand-ins
def _heart_csv() -> bytes:
    rng = _rng("heart")
    n = 303
    rows = ["age,sex,cp,trestbps,chol,fbs,restecg,thalach,exang,oldpeak,slope,ca,thal,target"]
    thal = ["fixed", "normal", "reversible"]
    for _ in range(n):
        rows.append(",".join(map(str, [
            rng.integers(29, 78), rng.integers(0, 2), rng.integers(0, 5), rng.integers(94, 201),
            rng.integers(126, 565), rng.integers(0, 2), rng.integers(0, 3), rng.integers(71, 203),
            rng.integers(0, 2), round(float(rng.uniform(0, 6.2)), 1), rng.integers(1, 4), rng.integers(0, 4),
            thal[rng.integers(0, 3)], rng.integers(0, 2)])))
    return ("\n".join(rows) + "\n").encode()


#: the census file's categories as the real set has them (their counts matter: programs size
#: embeddings from one feature's vocabulary and use them for all: deep_neural_decision_forests)
_ADULT_CATS = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "gender": ["Male", "Female"],
    "native_country": ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}


def _adult(split: str) -> bytes:
    """The UCI census file: no header, ', '-separated, 15 columns; the test file has a first
    line that is not a record and labels ending in '.'."""
    rng = _rng("adult-" + split)
    n = 600 if split == "data" else 200
    lines = ["|1x3 Cross validator"] if split == "test" else []
    cats = _ADULT_CATS
    def pick(name, i):  # the first rows walk through every category: the train file has them all
        values = cats[name]
        return values[i] if i < len(values) else rng.choice(values)

    for i in range(n):
        label = ["<=50K", ">50K"][rng.integers(0, 2)] + ("." if split == "test" else "")
        fields = [rng.integers(17, 90), pick("workclass", i), rng.integers(12285, 1484705),
                  pick("education", i), rng.integers(1, 17), pick("marital_status", i),
                  pick("occupation", i), pick("relationship", i), pick("race", i),
                  pick("gender", i), rng.integers(0, 5000), rng.integers(0, 2000),
                  rng.integers(1, 99), pick("native_country", i), label]
        lines.append(", ".join(map(str, fields)))
    return ("\n".join(lines) + "\n").encode()


_JENA_COLUMNS = ["p (mbar)", "T (degC)", "Tpot (K)", "Tdew (degC)", "rh (%)", "VPmax (mbar)", "VPact (mbar)",
                 "VPdef (mbar)", "sh (g/kg)", "H2OC (mmol/mol)", "rho (g/m**3)", "wv (m/s)", "max. wv (m/s)",
                 "wd (deg)"]


def _jena_zip() -> bytes:
    rng = _rng("jena")
    n = 8000  # the program's validation split needs past + future (792) rows beyond its 28.5%
    lines = ['"Date Time",' + ",".join(f'"{c}"' for c in _JENA_COLUMNS)]
    base = np.linspace(0, 20 * np.pi, n)
    for i in range(n):
        day, minute = divmod(i * 10, 24 * 60)
        stamp = f"{1 + day % 28:02d}.01.2009 {minute // 60:02d}:{minute % 60:02d}:00"
        vals = [990 + 10 * np.sin(base[i]) + rng.normal()] + list(rng.normal(10, 5, size=len(_JENA_COLUMNS) - 1))
        lines.append(stamp + "," + ",".join(f"{v:.2f}" for v in vals))
    return _zip({"jena_climate_2009_2016.csv": ("\n".join(lines) + "\n").encode()})


def _moving_mnist_npy() -> bytes:
    rng = _rng("moving-mnist")
    buf = io.BytesIO()
    np.save(buf, rng.integers(0, 256, size=(20, 120, 64, 64), dtype=np.uint8))
    return buf.getvalue()


def _spa_eng_zip() -> bytes:
    rng = _rng("spa-eng")
    eng = ["i", "you", "we", "see", "the", "cat", "dog", "house", "run", "eat", "big", "small"]
    spa = ["yo", "tu", "nosotros", "veo", "el", "gato", "perro", "casa", "corre", "come", "grande", "chico"]
    lines = []
    for _ in range(400):
        k = rng.integers(2, 7)
        idx = rng.integers(0, len(eng), size=k)
        lines.append(" ".join(eng[i] for i in idx).capitalize() + ".\t" + " ".join(spa[i] for i in idx).capitalize() + ".")
    return _zip({"spa-eng/spa.txt": ("\n".join(lines) + "\n").encode()})


def _news20_tar() -> bytes:
    rng = _rng("news20")
    # (with the words programs look up by name: pretrained_word_embeddings indexes "the cat sat on the mat")
    words = ("the graphics card space shuttle hockey game windows driver religion god car engine "
             "cat sat on mat").split()
    members = {}
    for group in ["comp.graphics", "rec.autos", "sci.space", "rec.sport.hockey", "talk.religion.misc"]:
        for j in range(30):
            # a Usenet header of 11 lines, as the real files have (programs drop the first 10 lines)
            head = [f"Xref: cantaloupe.srv.cs.cmu.edu {group}:{38970 + j}", "Path: cantaloupe.srv.cs.cmu.edu!news",
                    "From: a@b.c", f"Newsgroups: {group}", f"Subject: {group} {j}", f"Message-ID: <{j}@b.c>",
                    "Sender: news@b.c", "Organization: none", "References: <1@b.c>", "Date: 5 Apr 93 00:00:00 GMT",
                    "Lines: 6", ""]
            body = [" ".join(rng.choice(words, size=12)) for _ in range(6)]
            members[f"20_newsgroup/{group}/{38970 + j}"] = ("\n".join(head + body) + "\n").encode()
    return _tar_gz(members)


def _image_bytes(rng, size, fmt="PNG", mode="RGB", smooth=False) -> bytes:
    """A random image file (Pillow from the harness's program-deps folder, see deps.py); a
    smooth one (a coarse random grid scaled up) compresses to a small file."""
    from bench.realworld.deps import import_program_dep

    Image = import_program_dep("PIL.Image")
    w, h = size
    chans = {"RGB": 3, "L": 1, "RGBA": 4}[mode]
    if smooth:
        coarse = rng.integers(0, 256, size=(h // 16 + 1, w // 16 + 1, chans), dtype=np.uint8)
        arr = np.ascontiguousarray(np.repeat(np.repeat(coarse, 16, axis=0), 16, axis=1)[:h, :w])
    else:
        arr = rng.integers(0, 256, size=(h, w, chans), dtype=np.uint8)
    img = Image.fromarray(arr[..., 0] if chans == 1 else arr, mode)
    buf = io.BytesIO()
    img.save(buf, fmt)
    return buf.getvalue()


def _acl_imdb_tree(prefix="aclImdb/") -> dict:
    rng = _rng("aclImdb")
    words = "this movie was great bad terrible wonderful acting plot story film boring fun the a and".split()
    members = {}
    for split in ("train", "test"):
        for label in ("pos", "neg") + (("unsup",) if split == "train" else ()):
            for j in range(24):
                text = " ".join(rng.choice(words, size=int(rng.integers(20, 60)))) + " <br /> the end."
                members[f"{prefix}{split}/{label}/{j}_{rng.integers(1, 11)}.txt"] = text.encode()
    members[f"{prefix}imdb.vocab"] = "\n".join(words).encode()
    return members


def _movielens_zip() -> bytes:
    rng = _rng("movielens")
    users = "\n".join(f"{u}::{'MF'[u % 2]}::{[1, 18, 25, 35][u % 4]}::{u % 21}::{10000 + u}" for u in range(1, 61))
    genres = ["Action", "Comedy", "Drama", "Animation", "Children's"]
    movies = "\n".join(f"{m}::Movie {m} (19{50 + m % 50})::{'|'.join(rng.choice(genres, size=2, replace=False))}"
                       for m in range(1, 81))
    ratings = "\n".join(f"{rng.integers(1, 61)}::{rng.integers(1, 81)}::{rng.integers(1, 6)}::{978300000 + i}"
                        for i in range(3000))
    return _zip({"ml-1m/users.dat": users.encode(), "ml-1m/movies.dat": movies.encode("latin-1"),
                 "ml-1m/ratings.dat": ratings.encode()})


def _pemsd7_zip() -> bytes:
    rng = _rng("pemsd7")
    dist = rng.uniform(0, 20000, size=(228, 228))
    speeds = rng.uniform(20, 70, size=(1200, 228))
    w = "\n".join(",".join(f"{v:.1f}" for v in row) for row in dist)
    v = "\n".join(",".join(f"{x:.1f}" for x in row) for row in speeds)
    return _zip({"PeMSD7_W_228.csv": w.encode(), "PeMSD7_V_228.csv": v.encode()})


def _bsds500_tgz() -> bytes:
    rng = _rng("bsds500")
    members = {}
    for split, n in (("train", 12), ("val", 4), ("test", 4)):
        for j in range(n):
            members[f"BSR/BSDS500/data/images/{split}/{j + 1000}.jpg"] = _image_bytes(rng, (321, 481), "JPEG")
    return _tar_gz(members)


def _bsds300_tgz() -> bytes:
    rng = _rng("bsds300")
    members = {}
    for split, n in (("train", 8), ("test", 4)):
        for j in range(n):
            members[f"BSDS300/images/{split}/{j + 2000}.jpg"] = _image_bytes(rng, (481, 321), "JPEG")
    return _tar_gz(members)


def _wav_bytes(rng, seconds: float, rate: int) -> bytes:
    """A mono 16-bit PCM WAV of low noise and a tone (what tf.audio.decode_wav reads)."""
    import wave

    n = int(seconds * rate)
    t = np.arange(n) / rate
    sig = 0.3 * np.sin(2 * np.pi * float(rng.uniform(100, 800)) * t) + 0.05 * rng.normal(size=n)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(sig, -1, 1) * 32767).astype("<i2").tobytes())
    return buf.getvalue()


def _ljspeech_tar() -> bytes:
    """LJSpeech-1.1/: metadata.csv (id|text|normalised text) and wavs/<id>.wav (22,050 Hz)."""
    rng = _rng("ljspeech")
    words = "the a printing art of in which we are concerned differs from most arts and crafts".split()
    members, meta = {}, []
    for j in range(48):
        ident = f"LJ001-{j + 1:04d}"
        text = " ".join(rng.choice(words, size=int(rng.integers(2, 7))))
        meta.append(f"{ident}|{text}|{text}")
        members[f"LJSpeech-1.1/wavs/{ident}.wav"] = _wav_bytes(rng, float(rng.uniform(0.8, 1.6)), 22050)
    members["LJSpeech-1.1/metadata.csv"] = ("\n".join(meta) + "\n").encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2")


def extract_legacy(archive: str, folder: str) -> list[str]:
    """Extract a stand-in archive into ``folder`` as Keras' ``get_file(extract=True)`` did before
    Keras 3 moved extraction into a folder of its own (``<name>_extracted``): the archive's tree
    beside the archive, in the cache folder. Programs written then read it there
    (``Path(path).parent / "20_newsgroup"``, ``data_dir.rstrip("X.zip")``, ``fname="BSR"`` read as
    ``BSR/BSDS500``); the original and the translation find the same files. Returns the members
    written (not an archive: nothing)."""
    if not archive.endswith(ARCHIVE_SUFFIXES):
        return []
    done = os.path.join(folder, ".rw-extracted-" + os.path.basename(archive))
    if os.path.exists(done):
        return []
    os.makedirs(folder, exist_ok=True)
    names = []
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if not n.startswith(("/", "..")) and ".." not in n.split("/")]
            zf.extractall(folder, members=names)
    else:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if not m.name.startswith(("/", "..")) and ".." not in m.name.split("/")]
            tar.extractall(folder, members=members, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            names = [m.name for m in members]
    open(done, "w").close()
    return names


@dataclass(frozen=True)
class UrlStandIn:
    pattern: str  # a regular expression matched against the whole URL
    filename: str
    maker: object  # () -> bytes
    what: str


URL_STANDINS = [
    UrlStandIn(r"https?://.*/heart\.csv", "heart.csv", _heart_csv, "UCI heart disease CSV (303 rows, 14 columns)"),
    UrlStandIn(r"https?://.*/adult/adult\.data", "adult.data", lambda: _adult("data"), "UCI census income, train (600 rows)"),
    UrlStandIn(r"https?://.*/adult/adult\.test", "adult.test", lambda: _adult("test"), "UCI census income, test (200 rows)"),
    UrlStandIn(r"https?://.*/jena_climate_2009_2016\.csv\.zip", "jena_climate_2009_2016.csv.zip", _jena_zip,
               "Jena climate CSV in a zip (8,000 rows, 15 columns)"),
    UrlStandIn(r"https?://.*/mnist_test_seq\.npy", "mnist_test_seq.npy", _moving_mnist_npy,
               "Moving MNIST array (20 frames, 120 sequences, 64x64)"),
    UrlStandIn(r"https?://.*/spa-eng\.zip", "spa-eng.zip", _spa_eng_zip, "English-Spanish pairs in a zip (400 lines)"),
    UrlStandIn(r"https?://.*/news20\.tar\.gz", "news20.tar.gz", _news20_tar, "20 Newsgroups folders (5 groups x 30)"),
    UrlStandIn(r"https?://.*/aclImdb_v1\.tar\.gz", "aclImdb_v1.tar.gz", lambda: _tar_gz(_acl_imdb_tree()),
               "IMDB reviews folders (train/test x pos/neg, train/unsup; 24 each)"),
    UrlStandIn(r"https?://.*/movielens/ml-1m\.zip", "ml-1m.zip", _movielens_zip,
               "MovieLens 1M .dat files (60 users, 80 movies, 3,000 ratings)"),
    UrlStandIn(r"https?://.*/PeMSD7_Full\.zip", "PeMSD7_Full.zip", _pemsd7_zip,
               "PeMSD7 distances (228x228) and speeds (1,200x228) CSVs"),
    UrlStandIn(r"https?://.*/BSDS300-images\.tgz", "BSDS300-images.tgz", _bsds300_tgz,
               "BSDS300 JPEG folders (train 8, test 4; 481x321)"),
    UrlStandIn(r"https?://.*/LJSpeech-1\.1\.tar\.bz2", "LJSpeech-1.1.tar.bz2", _ljspeech_tar,
               "LJSpeech folder: metadata.csv and 48 WAVs (22,050 Hz, 0.8-1.6 s)"),
    UrlStandIn(r"https?://.*/BSR_bsds500\.tgz", "BSR_bsds500.tgz", _bsds500_tgz,
               "BSDS500 JPEG folders (train 12, val 4, test 4; 481x321)"),
]


@dataclass(frozen=True)
class FileStandIn:
    """Data a program reads from a relative path it does not download itself (a `curl`/`wget`
    in its text, outside the code): the maker returns {relative path: bytes} for its folder."""
    pattern: str  # a regular expression searched in the program's text
    name: str
    maker: object  # () -> dict[str, bytes]
    what: str


def _captcha_tree() -> dict:
    rng = _rng("captcha")
    chars = "2345678bcdefgmnpwxy"
    names = set()
    while len(names) < 64:
        names.add("".join(rng.choice(list(chars), size=5)))
    return {f"captcha_images_v2/{n}.png": _image_bytes(rng, (200, 50), "PNG", "RGBA") for n in sorted(names)}


def _lol_tree() -> dict:
    """As many pairs as the real set (the programs slice it by count: [:300], [300:])."""
    rng = _rng("lol")
    members = {}
    for split, n in (("our485", 485), ("eval15", 15)):
        for j in range(n):
            for kind in ("low", "high"):
                members[f"lol_dataset/{split}/{kind}/{j + 1}.png"] = _image_bytes(rng, (200, 150), smooth=True)
    return members


def _glove(dim: int) -> dict:
    rng = _rng(f"glove{dim}")
    words = ["the", "a", "and", "of", "to", "graphics", "space", "car", "god", "hockey", "game", "engine",
             "windows", "driver", "religion", "card", "shuttle", "cat", "sat", "on", "mat"]
    lines = [w + " " + " ".join(f"{v:.5f}" for v in rng.normal(0, 0.5, size=dim)) for w in words]
    return {f"glove.6B.{dim}d.txt": ("\n".join(lines) + "\n").encode()}


def _wikitext2() -> dict:
    rng = _rng("wikitext2")
    words = "the cat sat on a mat and dog ran in park with ball <unk> of to is was".split()
    out = {}
    for split, n in (("train", 400), ("valid", 60), ("test", 60)):
        lines = [" ".join(rng.choice(words, size=int(rng.integers(5, 20)))) for _ in range(n)]
        out[f"data/wikitext-2/{split}.txt"] = ("\n".join(lines) + "\n").encode()
    return out


def _idx_raw(array: np.ndarray, images: bool) -> bytes:
    return gzip.decompress(_idx(array, images))


def _torchvision_mnist(root: str) -> dict:
    """torchvision.datasets.MNIST's raw folder (the uncompressed IDX files it checks for): the
    numbers of the keras.datasets stand-in, so a translation reading keras.datasets.mnist trains
    on what the original trained on."""
    xtr, ytr = _images("mnist-train", N_MNIST_TRAIN, (28, 28), 10)
    xte, yte = _images("mnist-test", N_MNIST_TEST, (28, 28), 10)
    raw = f"{root}/MNIST/raw/"
    return {raw + "train-images-idx3-ubyte": _idx_raw(xtr, True), raw + "train-labels-idx1-ubyte": _idx_raw(ytr, False),
            raw + "t10k-images-idx3-ubyte": _idx_raw(xte, True), raw + "t10k-labels-idx1-ubyte": _idx_raw(yte, False)}


def _speaker_tree() -> dict:
    """The Kaggle speaker-recognition folder as unzipped: one folder of 1-second 16 kHz WAVs per
    speaker (5 x 300; the real set has 1,500 each), and the noise folders (``_background_noise_``,
    ``other``) of longer 16 kHz WAVs."""
    rng = _rng("speakers")
    out = {}
    for speaker in ("Benjamin_Netanyau", "Jens_Stoltenberg", "Julia_Gillard", "Magaret_Tarcher", "Nelson_Mandela"):
        for j in range(300):  # the program shows 10 of one validation batch of 128 (10%): >= 1,280 files
            out[f"16000_pcm_speeches/{speaker}/{j}.wav"] = _wav_bytes(rng, 1.0, 16000)
    for folder, n in (("_background_noise_", 3), ("other", 2)):
        for j in range(n):
            out[f"16000_pcm_speeches/{folder}/noise_{j}.wav"] = _wav_bytes(rng, 3.0, 16000)
    return out


_EEG_LABELS = ["blink1", "blink3", "math1", "math4", "relax", "music", "video-ver1", "thinkOfItems-ver2",
               "colorRound1-2", "readyRound1", "unlabeled", "everyone paired"]


def _eeg_csv() -> dict:
    """The Kaggle EEG CSV (pandas-written, with its index column): ``raw_values`` a JSON list of
    512 readings, ``signal_quality`` mostly 0 (good), one row in ten 200 (programs look rows up by
    index after dropping the bad ones), labels as the set spells them."""
    rng = _rng("eeg")
    cols = ["", "id", "indra_time", "browser_latency", "reading_time", "attention_esense", "meditation_esense",
            "eeg_power", "raw_values", "signal_quality", "createdAt", "updatedAt", "label"]
    lines = [",".join(cols)]
    for i in range(480):
        raw = "[" + ", ".join(str(v) for v in rng.integers(-2048, 2048, size=512)) + "]"
        power = "[" + ", ".join(str(v) for v in rng.integers(0, 100000, size=8)) + "]"
        stamp = f"2015-05-09 23:{i // 60 % 60:02d}:{i % 60:02d}.{i:03d}"
        row = [i, i % 30 + 1, stamp, int(rng.integers(500, 1500)), stamp, int(rng.integers(0, 100)),
               int(rng.integers(0, 100)), f'"{power}"', f'"{raw}"', 200 if i % 10 == 9 else 0, stamp, stamp,
               _EEG_LABELS[i % len(_EEG_LABELS)]]
        lines.append(",".join(map(str, row)))
    return {"eeg-data.csv": ("\n".join(lines) + "\n").encode()}


FILE_STANDINS = [
    FileStandIn(r"captcha_images_v2", "captcha_images_v2/", _captcha_tree,
                "64 captcha PNGs (200x50) named by their 5-character labels"),
    FileStandIn(r"lol_dataset/", "lol_dataset/", _lol_tree, "LOL low/high-light PNG pairs (our485: 485, eval15: 15; 200x150)"),
    FileStandIn(r"[\"']aclImdb/", "aclImdb/", _acl_imdb_tree, "IMDB reviews folders (as the tarball unpacks)"),
    FileStandIn(r"glove\.6B\.50d\.txt", "glove.6B.50d.txt", lambda: _glove(50), "GloVe text vectors (21 words)"),
    FileStandIn(r"wikitext-2", "data/wikitext-2/", _wikitext2, "WikiText-2 token files (400/60/60 lines)"),
    # torchvision's MNIST under the roots the pytorch/examples programs give ('../data', './data/')
    FileStandIn(r"\bMNIST\(", "data/MNIST/", lambda: _torchvision_mnist("data"), "torchvision MNIST raw IDX files"),
    FileStandIn(r"\bMNIST\(", "../data/MNIST/", lambda: _torchvision_mnist("../data"), "torchvision MNIST raw IDX files"),
    FileStandIn(r"16000_pcm_speeches", "16000_pcm_speeches/", _speaker_tree,
                "speaker folders of 1-second 16 kHz WAVs (5 x 300) and noise folders (_background_noise_, other)"),
    FileStandIn(r"eeg-data\.csv", "eeg-data.csv", _eeg_csv, "EEG CSV (480 rows, raw_values of 512 readings)"),
    FileStandIn(r"glove\.6B\.100d\.txt", "glove.6B.100d.txt", lambda: _glove(100), "GloVe text vectors (21 words)"),
]

URL_RE = re.compile(r"""(["'])(https?://[^"'\s]+)\1""")
KERAS_DATASET_RE = re.compile(r"\b(?:keras\.datasets\.|from\s+keras\.datasets\s+import\s+|datasets\.)(\w+)")
#: torchvision's built-in datasets whose Keras translation reads ``keras.datasets`` (the
#: runtime's VisionDataset names them in a string the pattern above cannot see)
TORCHVISION_DATASETS = {"MNIST": "mnist", "FashionMNIST": "fashion_mnist", "CIFAR10": "cifar10",
                        "CIFAR100": "cifar100"}
TORCHVISION_DATASET_RE = re.compile(r"\bdatasets\.(" + "|".join(TORCHVISION_DATASETS) + r")\b")
#: the translation's own call of it (``from torchvision.datasets import MNIST`` in the original:
#: ``VisionDataset("mnist", ...)`` in the translation)
VISION_DATASET_CALL_RE = re.compile(r"\bVisionDataset\(\s*[\"'](\w+)[\"']")


@dataclass
class Plan:
    keras_datasets: list = field(default_factory=list)
    urls: dict = field(default_factory=dict)  # url -> UrlStandIn
    files: list = field(default_factory=list)  # FileStandIn
    unknown_urls: list = field(default_factory=list)


def plan(text: str) -> Plan:
    """Which stand-ins a program's text asks for (data URLs in string literals, keras.datasets)."""
    p = Plan()
    found = KERAS_DATASET_RE.findall(text) + [TORCHVISION_DATASETS[n] for n in TORCHVISION_DATASET_RE.findall(text)] + \
        VISION_DATASET_CALL_RE.findall(text)
    for name in found:
        if name in KERAS_DATASETS and name not in p.keras_datasets:
            p.keras_datasets.append(name)
    for _, url in URL_RE.findall(text):
        hit = next((s for s in URL_STANDINS if re.fullmatch(s.pattern, url)), None)
        if hit:
            p.urls[url] = hit
        elif url not in p.unknown_urls:
            p.unknown_urls.append(url)
    for f in FILE_STANDINS:
        if re.search(f.pattern, text) and not any(s.filename.startswith(f.name.rstrip("/")) for s in p.urls.values()):
            p.files.append(f)
    return p


class StandInCache:
    """Makes each stand-in once per harness run, in ``root``."""

    def __init__(self, root: str):
        self.root = root

    def keras_dataset(self, name: str) -> list[str]:
        datadir = os.path.join(self.root, "keras_datasets", name)
        done = os.path.join(datadir, ".done")
        if not os.path.exists(done):
            files = KERAS_DATASETS[name](datadir)
            _atomic_bytes(done, "\n".join(os.path.relpath(f, datadir) for f in files).encode())
        with open(done) as fh:
            return [os.path.join(datadir, rel) for rel in fh.read().split("\n") if rel]

    def url_file(self, standin: UrlStandIn) -> str:
        path = os.path.join(self.root, "urls", standin.filename)
        if not os.path.exists(path):
            _atomic_bytes(path, standin.maker())
        return path

    def file_tree(self, standin: FileStandIn) -> list[tuple[str, str]]:
        """[(path relative to the program's folder, which may start with ../, cached file)]."""
        folder = os.path.join(self.root, "files", re.sub(r"\W", "_", standin.name))
        manifest = os.path.join(folder, ".manifest")
        if not os.path.exists(manifest):
            rels = []
            for i, (rel, data) in enumerate(sorted(standin.maker().items())):
                _atomic_bytes(os.path.join(folder, str(i)), data)
                rels.append(rel)
            _atomic_bytes(manifest, "\n".join(rels).encode())
        with open(manifest) as fh:
            return [(rel, os.path.join(folder, str(i))) for i, rel in enumerate(fh.read().split("\n"))]

    def plant(self, p: Plan, keras_home: str, cwd: str | None = None) -> tuple[list[str], dict[str, str]]:
        """Link the Keras datasets into ``keras_home/datasets`` (as Keras lays them out), copy the
        relative-path stand-ins beside the program in ``cwd``, and return (planted paths,
        url -> file:// url)."""
        if cwd:
            for f in p.files:
                for rel, cached in self.file_tree(f):
                    dst = os.path.normpath(os.path.join(cwd, rel))
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copyfile(cached, dst)
        planted = []
        for name in p.keras_datasets:
            datadir = os.path.join(self.root, "keras_datasets", name)
            for src in self.keras_dataset(name):
                dst = os.path.join(keras_home, "datasets", os.path.relpath(src, datadir))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                if not os.path.exists(dst):
                    os.symlink(src, dst)
                planted.append(dst)
        urls = {url: "file://" + self.url_file(s) for url, s in p.urls.items()}
        for s in p.urls.values():  # archives: also extracted where earlier Keras put them
            for folder in [os.path.join(keras_home, "datasets")] + ([os.path.join(cwd, "datasets")] if cwd else []):
                extract_legacy(self.url_file(s), folder)
        return planted, urls


# ------------------------------------------------------------------ tensorflow_datasets
@dataclass(frozen=True)
class TfdsSpec:
    """A ``tfds.load`` dataset's stand-in: its features as the real builder declares them
    (``image``: (H, W, C) with None for sizes that vary per example; the stand-in's examples
    all have ``image_size``), the split names with small example counts, and how many classes the
    label declares (``num_classes``) and uses (``labels_used``: a few-shot program needs several
    examples per class)."""
    image_shape: tuple
    num_classes: int
    splits: dict  # split name -> number of examples in the stand-in
    image_size: tuple = ()  # (H, W) of the examples where image_shape has None
    labels_used: int = 0  # 0: every class
    extra: dict = field(default_factory=dict)  # other integer features: name -> number of values


#: dataset name -> stand-in (the names the real-world programs load); data, not code per program
TFDS_DATASETS = {
    "horses_or_humans": TfdsSpec((300, 300, 3), 2, {"train": 64, "test": 32}),
    "tf_flowers": TfdsSpec((None, None, 3), 5, {"train": 120}, image_size=(180, 240)),
    "cats_vs_dogs": TfdsSpec((None, None, 3), 2, {"train": 120}, image_size=(200, 250)),
    "oxford_flowers102": TfdsSpec((None, None, 3), 102, {"train": 64, "validation": 32, "test": 32},
                                  image_size=(160, 200)),
    "omniglot": TfdsSpec((105, 105, 3), 1623, {"train": 160, "test": 80, "small1": 40, "small2": 40},
                         labels_used=20, extra={"alphabet": 50, "alphabet_char_id": 55}),
    "stl10": TfdsSpec((96, 96, 3), 10, {"train": 96, "test": 64, "unlabelled": 128}),
    "cifar10": TfdsSpec((32, 32, 3), 10, {"train": 256, "test": 64}),
    "mnist": TfdsSpec((28, 28, 1), 10, {"train": 256, "test": 64}),
    "cycle_gan/horse2zebra": TfdsSpec((None, None, 3), 2, {"trainA": 32, "trainB": 32, "testA": 12, "testB": 12},
                                      image_size=(256, 256)),
}
TFDS_LABELS = {"cycle_gan": ["A", "B"]}  # label names where the builder names them


class SplitError(ValueError):
    pass


def tfds_split_ranges(split: str, sizes: dict) -> list[tuple[str, int, int]]:
    """tfds' split syntax -> [(split, start, stop)]: ``train``, ``train+test``, ``train[:80%]``,
    ``train[10%:]``, ``train[:100]``, ``train[-20:]`` (percent boundaries rounded to the closest
    example, as tfds does)."""
    out = []
    for part in str(split).split("+"):
        m = re.fullmatch(r"\s*(\w+)\s*(?:\[\s*([-\d]*%?)\s*:\s*([-\d]*%?)\s*\])?\s*", part)
        if not m or m.group(1) not in sizes:
            raise SplitError(f"unknown split {part!r} (stand-in splits: {', '.join(sizes)})")
        name, lo, hi = m.group(1), m.group(2), m.group(3)
        n = sizes[name]

        def bound(text, default):
            if text in (None, ""):
                return default
            if text.endswith("%"):
                v = int(round(int(text[:-1]) * n / 100.0))
            else:
                v = int(text)
            v = n + v if v < 0 else v
            return max(0, min(n, v))

        out.append((name, bound(lo, 0), bound(hi, n)))
    return out


def tfds_examples(name: str, split: str) -> dict:
    """The examples of ``name``'s ``split`` (tfds split syntax) as numpy arrays: {"image": (N, H,
    W, C) uint8, "label": (N,) int64, extra features...}; deterministic, each split's examples the
    same whatever slice is asked for."""
    spec = TFDS_DATASETS[name]
    parts = []
    for split_name, lo, hi in tfds_split_ranges(split, spec.splits):
        n = spec.splits[split_name]
        rng = _rng(f"tfds-{name}-{split_name}")
        h, w, c = spec.image_shape
        if h is None or w is None:
            h, w = spec.image_size
        images = rng.integers(0, 256, size=(n, h, w, c), dtype=np.uint8)
        used = spec.labels_used or spec.num_classes
        labels = (np.arange(n) % used).astype(np.int64) if spec.labels_used else \
            rng.integers(0, spec.num_classes, size=n).astype(np.int64)
        ex = {"image": images, "label": labels}
        for feat, values in spec.extra.items():
            ex[feat] = rng.integers(0, values, size=n).astype(np.int64)
        parts.append({k: v[lo:hi] for k, v in ex.items()})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
