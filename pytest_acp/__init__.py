"""pytest_acp: a pytest plugin for testing ACP agents."""
