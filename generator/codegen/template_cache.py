"""The templates' compiled code, kept between runs under `generated/.envgen-cache/templates/`.

Compiling the Jinja templates is about a tenth of a run that regenerates one env; loading
their code from this cache takes a few milliseconds. The cache lives in a folder named by a
key over everything that decides the compiled code (jinja2's version, the Python that
compiled it, the environment's settings and every template's bytes), so code compiled
under anything else is never loaded: a new key starts an empty folder and the old ones are
removed. Each file is checked again on loading (Jinja's header, the template source's
checksum, a code object), and anything unreadable is a miss; the cache never changes what
a template renders, and failing to write it is never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import pickle
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from types import CodeType

import jinja2
from jinja2.bccache import Bucket, bc_magic

from generator.codegen.cache import CACHE_DIR, cache_folder

TEMPLATES_FOLDER = "templates"
"""The cache folder's subfolder that holds one folder per key."""


def cache_key(templates_dir: Path, settings: Mapping[str, object]) -> str:
    """What the compiled code of `templates_dir`'s templates depends on, as a hash."""
    h = hashlib.sha256(f"jinja2 {jinja2.__version__}\n{sys.implementation.cache_tag}\n".encode())
    h.update(repr(sorted(settings.items())).encode() + b"\n")
    for path in sorted(templates_dir.glob("*.jinja")):
        h.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:32]


class TemplateCache(jinja2.BytecodeCache):
    """Jinja's bytecode cache in `out`'s cache folder, under `key`: one file per template.

    Nothing is written while `out` (the `generated/` folder) does not exist: the cache
    never creates it. Files are written as envgen writes any file (the umask applies) and
    swapped in whole.
    """

    def __init__(self, out: Path, key: str) -> None:
        self._out = out
        self._folder = out / CACHE_DIR / TEMPLATES_FOLDER / key

    def _path(self, bucket: Bucket) -> Path:
        return self._folder / f"{bucket.key}.cache"

    def load_bytecode(self, bucket: Bucket) -> None:
        """The bucket's code if its file holds code for this very source, else nothing.

        Read here rather than by `Bucket.load_bytecode`, which unpickles what follows the
        header and lets a truncated or foreign file raise.
        """
        try:
            data = self._path(bucket).read_bytes()
        except OSError:
            return
        head = bc_magic + pickle.dumps(bucket.checksum, 2)
        if not data.startswith(head):
            return
        try:
            code = marshal.loads(data[len(head) :])
        except (EOFError, ValueError, TypeError):
            return
        if isinstance(code, CodeType):
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Store the bucket's code; the first store of a key removes the other keys' folders."""
        if not self._out.is_dir():
            return
        target = self._path(bucket)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            if not self._folder.is_dir():
                keys = cache_folder(self._out) / TEMPLATES_FOLDER
                if keys.is_dir():
                    for stale in keys.iterdir():
                        shutil.rmtree(stale, ignore_errors=True)
                self._folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as out:
                bucket.write_bytecode(out)
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):  # none was made when its folder could not be
                tmp.unlink()
