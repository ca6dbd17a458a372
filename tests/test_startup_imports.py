"""A plain stdio connection imports nothing it does not use (issue 26, start-up).

One fresh interpreter connects to the reference agent (``acp_lite.testing``) and
reports which of the modules below it loaded; each must stay unloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NOT_NEEDED = (
    "cattrs",  # the generated decoders do not go through the converter's cattrs
    "asyncio",
    "argparse",
    "concurrent.futures",
    "acp_lite.cli",
    "acp_lite.cassette",
    "acp_lite.testing",  # the agent's side, in its own process
    "pytest_acp",
)

_PROBE = """
import json, sys
import acp_lite
c = acp_lite.connect([sys.executable, "-m", "acp_lite.testing"])
try:
    print(json.dumps(sorted(m for m in sys.argv[1:] if m in sys.modules)))
finally:
    c.close()
"""


def test_plain_connection_does_not_import_unneeded_modules() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *NOT_NEEDED],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == []
