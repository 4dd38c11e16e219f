"""Summarise pip's dry-run report of requirements-gpu.txt: how many packages resolve, and the key versions."""

import json
import sys
from pathlib import Path

report = json.loads(Path(sys.argv[1]).read_text())
versions = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in report["install"]}
key = ", ".join(f"{n}=={versions[n]}" for n in ("vllm", "torch", "transformers", "trl", "numpy") if n in versions)
print(f"requirements-gpu.txt resolves: {len(versions)} packages ({key})")
