"""Model cassettes for the ``acp_model`` fixture: provider traffic recorded from a
real upstream (``--acp-model-record=URL``) and replayed without network.

A test's model cassette sits beside its ACP cassette (:mod:`pytest_acp._cassettes`):
``__cassettes__/<module>/<test>.model.json`` (the ``acp_cassette`` marker's name,
when it gives one, replaces ``<test>``, as it does for ``<test>.acp.jsonl``). A test
that gives the fixture a script (the ``acp_model`` marker, ``--acp-model-script``,
ini ``acp_model_script``) is answered by the script: no cassette. Otherwise, by
``--acp-record-mode`` (ini ``acp_record_mode``), the ACP cassettes' vocabulary:

* ``none``: replay the model cassette when there is one (else: the empty script);
* ``once``: replay it when there is one; else, with an upstream, record one;
* ``new_episodes``: replay what it holds; requests it does not hold go upstream and
  are appended;
* ``all``: with an upstream, record everything again (without one, replay).

``--acp-model-record=URL`` (ini ``acp_model_record``) names the upstream
(``https://api.openai.com``, ``https://api.anthropic.com``,
``https://generativelanguage.googleapis.com``, or any ``http(s)://host[:port]``):
requests go there as the agent sends them, its key included; the cassette is
written at teardown, redacted (:class:`acp_lite.models.Redaction`). With an upstream
and no record mode given, the mode is ``once``; ``none`` with an upstream is a usage
error (nothing would be recorded). Without an upstream nothing is ever recorded, so
a run that records the ACP cassettes again (``--acp-record-mode=all``) can drive the
real agent on its replayed model.

A replayed request the cassette does not hold gets a provider-style 400 naming the
cassette and the request, and fails the test at teardown with the request shown
(see :mod:`acp_lite.models.replay` for the matching).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pytest

from pytest_acp._cassettes import CASSETTE_SUFFIX, RECORD_MODES, cassette_path, record_mode

if TYPE_CHECKING:
    from acp_lite.models import ReplayModel
    from acp_lite.models.upstream import RecordingModel

__all__ = ["MODEL_CASSETTE_SUFFIX", "ModelTape", "add_options", "model_cassette_path", "tape_for"]

MODEL_CASSETTE_SUFFIX = ".model.json"


def add_options(parser: pytest.Parser, group: pytest.OptionGroup) -> None:
    """Register ``--acp-model-record`` and the ``acp_model_record`` ini key."""
    parser.addini(
        "acp_model_record",
        "upstream URL the acp_model fixture records model cassettes from (see --acp-model-record)",
        type="string",
        default="",
    )
    group.addoption(
        "--acp-model-record",
        dest="acp_model_record",
        metavar="URL",
        help="record model cassettes (__cassettes__/<module>/<test>.model.json) from this "
        "upstream (e.g. https://api.openai.com): the acp_model fixture of a test without "
        "a script forwards its requests there, as --acp-record-mode says (default once)",
    )


def model_cassette_path(item: pytest.Item) -> Path:
    """Where ``item``'s model cassette lives: beside its ACP cassette."""
    marker = item.get_closest_marker("acp_cassette")
    name = None
    if marker is not None:
        name = marker.args[0] if marker.args else marker.kwargs.get("name")
    acp = cassette_path(item, name if isinstance(name, str) else None)
    return acp.with_name(acp.name.removesuffix(CASSETTE_SUFFIX) + MODEL_CASSETTE_SUFFIX)


def _upstream(config: pytest.Config) -> str | None:
    value = config.getoption("acp_model_record", None) or config.getini("acp_model_record")
    return str(value) if value else None


def _mode(config: pytest.Config, upstream: str | None) -> str:
    given = config.getoption("acp_record_mode", None) or config.getini("acp_record_mode")
    if not given:
        return "once" if upstream else "none"
    mode = record_mode(config)
    if upstream and mode == "none":
        raise pytest.UsageError(
            "--acp-model-record records, --acp-record-mode=none does not: choose one of "
            f"{', '.join(m for m in RECORD_MODES if m != 'none')}"
        )
    return mode


def _shown(path: Path, config: pytest.Config) -> str:
    try:
        return str(path.relative_to(config.rootpath))
    except ValueError:
        return str(path)


@attrs.define
class ModelTape:
    """The model cassette of one test and the handler that replays or records it."""

    path: Path
    mode: str
    handler: ReplayModel | RecordingModel
    #: ``"replay"`` or ``"record"`` (``new_episodes`` with an upstream: both).
    role: str
    origin: str
    config: pytest.Config

    def finish(self) -> None:
        """At teardown (the server stopped): write what was recorded, through the
        ``pytest_acp_model_cassette_redact`` hooks."""
        from acp_lite.models import Interaction
        from acp_lite.models.upstream import RecordingModel

        handler = self.handler
        if not isinstance(handler, RecordingModel):
            return
        cassette = handler.cassette()
        before = len(handler.replay.cassette.interactions) if handler.replay is not None else 0
        if len(cassette.interactions) == before and self.mode != "all":
            return
        from acp_lite.errors import CassetteError

        new = []
        for interaction in cassette.interactions[before:]:
            data = json.loads(json.dumps(interaction.to_json()))  # the hooks' own copy
            self.config.hook.pytest_acp_model_cassette_redact(interaction=data, config=self.config)
            try:
                new.append(Interaction.from_json(data, "an interaction the redact hook edited"))
            except CassetteError as exc:
                message = f"model cassette {self.path} not written: {exc}"
            else:
                continue
            pytest.fail(message, pytrace=False)
        interactions = (*cassette.interactions[:before], *new)
        attrs.evolve(cassette, interactions=interactions).save(self.path)


def _record_command(item: pytest.Item, upstream: str | None) -> str:
    url = shlex.quote(upstream) if upstream else "URL"
    return f"pytest --acp-model-record={url} --acp-record-mode=all {shlex.quote(item.nodeid)}"


def tape_for(request: pytest.FixtureRequest, *, scripted: bool) -> ModelTape | None:
    """The test's model cassette, replayed or recorded; ``None`` when the script
    answers (one was given, or there is neither a cassette nor an upstream)."""
    if scripted:
        return None
    from acp_lite.errors import CassetteError
    from acp_lite.models import ModelCassette, ReplayModel

    item = request.node
    config = request.config
    upstream = _upstream(config)
    try:
        mode = _mode(config, upstream)
    except pytest.UsageError as exc:
        message = str(exc)
    else:
        message = ""
    if message:  # failed out of the except block: the message is the whole story
        pytest.fail(message, pytrace=False)
    path = model_cassette_path(item)
    shown = _shown(path, config)
    loaded: ModelCassette | None = None
    if not (upstream and mode == "all"):
        try:
            loaded = ModelCassette.load(path)
        except FileNotFoundError:
            loaded = None
        except (OSError, CassetteError) as exc:
            error = f"cannot read model cassette {shown}: {exc}"
            pytest.fail(error, pytrace=False)
    replay = None
    if loaded is not None:
        hint = f"Record it again: {_record_command(item, upstream or loaded.upstream)}"
        replay = ReplayModel(loaded, name=f"model cassette {shown}", hint=hint)
        if not upstream or mode in ("none", "once"):
            origin = f"model cassette {shown} (replay)"
            return ModelTape(path, mode, replay, "replay", origin, config)
    if not upstream:
        return None
    from acp_lite.models.upstream import RecordingModel, Upstream

    try:
        target = Upstream(upstream)
    except ValueError as exc:
        message = f"--acp-model-record: {exc}"
    else:
        message = ""
    if message:
        pytest.fail(message, pytrace=False)
    recorder = RecordingModel(target, name=f"model recorder {shown}", replay=replay)
    role = "replay+record" if replay is not None else "record"
    origin = f"model cassette {shown} (recording {upstream})"
    return ModelTape(path, mode, recorder, role, origin, config)
