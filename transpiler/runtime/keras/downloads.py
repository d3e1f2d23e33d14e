"""torch's download utilities for generated Keras programs (PyTorch -> Keras), without torch:
``download_url_to_file`` as ``torch.hub``'s. (A helper is copied into the program without
this module's imports: each imports what it uses.)"""


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """torch.hub.download_url_to_file: ``url``'s content written to ``dst`` (into a temporary
    file beside it, moved there once complete); with ``hash_prefix``, the SHA-256 of the
    content must start with it (RuntimeError otherwise, as torch's, and ``dst`` is not
    written). ``progress`` prints the bytes received to stderr."""
    import hashlib
    import os
    import shutil
    import sys
    import tempfile
    import urllib.request

    dst = os.path.expanduser(dst)
    folder = os.path.dirname(os.path.abspath(dst))
    handle, partial = tempfile.mkstemp(prefix=os.path.basename(dst) + ".", suffix=".partial", dir=folder)
    digest = hashlib.sha256()
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "torch.hub"})
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(request) as response:
            total = response.headers.get("Content-Length")
            received = 0
            while True:
                chunk = response.read(8192)
                if not chunk:
                    break
                out.write(chunk)
                digest.update(chunk)
                received += len(chunk)
                if progress:
                    print(f"\r{received}/{total or '?'} bytes", end="", file=sys.stderr)
        if progress:
            print(file=sys.stderr)
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
