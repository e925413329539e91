"""Language servers: the diagnostics of the code the model just changed (docs/tools.md "Diagnostics").

A floor between ``tools/`` and ``sandbox/``: :mod:`~swebash_ai.lsp.servers` (the table by language and the
user's ``[lsp]`` tables), :mod:`~swebash_ai.lsp.client` (one server over ``pygls``),
:mod:`~swebash_ai.lsp.service` (the session's servers: started on demand, shared, stopped) and
:mod:`~swebash_ai.lsp.report` (what the model and people read). The edit tools reach the service through
``ToolContext.services["lsp"]``; the process itself is started by a launcher the tools layer injects (contained,
in the sandbox, scrubbed environment), so nothing here starts a process by itself. Importing this package
imports nothing heavy: pygls loads with the first server.
"""
