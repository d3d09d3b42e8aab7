"""Which of a set of files were opened while a block ran, by any process, in any mount namespace: an inotify IN_OPEN
watch on each file (the kernel reports an open of the inode, through a bind mount or a symlink alike). A `stat` or
`[ -f ]` is no open; a read, `source`, `cp` or an interpreter loading the file is."""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path
from typing import Generic, Hashable, Mapping, TypeVar

IN_OPEN = 0x20
EVENT_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (a name of len bytes follows)
Label = TypeVar("Label", bound=Hashable)


class FileOpens(Generic[Label]):
    """`with FileOpens({path: label}) as opens: ...`, then `opens.opened()`: the labels of the files opened."""

    def __init__(self, files: Mapping[Path, Label]) -> None:
        self._files = dict(files)
        self._labels: dict[int, Label] = {}
        self._opened: set[Label] = set()
        self._fd = -1

    def __enter__(self) -> "FileOpens[Label]":
        libc = ctypes.CDLL(None, use_errno=True)
        self._fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        for path, label in self._files.items():
            watch = libc.inotify_add_watch(self._fd, os.fsencode(path), IN_OPEN)
            if watch < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
            self._labels[watch] = label
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            while True:
                try:
                    data = os.read(self._fd, 65536)
                except BlockingIOError:
                    break
                offset = 0
                while offset < len(data):
                    watch, mask, _, length = EVENT_HEADER.unpack_from(data, offset)
                    if mask & IN_OPEN:
                        self._opened.add(self._labels[watch])
                    offset += EVENT_HEADER.size + length
        finally:
            os.close(self._fd)

    def opened(self) -> set[Label]:
        return set(self._opened)
