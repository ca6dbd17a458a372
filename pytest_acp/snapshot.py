"""A syrupy extension for ACP update streams (``.acp.jsonl`` snapshot files).

``assert turn.updates == acp_snapshot`` normalises the stream (see
:mod:`pytest_acp.normalize`) and stores it as JSON Lines: a header line with the
format version and the options, then one update per line with wire field names,
``sessionUpdate`` first. The agent's permission and elicitation requests and the
answers the client gave are lines of their own in stream order (``request``
first). Line-per-update files give line-level diffs in pytest's
output and in code review. ``pytest --snapshot-update`` writes and updates them,
and unused files are reported and deleted the usual syrupy way.

Per assertion options: ``acp_snapshot(view="final", text=False, requests=False,
name="turn2")``.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import attrs
from syrupy.assertion import SnapshotAssertion
from syrupy.exceptions import TaintedSnapshotError
from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

from pytest_acp.normalize import VIEWS, Normalizer, normalize, order_keys

__all__ = [
    "FORMAT_VERSION",
    "AcpSnapshotAssertion",
    "AcpSnapshotExtension",
    "SnapshotOptions",
    "serialize_updates",
]

FORMAT_VERSION = 1
"""Bumped when the file format changes; older files must then be regenerated
(``--snapshot-update``), as syrupy does for its own formats."""


@attrs.frozen
class SnapshotOptions:
    """How an ``acp_snapshot`` assertion normalises what it is compared with."""

    view: str = "merged"
    text: bool = True
    redact: bool | frozenset[str] = True
    tmp_path: tuple[str, ...] = ()
    normalizers: tuple[Normalizer, ...] = ()
    requests: bool = True

    def __attrs_post_init__(self) -> None:
        if self.view not in VIEWS:
            raise ValueError(f"unknown view {self.view!r}; expected one of {', '.join(VIEWS)}")


def _header(options: SnapshotOptions) -> dict[str, Any]:
    header: dict[str, Any] = {"acp_snapshot": FORMAT_VERSION, "view": options.view}
    if not options.text:
        header["text"] = False
    if not options.requests:
        header["requests"] = False
    if options.redact is not True:
        header["redact"] = sorted(options.redact) if options.redact else False
    return header


#: ``json.dumps(value, ensure_ascii=False)``, without building an encoder per call.
_dumps = json.JSONEncoder(ensure_ascii=False).encode


def serialize_updates(
    data: object,
    options: SnapshotOptions | None = None,
    *,
    exclude: PropertyFilter | None = None,
    include: PropertyFilter | None = None,
    matcher: PropertyMatcher | None = None,
) -> str:
    """The ``.acp.jsonl`` text for ``data`` (anything :func:`~pytest_acp.normalize` accepts)."""
    options = options or SnapshotOptions()
    # Normalising builds a few dicts per update and no cycles: the cyclic collector
    # would walk the test process's every object again and again for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _serialize_updates(data, options, exclude, include, matcher)
    finally:
        if collecting:
            gc.enable()


def _serialize_updates(
    data: object,
    options: SnapshotOptions,
    exclude: PropertyFilter | None,
    include: PropertyFilter | None,
    matcher: PropertyMatcher | None,
) -> str:
    updates: list[Any] = normalize(
        data,
        options.view,
        text=options.text,
        tmp_path=options.tmp_path or None,
        redact=options.redact,
        normalizers=options.normalizers,
        requests=options.requests,
    )
    if exclude is not None or include is not None or matcher is not None:
        # syrupy's own property filters and matchers work as with its JSON extension.
        filtered = JSONSnapshotExtension._filter(
            data=updates, depth=0, path=(), exclude=exclude, include=include, matcher=matcher
        )
        updates = [order_keys(json.loads(json.dumps(u))) for u in filtered]
    lines = [_dumps(_header(options))]
    lines.extend(_dumps(u) for u in updates)
    return "\n".join(lines) + "\n"


class AcpSnapshotExtension(SingleFileSnapshotExtension):
    """One ``.acp.jsonl`` file per snapshot under ``__snapshots__/<test module>/``."""

    _write_mode = WriteMode.TEXT
    file_extension = "acp.jsonl"

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
        options: SnapshotOptions | None = None,
    ) -> SerializedData:
        """Normalise and serialise ``data`` (plain ``snapshot`` use gets default options)."""
        return serialize_updates(data, options, exclude=exclude, include=include, matcher=matcher)

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializedData | None:
        data = super().read_snapshot_data_from_location(
            snapshot_location=snapshot_location,
            snapshot_name=snapshot_name,
            session_id=session_id,
        )
        if isinstance(data, str):
            first = data.split("\n", 1)[0]
            try:
                version = json.loads(first).get("acp_snapshot")
            except (ValueError, AttributeError):
                version = None
            if version != FORMAT_VERSION:
                raise TaintedSnapshotError(snapshot_data=data)
        return data


@dataclass(eq=False, order=False, repr=False)
class AcpSnapshotAssertion(SnapshotAssertion):
    """syrupy's ``SnapshotAssertion`` with ACP normalisation options.

    ``acp_snapshot(view=..., text=..., redact=..., requests=...)`` changes them for
    the next assertion only, like syrupy's own per-call options (``requests=False``
    leaves out the agent's permission and elicitation requests).
    """

    acp_options: SnapshotOptions = field(default_factory=SnapshotOptions)
    #: Builds the project's normaliser (the ``pytest_acp_normalize`` hooks) for a view.
    acp_hook: Callable[[str], Normalizer | None] | None = None

    def __call__(
        self,
        *,
        view: str | None = None,
        text: bool | None = None,
        redact: bool | Iterable[str] | None = None,
        normalizers: Sequence[Normalizer] | None = None,
        requests: bool | None = None,
        **kwargs: Any,
    ) -> AcpSnapshotAssertion:
        changes: dict[str, Any] = {}
        if requests is not None:
            changes["requests"] = requests
        if view is not None:
            changes["view"] = view
        if text is not None:
            changes["text"] = text
        if redact is not None:
            changes["redact"] = redact if isinstance(redact, bool) else frozenset(redact)
        if normalizers is not None:
            changes["normalizers"] = (*self.acp_options.normalizers, *normalizers)
        if changes:
            previous = self.acp_options
            self.acp_options = attrs.evolve(previous, **changes)
            self._post_assert_actions.append(lambda: setattr(self, "acp_options", previous))
        super().__call__(**kwargs)
        return self

    def __repr__(self) -> str:
        # pytest lists a failing test's fixture values above its code; syrupy's repr
        # is the stored snapshot, which there reads like the data under test (and is
        # cut in the middle). The diff below the code says what changed.
        options = self.acp_options
        text = "" if options.text else ", text=False"
        requests = "" if options.requests else ", requests=False"
        return f"<acp_snapshot view={options.view!r}{text}{requests}>"

    def with_defaults(
        self,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
        extension_class: type[AbstractSyrupyExtension] | None = None,
    ) -> SnapshotAssertion:
        new = super().with_defaults(
            exclude=exclude, include=include, matcher=matcher, extension_class=extension_class
        )
        if isinstance(new, AcpSnapshotAssertion):
            new.acp_options = self.acp_options
            new.acp_hook = self.acp_hook
        return new

    def _serialize(self, data: SerializableData) -> SerializedData:
        extension = self.extension
        if not isinstance(extension, AcpSnapshotExtension):
            return super()._serialize(data)
        options = self.acp_options
        if self.acp_hook is not None:
            hook = self.acp_hook(options.view)
            if hook is not None:
                options = attrs.evolve(options, normalizers=(*options.normalizers, hook))
        # Only a user's matcher is applied: syrupy's wrapper matcher would force the
        # slower filter path on every assertion for nothing.
        return extension.serialize(
            data,
            exclude=self._exclude,
            include=self._include,
            matcher=self._matcher,
            options=options,
        )

    @classmethod
    def from_snapshot(
        cls,
        snapshot: SnapshotAssertion,
        options: SnapshotOptions,
        extension_class: type[AcpSnapshotExtension] = AcpSnapshotExtension,
    ) -> AcpSnapshotAssertion:
        """An ACP assertion sharing ``snapshot``'s syrupy session and test location."""
        return cls(
            session=snapshot.session,
            extension_class=extension_class,
            test_location=snapshot.test_location,
            update_snapshots=snapshot.update_snapshots,
            update_new_snapshots_only=snapshot.update_new_snapshots_only,
            include=snapshot.include,
            exclude=snapshot.exclude,
            matcher=snapshot.matcher,
            acp_options=options,
        )


def tmp_paths(*paths: str | os.PathLike[str] | None) -> tuple[str, ...]:
    """Helper: the non-empty paths as strings, for :attr:`SnapshotOptions.tmp_path`."""
    return tuple(os.fspath(p) for p in paths if p is not None)
