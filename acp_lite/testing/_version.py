"""The reference agent's version (its ``initialize`` answer's ``info.version``).

A module of its own so that the agent's parts and the package ``__init__``
(which re-exports it) both import it from below.
"""

__version__ = "0.1.0"
