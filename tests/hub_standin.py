"""A minimal Hugging Face hub on 127.0.0.1: the endpoints `huggingface_hub.snapshot_download` calls
(huggingface_hub 2.4's hf_api.py, file_download.py and utils/_http.py), serving repos a test writes.

- GET  /api/{models|datasets}/{repo}/revision/{rev}    repo info: id, sha (the resolved commit), siblings
- GET  /api/{models|datasets}/{repo}/tree/{rev}        the file list (recursive, one page, no Link header)
- HEAD /{repo}/resolve/{rev}/{path}, /datasets/…       X-Repo-Commit, ETag (git blob sha1, or sha256 and
  GET  the same                                         X-Linked-Etag/X-Linked-Size for LFS files), bytes
Errors as the hub gives them: 404 + X-Error-Code RepoNotFound / RevisionNotFound / EntryNotFound, and
401 + GatedRepo for a gated repo's files without a token. Anything else is 404. Every request is
logged, so a test can tell whether a run reached the network at all.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".parquet", ".bin")  # what the hub keeps in LFS/xet (large binaries)


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # sha -> {path: bytes}
    refs: dict[str, str] = field(default_factory=dict)  # branch or tag -> sha
    gated: bool = False

    def commit(self, files: dict[str, bytes], ref: str = "main") -> str:
        """A new commit holding `files`; `ref` moves to it. Returns its sha."""
        sha = hashlib.sha1(json.dumps(sorted((p, hashlib.sha256(b).hexdigest()) for p, b in files.items()))
                           .encode() + str(len(self.commits)).encode()).hexdigest()  # fmt: skip
        self.commits[sha] = dict(files)
        self.refs[ref] = sha
        return sha

    def resolve(self, rev: str) -> str | None:
        return rev if rev in self.commits else self.refs.get(rev)


class Hub:
    def __init__(self):
        self.repos: dict[tuple[str, str], Repo] = {}  # (repo_type, repo_id) -> Repo
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def repo(self, repo_id: str, repo_type: str = "model", gated: bool = False) -> Repo:
        return self.repos.setdefault((repo_type, repo_id), Repo(gated=gated))

    def __enter__(self) -> Hub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _etag(path: str, data: bytes) -> tuple[str, bool]:
    if path.endswith(LFS_SUFFIXES):
        return hashlib.sha256(data).hexdigest(), True
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(), False


def _handler(hub: Hub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

        def _send(self, status: int, data: bytes = b"", headers: dict | None = None, body: bool = True) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def _error(self, status: int, code: str, body: bool, commit: str | None = None) -> None:
            headers = {"X-Error-Code": code, "Content-Type": "application/json"}
            if commit:
                headers["X-Repo-Commit"] = commit
            self._send(status, json.dumps({"error": code}).encode(), headers, body)

        def _serve(self, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append(f"{self.command} {path}")
            parts = path.strip("/").split("/")
            if parts[0] == "api" and len(parts) >= 6 and parts[1] in ("models", "datasets"):
                repo_type, repo_id, what, rev = parts[1][:-1], f"{parts[2]}/{parts[3]}", parts[4], parts[5]
                return self._api(repo_type, repo_id, what, rev, body)
            repo_type = "dataset" if parts[0] == "datasets" else "model"
            parts = parts[1:] if repo_type == "dataset" else parts
            if len(parts) >= 5 and parts[2] == "resolve":
                return self._file(repo_type, f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:]), body)
            self._send(404, body=body)

        def _api(self, repo_type: str, repo_id: str, what: str, rev: str, body: bool) -> None:
            repo = hub.repos.get((repo_type, repo_id))
            if repo is None:
                return self._error(404, "RepoNotFound", body)
            sha = repo.resolve(rev)
            if sha is None:
                return self._error(404, "RevisionNotFound", body)
            files = repo.commits[sha]
            if what == "revision":
                info = {"id": repo_id, "sha": sha, "private": False, "gated": "manual" if repo.gated else False,
                        "siblings": [{"rfilename": p} for p in sorted(files)]}  # fmt: skip
                return self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)
            if what == "tree":
                return self._send(200, json.dumps(_tree(files)).encode(), {"Content-Type": "application/json"}, body)
            self._send(404, body=body)

        def _file(self, repo_type: str, repo_id: str, rev: str, file: str, body: bool) -> None:
            repo = hub.repos.get((repo_type, repo_id))
            if repo is None:
                return self._error(404, "RepoNotFound", body)
            if repo.gated and "authorization" not in {k.lower() for k in self.headers}:
                return self._error(401, "GatedRepo", body)
            sha = repo.resolve(rev)
            if sha is None:
                return self._error(404, "RevisionNotFound", body)
            if file not in repo.commits[sha]:
                return self._error(404, "EntryNotFound", body, commit=sha)
            data = repo.commits[sha][file]
            etag, lfs = _etag(file, data)
            headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
            if lfs:
                headers |= {"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))}
            start = _range_start(self.headers.get("Range"))
            if start:
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                return self._send(206, data[start:], headers, body)
            self._send(200, data, headers, body)

    return Handler


def _range_start(header: str | None) -> int:
    if not header or not header.startswith("bytes="):
        return 0
    return int(header[len("bytes=") :].split("-")[0] or 0)


def _tree(files: dict[str, bytes]) -> list[dict]:
    out = []
    for path, data in sorted(files.items()):
        etag, lfs = _etag(path, data)
        entry = {
            "type": "file",
            "path": path,
            "size": len(data),
            "oid": etag if not lfs else hashlib.sha1(data).hexdigest(),
        }
        if lfs:
            entry["lfs"] = {"oid": etag, "size": len(data), "pointerSize": 134}
        out.append(entry)
    return out
