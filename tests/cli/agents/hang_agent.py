"""A fake agent that never answers; writes its pid to argv[1] so tests can check for leaks."""

import sys
import time
from pathlib import Path

Path(sys.argv[1]).write_text(str(__import__("os").getpid()))
while True:  # ignore stdin entirely; only a signal ends us
    time.sleep(3600)
