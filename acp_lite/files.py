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
import functools
import operator
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
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
#: The characters ``LocalFiles`` reads at once: what a line costs in memory beyond
#: the answer, however long it is.
READ_BLOCK = 64 * 1024


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
        real path is what the caller should open, without following a symlink on
        its way (:meth:`open_directory`, as :class:`LocalFiles` does): one swapped
        in after the check then fails the open instead of leading out.
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

    def open_directory(self, path: object) -> int:
        """A file descriptor of the directory ``path`` if the session may use it
        (:meth:`resolve`), opened race-free: each component of its real path from
        ``/`` with ``O_NOFOLLOW``, so a symlink swapped in after the check fails
        the open (-32602) instead of leading out; not a directory: -32002 (as
        :meth:`resolve_directory`). The caller closes it."""
        real = self.resolve_directory(path)
        return _open_directory(real, str(path))


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
    answered -32602 (:class:`PathNotAllowed`). The checked real path is then
    opened a component at a time with ``O_NOFOLLOW`` (as
    :meth:`Workspace.open_directory`), so a symlink swapped in meanwhile fails
    the request instead of leading out; a hard link to an outside file is read
    (a write replaces it, leaving that file alone). Files are UTF-8 text; line
    endings are kept as they are. ``read_only=True`` advertises and serves reads
    only. A write creates a missing file but not a missing directory (-32002),
    unless ``create_dirs=True``; it goes to a temporary file in the target's
    directory (the one opened), then replaces it (a reader never sees half a
    file; an existing file keeps its mode). A read answers at most
    ``max_read_bytes`` characters (more is an error: ask for fewer lines with
    ``line``/``limit``).
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
        number = 1  # the line the next piece belongs to
        started = 0  # lines taken (begun)
        at_start = True  # the next piece begins a line
        with _open_regular(real, path) as f:
            try:
                # In bounded pieces, never a whole line at once: a huge line (a 1 GB
                # file without a newline) costs a block, skipped or refused.
                for piece, ends in _pieces(f, READ_BLOCK):
                    if number >= first:
                        if at_start:
                            if limit is not None and started >= limit:
                                break
                            started += 1
                        size += len(piece)
                        if size > self.max_read_bytes:
                            raise HandlerError(
                                f"{path!r}: the lines asked for exceed {self.max_read_bytes} "
                                "characters; ask for fewer (line, limit)",
                                data={"path": path},
                            )
                        taken.append(piece)
                    at_start = ends
                    number += ends
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
        parent, name = os.path.split(real)
        if not name:  # the root directory itself
            raise HandlerError(
                f"not a regular file: {path!r}", code=INVALID_PARAMS, data={"path": path}
            )
        try:
            dir_fd = _open_directory(parent, path, create=self.create_dirs)
        except (FileNotFoundError, NotADirectoryError):
            raise HandlerError(
                f"the directory of {path!r} does not exist",
                code=RESOURCE_NOT_FOUND,
                data={"path": path},
            ) from None
        try:
            mode: int | None = None
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                if not stat.S_ISREG(st.st_mode):
                    raise HandlerError(
                        f"not a regular file: {path!r}", code=INVALID_PARAMS, data={"path": path}
                    )
                mode = stat.S_IMODE(st.st_mode)
            _replace(dir_fd, name, content.encode("utf-8"), mode)
        finally:
            os.close(dir_fd)


def _pieces(f: Any, block: int) -> Iterator[tuple[str, bool]]:
    """The text of ``f`` (universal newlines, kept) as ``(piece, ends_a_line)``,
    each piece at most ``block`` characters: a line longer than that comes in
    several pieces, only the last one ending it."""
    held = ""  # a piece cut at the block size right after a "\r": "\n" may follow
    while True:
        piece = f.readline(block)
        if held:
            # The cut fell inside "\r\n" (readline then gives the "\n" alone):
            # one line ending, not two.
            yield held, not piece.startswith("\n")
            held = ""
        if not piece:
            return
        if len(piece) == block and piece.endswith("\r"):
            held = piece
            continue
        yield piece, piece.endswith(("\n", "\r"))


def _changed(path: str) -> PathNotAllowed:
    return PathNotAllowed(
        f"{path!r} changed while it was opened: a symlink took the place of a "
        "directory or file on its real path",
        path=path,
    )


def _flags(*names: str) -> int:
    # Flags a platform lacks count as 0 (O_PATH, O_CLOEXEC, O_DIRECTORY elsewhere).
    return functools.reduce(operator.or_, (getattr(os, n, 0) for n in names), 0)


def _is_symlink(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open_step(dir_fd: int, name: str, flags: int, create: bool) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    return os.open(name, flags, dir_fd=dir_fd)


def _open_directory(real: str, path: str, *, create: bool = False, shown: str = "") -> int:
    """The directory at the real path ``real`` (no symlink in it), opened component
    by component from ``/``, none followed if it is a symlink; ``create``: missing
    ones are made. ``path`` is the agent's, for errors; an ``OSError`` names
    ``shown`` (default: ``real``), not the component."""
    # O_PATH (Linux): no read permission needed on the way, as for a path lookup.
    # (O_RDONLY, 0, where there is no O_PATH.)
    flags = _flags("O_PATH", "O_DIRECTORY", "O_NOFOLLOW", "O_CLOEXEC")
    fd = os.open(os.sep, flags)
    try:
        for name in real.split(os.sep):
            if not name:
                continue
            try:
                step = _open_step(fd, name, flags, create)
            except OSError as exc:
                if exc.errno == errno.ELOOP or (
                    exc.errno == errno.ENOTDIR and _is_symlink(fd, name)
                ):
                    raise _changed(path) from None
                exc.filename = shown or real
                raise
            os.close(fd)
            fd = step
            # O_PATH | O_NOFOLLOW opens a symlink itself rather than failing.
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                raise _changed(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


class _RegularFile:
    """A text reader over an fd checked to be a regular file (context manager)."""

    def __init__(self, fd: int) -> None:
        self.file = open(fd, encoding="utf-8", newline="")  # noqa: SIM115 - closed by __exit__

    def __enter__(self) -> Any:
        return self.file

    def __exit__(self, *exc: object) -> None:
        self.file.close()


def _open_regular(real: str, path: str) -> _RegularFile:
    parent, name = os.path.split(real)
    if not name:  # the root directory itself
        raise HandlerError(
            f"not a regular file: {path!r}", code=INVALID_PARAMS, data={"path": path}
        )
    dir_fd = _open_directory(parent, path, shown=real)
    # O_NOFOLLOW: the real path has no symlink left, so one swapped in since the
    # check fails here instead of being followed. O_NONBLOCK: a FIFO must not
    # block the worker thread; it is refused below anyway.
    flags = os.O_RDONLY | _flags("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC")
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _changed(path) from None
        exc.filename = real
        raise
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HandlerError(
                f"not a regular file: {path!r}", code=INVALID_PARAMS, data={"path": path}
            )
        return _RegularFile(fd)
    except BaseException:
        os.close(fd)
        raise


def _replace(dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Write ``data`` to a new file in the directory ``dir_fd``, then rename it to
    ``name`` there: the directory checked is the one written, whatever happens to
    its path meanwhile; a failure removes the temporary file from that directory."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _flags("O_NOFOLLOW", "O_CLOEXEC")
    for _ in range(16):
        # Within NAME_MAX (255 bytes) whatever the name's length (60 characters
        # are 240 bytes of UTF-8 at most).
        tmp = f".{name[:60]}.{secrets.token_hex(4)}.tmp"
        try:
            # 0o666 and the umask, as for any new file; an existing file's mode below.
            fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 16 random names taken
        raise OSError(errno.EEXIST, "no free temporary name", name)
    try:
        with open(fd, "wb") as f:
            f.write(data)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
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
