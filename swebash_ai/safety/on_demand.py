"""The command classifier, imported and built at its first use (see :class:`CommandPolicyOnDemand`)."""

from __future__ import annotations

from typing import Any

from swebash_ai.safety.paths import PathPolicy


class CommandPolicyOnDemand:
    """The session's command classifier, imported and built at its first use.

    The classifier and its rule tables (``safety.commands`` and the modules it loads) cost about 8 ms of CPU to
    import, which a start would pay for every answer that runs no command. Never ``None``, so the tools and the
    loop treat it as the policy it stands for: every attribute is the real policy's.
    """

    def __init__(self, path_policy: PathPolicy) -> None:
        self._path_policy = path_policy
        self._policy: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_path_policy", "_policy"):  # copy/pickle probes, and no recursion
            raise AttributeError(name)
        if self._policy is None:
            from swebash_ai.safety.commands import CommandPolicy

            self._policy = CommandPolicy(self._path_policy)
        return getattr(self._policy, name)
