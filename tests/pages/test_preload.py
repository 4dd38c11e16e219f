"""The server `make run` starts (dashboard/serve.py) loads, before it listens, every third-party
module the pages import, so the first page opened on a fresh server imports none of them."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# In a fresh interpreter, as the server runs: the preload, Streamlit (loaded by its own command
# line), then each page's module-level imports (a page script itself needs a running app).
PROBE = """
import ast, importlib, json, sys
from dashboard.serve import preload
preload()
preloaded = {m.split(".")[0] for m in sys.modules}
import streamlit
from app import PAGES
new = {}
for path, _, _ in PAGES:
    tree = ast.parse(open(path).read())
    names = [a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module]
    before = set(sys.modules)
    for name in names:
        importlib.import_module(name)
    new[path] = sorted({m.split(".")[0] for m in set(sys.modules) - before})
print(json.dumps({"streamlit": "streamlit" in preloaded, "new": new}))
"""


@pytest.mark.slow
def test_after_the_preload_the_pages_import_no_third_party_module():
    # app.py runs its page setup on import: the probe reads PAGES from its source instead
    probe = PROBE.replace("from app import PAGES", "PAGES = " + _pages_literal())
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    # it runs before Streamlit's command line: nothing it loads may need Streamlit, whose caches
    # belong to the server's runtime
    assert result["streamlit"] is False
    stdlib = set(sys.stdlib_module_names)
    third_party = {
        page: [m for m in mods if m not in stdlib and not m.startswith("_") and m not in ("dashboard", "backend")]
        for page, mods in result["new"].items()
    }
    assert len(third_party) == 9, third_party  # every page of app.py was read
    assert third_party == {page: [] for page in third_party}


def _pages_literal() -> str:
    """app.PAGES as a Python literal, read from app.py's source."""
    import ast

    tree = ast.parse((ROOT / "app.py").read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES"]
    return ast.unparse(node.value)
