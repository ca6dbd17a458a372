"""``python -m acp_lite.testing`` runs the reference agent (same as ``acp_lite.testing.agent``)."""

import sys

from acp_lite.testing.agent import main

sys.exit(main())
