"""torch -> Keras: torch's download utility (``torch.hub.download_url_to_file``; the older
``torch.utils.model_zoo._download_url_to_file`` bound through a ``try:``/``except ImportError:``
chain of imports) is the generated ``download_url_to_file`` (plain Python): the same file
written, the same hash check; not a stub. Both programs run on a ``file://`` URL."""

from __future__ import annotations

import hashlib
import sys

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

PROGRAM = '''
import sys
import torch

try:
    from torch.utils.model_zoo import _download_url_to_file
except ImportError:
    try:
        from torch.hub import download_url_to_file as _download_url_to_file
    except ImportError:
        from torch.hub import _download_url_to_file

if __name__ == "__main__":
    _download_url_to_file(sys.argv[1], "copy.bin", None, False)
    torch.hub.download_url_to_file(sys.argv[1], "checked.bin", hash_prefix=sys.argv[2], progress=False)
    with open("copy.bin", "rb") as a, open("checked.bin", "rb") as b:
        print("bytes", len(a.read()), len(b.read()))
'''


def _run(path, folder, url, prefix):
    return program_runner.run([sys.executable, str(path), url, prefix], cwd=folder, capture_output=True,
                              text=True, timeout=300)


def test_download_url_to_file_writes_the_same_file_and_checks_the_same_hash(tmp_path):
    tr = translate(PROGRAM, "prog.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "import torch" not in tr.text and "import tensorflow" not in tr.text
    assert 'download_url_to_file(sys.argv[1], "copy.bin", None, False)' in tr.text
    source = tmp_path / "source.bin"
    content = bytes(range(256)) * 100
    source.write_bytes(content)
    url = source.as_uri()
    good = hashlib.sha256(content).hexdigest()[:10]
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "out.py").write_text(tr.text)
    for name in ("prog.py", "out.py"):
        folder = tmp_path / name.replace(".py", "_ok")
        folder.mkdir()
        p = _run(tmp_path / name, folder, url, good)
        assert p.returncode == 0, (name, p.stderr[-2000:])
        assert p.stdout.strip().splitlines()[-1] == f"bytes {len(content)} {len(content)}"
        assert (folder / "checked.bin").read_bytes() == content
        folder = tmp_path / name.replace(".py", "_bad")
        folder.mkdir()
        p = _run(tmp_path / name, folder, url, "0" * 10 if not good.startswith("0") else "1" * 10)
        assert p.returncode != 0 and "RuntimeError: invalid hash value" in p.stderr, (name, p.stderr[-2000:])
        assert not (folder / "checked.bin").exists() and (folder / "copy.bin").exists()
        assert sorted(f.name for f in folder.iterdir()) == ["copy.bin"]  # (no partial file left)
