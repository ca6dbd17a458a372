"""The pytest plugin module (entry point ``pytest11: acp``)."""
