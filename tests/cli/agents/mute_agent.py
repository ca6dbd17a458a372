"""A fake agent that reads the client's first line (``initialize``), then writes
argv[1] (so a test knows the line was sent and read), never answers, and exits
at the end of its input."""

import sys
from pathlib import Path

sys.stdin.readline()
Path(sys.argv[1]).write_text("read\n")
sys.stdin.read()
