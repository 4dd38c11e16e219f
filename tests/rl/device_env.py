"""Runs a script as the lent GPU machine would: the packages it lacks (DuckDB, Ray, polars, docker,
the dashboard's) look absent, as they would there: imports fail, and find_spec and package
metadata find nothing. `python -m tests.rl.device_env SCRIPT ARGS...`"""

import importlib.abc
import importlib.metadata
import importlib.util
import runpy
import sys

ABSENT = {"duckdb", "ray", "polars", "docker", "streamlit", "plotly", "kaleido", "playwright"}


def absent(name: str) -> bool:
    return name.split(".")[0].lower().replace("-", "_") in ABSENT


class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if absent(name):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def hide() -> None:
    find_spec, version, distribution = (
        importlib.util.find_spec,
        importlib.metadata.version,
        importlib.metadata.distribution,
    )

    def missing(lookup):
        def wrapped(name, *a, **kw):
            if absent(name):
                raise importlib.metadata.PackageNotFoundError(name)
            return lookup(name, *a, **kw)

        return wrapped

    importlib.util.find_spec = lambda name, package=None: None if absent(name) else find_spec(name, package)
    importlib.metadata.version, importlib.metadata.distribution = missing(version), missing(distribution)
    sys.meta_path.insert(0, Absent())


if __name__ == "__main__":
    hide()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
