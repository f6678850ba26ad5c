"""The user's pages stay short enough to read: the README under 250 lines, the benchmarks page
under 200, and no sentence of either's prose over 40 words. A failure names the sentence.

Prose is what is left without fenced code blocks, tables and headings. Inline code and a
link's address count as one word and never end a sentence; a sentence ends at ".", "!" or "?"
before a space (a closing bracket, quote or bold mark may come between), and at a blank line or the start of a list item, whose text need not end in a
full stop.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_WORDS = 40
PAGES = {"README.md": 250, "docs/benchmarks.md": 200}  # page -> lines it must stay under

_INLINE_CODE = re.compile(r"`[^`\n]+`")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
_END = re.compile(r"(?<=[.!?])[)\"'*]*\s+")  # a full stop, then closing marks, then a space


def prose_blocks(markdown: str) -> list[str]:
    """The page's paragraphs and list items, each as one line of text."""
    blocks, current, fenced = [], [], False

    def close() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            close()
            fenced = not fenced
            continue
        stripped = line.strip()
        if fenced or stripped.startswith(("|", "#", "<!--")) or not stripped:
            close()
            continue
        if _ITEM.match(line):
            close()
            stripped = _ITEM.sub("", line)
        current.append(stripped)
    close()
    return blocks


def sentences(markdown: str) -> list[str]:
    """The prose's sentences, inline code as one word each."""
    found = []
    for block in prose_blocks(markdown):
        text = _LINK.sub(r"\1", _INLINE_CODE.sub("CODE", block))
        found += [s.strip() for s in _END.split(text) if s.strip()]
    return found


def words(sentence: str) -> int:
    return sum(1 for word in sentence.split() if re.search(r"\w", word))


def longest_sentence(markdown: str) -> str:
    return max(sentences(markdown), key=words, default="")


def check_sentences(markdown: str, page: str) -> None:
    """Fails naming the page's longest sentence when it is over MAX_WORDS words."""
    longest = longest_sentence(markdown)
    assert words(longest) <= MAX_WORDS, f"{page}: {words(longest)} words: {longest}"


@pytest.mark.parametrize("page, limit", PAGES.items())
def test_the_page_is_short(page, limit):
    lines = (ROOT / page).read_text().count("\n")
    assert lines < limit, f"{page} has {lines} lines; keep it under {limit}"


@pytest.mark.parametrize("page", PAGES)
def test_no_sentence_of_the_page_is_over_40_words(page):
    check_sentences((ROOT / page).read_text(), page)


def test_the_measure_catches_a_long_sentence_and_skips_code_and_tables():
    long = " ".join(["word"] * 41) + "."
    page = "\n".join(
        [
            "# A title with `some.key` in it",
            "",
            "**A short one,** with `a.b.c` and [a link](https://example.com/x.y). Another one.",
            "",
            "```",
            " ".join(["code"] * 60),
            "```",
            "",
            "| " + " | ".join(["cell"] * 60) + " |",
            "",
            "- an item without a full stop",
            "- " + " ".join(["word"] * 20),
            " ".join(["word"] * 21) + ".",
        ]
    )
    assert sentences(page)[:3] == [
        "**A short one,** with CODE and a link.",
        "Another one.",
        "an item without a full stop",
    ]
    assert longest_sentence(page) == long
    with pytest.raises(AssertionError, match="planted.md: 41 words: word word"):
        check_sentences(page, "planted.md")
    check_sentences(page.replace("word.", "."), "planted.md")  # 40 words pass
