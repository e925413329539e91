"""The protocol's SDK is imported without its models' field docstrings (swebash_ai.frontends.acp.import_sdk): its
models still read and write the wire, and every model made afterwards gets its docstrings as before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ._helpers import REPO

CHECK = textwrap.dedent("""
    import json
    from pydantic import BaseModel, ConfigDict
    from swebash_ai.frontends.acp import import_sdk
    import_sdk()
    from acp import schema
    sent = schema.InitializeResponse(protocol_version=1, agent_capabilities=schema.AgentCapabilities(
        load_session=True, prompt_capabilities=schema.PromptCapabilities(image=True)))
    wire = sent.model_dump(mode="json", by_alias=True, exclude_none=True)
    back = schema.InitializeResponse.model_validate(wire)

    class Later(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)
        size: int
        '''How big it is.'''

    print(json.dumps({"wire": wire, "same": back == sent, "later": Later.model_fields["size"].description,
                      "sdk": schema.InitializeResponse.model_fields["protocol_version"].description}))
""")


def test_the_sdk_reads_and_writes_and_later_models_keep_their_docstrings(tmp_path: Path) -> None:
    script = tmp_path / "check.py"  # a file: pydantic reads a class's docstrings from its source
    script.write_text(CHECK)
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr
    import json

    out = json.loads(res.stdout)
    assert out["wire"]["protocolVersion"] == 1 and out["wire"]["agentCapabilities"]["loadSession"] is True
    assert out["same"] is True
    assert out["later"] == "How big it is."  # the extraction is back on once the SDK is loaded
    assert out["sdk"] is None  # and was off while it loaded (the start-up it saves)
