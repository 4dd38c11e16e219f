"""Provenance inside an exported image, where each format keeps a title and a description: a PDF's
document information (an incremental update, so the page itself is not rewritten), an SVG's
<title> and <desc>, a PNG's iTXt chunks. A figure that leaves the page, paper-mode ones with no
title drawn included, still says what it is, which experiment, commit, database and date made it.
(Chromium's PDF otherwise carries kaleido's page title, "Kaleido-fier".)"""

from __future__ import annotations

import re
import struct
import zlib
from xml.sax.saxutils import escape


def with_metadata(data: bytes, fmt: str, title: str, description: str) -> bytes:
    """`data` (png, svg or pdf bytes) with this title and description written into it; other formats as they are."""
    if fmt == "pdf":
        return _pdf(data, title, description)
    if fmt == "svg":
        return _svg(data, title, description)
    if fmt == "png":
        return _png(data, {"Title": title, "Description": description, "Software": "frontier-lab"})
    return data


def _pdf_text(text: str) -> bytes:
    """A PDF text string: UTF-16BE with its byte-order mark, in hex (any character, no escaping)."""
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode() + b">"


def _pdf(data: bytes, title: str, description: str) -> bytes:
    """An incremental update (PDF 1.7, 7.5.6): a new document-information dictionary and a trailer
    pointing at it and at the previous cross-reference table, appended after %%EOF."""
    trailer = data[data.rindex(b"trailer") :]
    size = int(re.search(rb"/Size (\d+)", trailer)[1])
    root = re.search(rb"/Root (\d+ \d+ R)", trailer)[1]
    previous = int(re.search(rb"startxref\s+(\d+)", data[data.rindex(b"startxref") :])[1])
    body = data if data.endswith(b"\n") else data + b"\n"
    info = (
        f"{size} 0 obj\n<</Title ".encode()
        + _pdf_text(title)
        + b" /Subject "
        + _pdf_text(description)
        + b" /Creator (frontier-lab)>>\nendobj\n"
    )
    offset = len(body)
    xref = len(body) + len(info)
    update = (
        info
        + f"xref\n{size} 1\n{offset:010d} 00000 n \n".encode()
        + f"trailer\n<</Size {size + 1} /Root {root.decode()} /Info {size} 0 R /Prev {previous}>>\n".encode()
        + f"startxref\n{xref}\n%%EOF\n".encode()
    )
    return body + update


def _svg(data: bytes, title: str, description: str) -> bytes:
    """<title> and <desc> as the root element's first children (what SVG viewers and screen readers show)."""
    text = data.decode()
    start = re.search(r"<svg\b[^>]*>", text)
    tags = f"<title>{escape(title)}</title><desc>{escape(description)}</desc>"
    return (text[: start.end()] + tags + text[start.end() :]).encode()


def _png(data: bytes, fields: dict[str, str]) -> bytes:
    """iTXt chunks (UTF-8 text) before the image's end (IEND)."""
    chunks = b""
    for keyword, text in fields.items():
        payload = keyword.encode("latin-1") + b"\0\0\0\0\0" + text.encode()
        chunks += struct.pack(">I", len(payload)) + b"iTXt" + payload
        chunks += struct.pack(">I", zlib.crc32(b"iTXt" + payload) & 0xFFFFFFFF)
    end = data.rindex(b"IEND") - 4  # the IEND chunk starts with its 4-byte length
    return data[:end] + chunks + data[end:]


def read_png_text(data: bytes) -> dict[str, str]:
    """The iTXt chunks of a PNG, by keyword (what a test reads back)."""
    out, at = {}, 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, payload = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"iTXt":
            keyword, _, rest = payload.partition(b"\0")
            out[keyword.decode("latin-1")] = rest[4:].decode()
        at += 12 + length
    return out


def read_pdf_info(data: bytes) -> dict[str, str]:
    """The newest document-information dictionary's Title and Subject (what a test reads back)."""
    trailer = data[data.rindex(b"trailer") :]
    number = re.search(rb"/Info (\d+) 0 R", trailer)[1].decode()
    body = data[data.rindex(f"\n{number} 0 obj".encode()) :]
    out = {}
    for key in ("Title", "Subject"):
        match = re.search(rf"/{key} (<FEFF[0-9A-F]*>|\((?:[^()\\]|\\.)*\))".encode(), body)
        if match:
            raw = match[1]
            out[key] = (
                bytes.fromhex(raw[5:-1].decode()).decode("utf-16-be") if raw.startswith(b"<") else raw[1:-1].decode()
            )
    return out
