"""Serving the agent's file requests: ``fs/read_text_file`` and ``fs/write_text_file``.

ACP v1 lets an agent read and write text files through the client (schema v1,
``ReadTextFileRequest`` / ``WriteTextFileRequest``), if the client advertised
``clientCapabilities.fs``; v2 removed both. acp_lite handles neither unless you
pass a handler: ``connect(..., files=LocalFiles())``. A handler is any object with
the methods of :class:`FileHandler`; they run in a worker thread, so they may block.

Everything here is plain Python (no trio): the path confinement of
:meth:`Workspace.resolve`, the built-in :class:`LocalFiles`, and
:func:`error_answer`, which turns what a handler raised into the JSON-RPC error
the agent receives.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from acp_lite import _lazy_attrs as lazy_attrs
from acp_lite.errors import HandlerError, PathNotAllowed

__all__ = [
    "FileHandler",
    "HandlerError",
    "LocalFiles",
    "PathNotAllowed",
    "Workspace",
    "error_answer",
]

# JSON-RPC codes (schema v1 ErrorCode), spelled out as acp_lite.errors does.
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

#: What ``LocalFiles`` reads at most in one answer (characters of the selected lines).
DEFAULT_MAX_READ = 16 * 1024 * 1024


@lazy_attrs.frozen
class Workspace:
    """What a handler knows of the session a request names.

    ``cwd`` and ``additional_directories`` are those the client sent in
    ``session/new`` (or ``session/resume`` / ``session/fork``), as absolute
    paths; ``session`` is the client's session object (``AsyncSession``, or the
    blocking ``Session``), ``None`` for a session the client is still opening.
    """

    session_id: str
    cwd: str
    additional_directories: tuple[str, ...] = ()
    session: object = attrs.field(default=None, eq=False, repr=False)

    @property
    def roots(self) -> tuple[str, ...]:
        """The directories the session may use: ``cwd``, then the additional ones."""
        return (self.cwd, *self.additional_directories)

    def resolve(self, path: object) -> str:
        """The real path of ``path`` (symlinks resolved) if the session may use it.

        Raises :class:`PathNotAllowed` for anything but an absolute path without
        ``..`` whose real path is one of :attr:`roots` or inside one. The checked
        real path is what the caller should open: a symlink swapped in later
        cannot redirect it (open it with ``O_NOFOLLOW``).
        """
        if not isinstance(path, str) or not path:
            raise PathNotAllowed(f"path must be a non-empty string, not {path!r}", path=path)
        if "\x00" in path:
            raise PathNotAllowed("path must not contain a NUL character", path=path)
        if not os.path.isabs(path):
            raise PathNotAllowed(f"path must be absolute: {path!r}", path=path)
        if ".." in path.split(os.sep):
            raise PathNotAllowed(f"path must not contain '..': {path!r}", path=path)
        real = os.path.realpath(path)
        if _inside(real, [os.path.realpath(r) for r in self.roots]):
            return real
        where = ", ".join(self.roots)
        if _inside(os.path.normpath(path), [os.path.normpath(r) for r in self.roots]):
            raise PathNotAllowed(
                f"{path!r} leads through a symlink to {real!r}, outside the session's "
                f"directories ({where})",
                path=path,
            )
        raise PathNotAllowed(f"{path!r} is outside the session's directories ({where})", path=path)

    def resolve_directory(self, path: object) -> str:
        """:meth:`resolve` for a directory that must exist (a terminal's ``cwd``)."""
        real = self.resolve(path)
        if not os.path.isdir(real):
            raise HandlerError(
                f"not a directory: {path!r}", code=RESOURCE_NOT_FOUND, data={"path": path}
            )
        return real


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


@runtime_checkable
class FileHandler(Protocol):
    """What ``files=`` takes: both methods run in a worker thread.

    ``read_text_file`` returns the text of the file at ``path`` from 1-based
    ``line`` (``None``: the first), at most ``limit`` lines (``None``: all);
    ``write_text_file`` replaces the file's content. Raise :class:`HandlerError`
    (or an ``OSError``) to answer the agent with an error; see :func:`error_answer`.
    An object whose ``read_only`` attribute is true is advertised for reading only.
    """

    def read_text_file(
        self, workspace: Workspace, path: str, line: int | None, limit: int | None
    ) -> str:
        """The requested lines of the file, as the agent receives them."""
        ...

    def write_text_file(self, workspace: Workspace, path: str, content: str) -> None:
        """Write ``content`` to the file (creating the file if it does not exist)."""
        ...


class LocalFiles:
    """The local file system, confined to each session's directories.

    Paths must be absolute, without ``..``, and lie (symlinks resolved) in the
    session's ``cwd`` or one of its ``additional_directories``; anything else is
    answered -32602 (:class:`PathNotAllowed`). Files are UTF-8 text; line endings
    are kept as they are. ``read_only=True`` advertises and serves reads only.
    A write creates a missing file but not a missing directory (-32002), unless
    ``create_dirs=True``; it goes to a temporary file beside the target, then
    replaces it (a reader never sees half a file; an existing file keeps its mode).
    A read answers at most ``max_read_bytes`` characters (more is an error: ask
    for fewer lines with ``line``/``limit``).
    """

    def __init__(
        self,
        *,
        read_only: bool = False,
        create_dirs: bool = False,
        max_read_bytes: int = DEFAULT_MAX_READ,
    ) -> None:
        self.read_only = read_only
        self.create_dirs = create_dirs
        self.max_read_bytes = max_read_bytes

    def __repr__(self) -> str:
        flags = ", read_only=True" if self.read_only else ""
        flags += ", create_dirs=True" if self.create_dirs else ""
        return f"LocalFiles({flags.lstrip(', ')})"

    def read_text_file(
        self, workspace: Workspace, path: str, line: int | None = None, limit: int | None = None
    ) -> str:
        """Lines ``line`` (1-based; 0 reads as 1) .. ``line + limit - 1`` of the file."""
        real = workspace.resolve(path)
        first = max(line or 1, 1)
        taken: list[str] = []
        size = 0
        with _open_regular(real, path) as f:
            try:
                for number, text in enumerate(f, 1):
                    if number < first:
                        continue
                    if limit is not None and len(taken) >= limit:
                        break
                    size += len(text)
                    if size > self.max_read_bytes:
                        raise HandlerError(
                            f"{path!r}: the lines asked for exceed {self.max_read_bytes} "
                            "characters; ask for fewer (line, limit)",
                            data={"path": path},
                        )
                    taken.append(text)
            except UnicodeDecodeError as exc:
                raise HandlerError(
                    f"{path!r} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                    data={"path": path},
                ) from None
        return "".join(taken)

    def write_text_file(self, workspace: Workspace, path: str, content: str) -> None:
        """Replace the file's content with ``content`` (UTF-8), creating the file."""
        if self.read_only:
            raise HandlerError("this client does not allow writing files", code=-32601)
        real = workspace.resolve(path)
        parent = os.path.dirname(real)
        if not os.path.isdir(parent):
            if not self.create_dirs:
                raise HandlerError(
                    f"the directory of {path!r} does not exist",
                    code=RESOURCE_NOT_FOUND,
                    data={"path": path},
                )
            os.makedirs(parent, exist_ok=True)
        mode: int | None = None
        try:
            st = os.stat(real, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(st.st_mode):
                raise HandlerError(
                    f"not a regular file: {path!r}", code=INVALID_PARAMS, data={"path": path}
                )
            mode = stat.S_IMODE(st.st_mode)
        _replace(real, parent, content.encode("utf-8"), mode)


class _RegularFile:
    """A text reader over an fd checked to be a regular file (context manager)."""

    def __init__(self, fd: int) -> None:
        self.file = open(fd, encoding="utf-8", newline="")  # noqa: SIM115 - closed by __exit__

    def __enter__(self) -> Any:
        return self.file

    def __exit__(self, *exc: object) -> None:
        self.file.close()


def _open_regular(real: str, path: str) -> _RegularFile:
    # O_NOFOLLOW: the real path has no symlink left, so one swapped in since the
    # check fails here instead of being followed. O_NONBLOCK: a FIFO must not
    # block the worker thread; it is refused below anyway.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(real, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HandlerError(
                f"not a regular file: {path!r}", code=INVALID_PARAMS, data={"path": path}
            )
        return _RegularFile(fd)
    except BaseException:
        os.close(fd)
        raise


def _replace(real: str, parent: str, data: bytes, mode: int | None) -> None:
    name = os.path.basename(real)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(16):
        tmp = os.path.join(parent, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 and the umask, as for any new file; an existing file's mode below.
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 16 random names taken
        raise OSError(errno.EEXIST, "no free temporary name", parent)
    try:
        with open(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def error_answer(exc: BaseException) -> tuple[int, str, object]:
    """``(code, message, data)`` of the error answer for what a handler raised.

    :class:`HandlerError`: its own. ``FileNotFoundError``: -32002 (schema v1
    ErrorCode "Resource not found: a given resource, such as a session or file").
    Another ``OSError``: -32603 with its reason and file. Anything else: -32603
    naming the exception (the handler has a bug; it is logged too).
    """
    if isinstance(exc, HandlerError):
        return exc.code, exc.message, exc.data
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        name = exc.filename
        message = f"{reason}: {name}" if name is not None else reason
        data = {"path": os.fsdecode(name)} if isinstance(name, str | bytes) else None
        code = RESOURCE_NOT_FOUND if isinstance(exc, FileNotFoundError) else INTERNAL_ERROR
        return code, message, data
    return INTERNAL_ERROR, f"client handler failed: {type(exc).__name__}: {exc}", None
