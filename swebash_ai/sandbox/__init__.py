"""The operating-system sandbox: one policy (``policy.py``), rendered by one backend per platform.

``policy.py`` builds what a confined command may write, only read, not see, and reach; ``bwrap.py`` (Linux,
bubblewrap), ``landlock.py`` (Linux without user namespaces) and ``seatbelt.py`` (macOS) render it;
``detect.py`` says which works here; ``confine.py`` is what the command runner calls; ``proxy.py`` (outside)
and ``relay.py`` (inside) carry HTTP(S) to the hosts of ``sandbox_allow_hosts``, and nowhere else. One floor above
``safety/``: the tools use it; it uses safety, config and storage. See docs/safety.md.
"""
