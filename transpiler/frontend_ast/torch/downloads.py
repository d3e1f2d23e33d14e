"""torch's download utilities in a program (``torch.hub.download_url_to_file(url, dst)``, the
older ``torch.utils.model_zoo._download_url_to_file``): the generated ``download_url_to_file``
(transpiler/runtime/keras/downloads.py, plain Python: urllib, hashlib), same arguments, same
file written, same hash check. Imports no deep-learning framework."""

from __future__ import annotations

import libcst as cst

#: the paths of torch's function (``torch.hub``'s since torch 1.1, ``model_zoo``'s before)
DOWNLOAD_PATHS = ("torch.hub.download_url_to_file", "torch.hub._download_url_to_file",
                  "torch.utils.model_zoo._download_url_to_file", "torch.utils.model_zoo.download_url_to_file")
#: torch's parameters, in order
_PARAMS = ("url", "dst", "hash_prefix", "progress")


def download_call(reader, node: cst.Call, pos: list, kw: dict):
    """``download_url_to_file(url, dst, hash_prefix=None, progress=True)`` as the generated
    helper's call, each argument as written."""
    from transpiler.frontend_ast.torch.modules import Unsupported
    from transpiler.frontend_ast.torch.reader_values import OTHER

    if any(a.star for a in node.args) or len(pos) > len(_PARAMS) or set(kw) - set(_PARAMS) or \
            len(pos) + len(kw) < 2:
        raise Unsupported("torch.hub.download_url_to_file() with other than (url, dst, hash_prefix, progress)")
    texts = ["{%d}" % i for i in range(len(pos))] + \
        [f"{name}={{{len(pos) + i}}}" for i, name in enumerate(kw)]
    reader.runtime_expr(node, "download_url_to_file(" + ", ".join(texts) + ")", list(pos) + list(kw.values()),
                        ["download_url_to_file"])
    return OTHER
