"""A fake agent that fails at start-up: writes to stderr and exits with code 3."""

import sys

sys.stderr.write("early_exit_agent: missing API key\n")
sys.exit(3)
