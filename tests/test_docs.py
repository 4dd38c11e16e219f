"""The documentation stands alone: every relative link in README.md and docs/*.md names a file in
the repository (and, with #anchor, a heading of that file as GitHub slugs it); nothing points
outside the repository; the front page stays a front page."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def prose(page: Path) -> str:
    """The page without its code blocks (a `[x](y)` inside code is not a link)."""
    return FENCE.sub("", page.read_text())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", prose(page), re.M)}


def links(page: Path) -> list[str]:
    return [m[1] for m in LINK.finditer(prose(page))]


def test_slug_follows_github():
    assert slug("Options: one declaration each") == "options-one-declaration-each"
    assert slug("Verdicts that match LiveCodeBench's own grader") == "verdicts-that-match-livecodebenchs-own-grader"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_resolves_inside_the_repository(page: Path):
    broken = []
    for target in links(page):
        if target.startswith(("http://", "https://")):
            broken.append(f"{target}: leaves the repository")
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(ROOT) or not file.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, broken


def test_no_page_points_outside_the_repository():
    for page in PAGES:
        assert "../shared" not in page.read_text(), page


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, len(lines)
    # every docs page is in the front page's index
    index = set(links(ROOT / "README.md"))
    missing = [p.name for p in PAGES[1:] if f"docs/{p.name}" not in index]
    assert not missing, missing
