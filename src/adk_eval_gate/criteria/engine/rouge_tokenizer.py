"""ADK 2.13's Unicode-aware ROUGE tokenizer, with memoised stemming.

Tokens are exactly those of ADK's `_UnicodeAwareTokenizer(use_stemmer=True)`: NFKC + lowercase; CJK
ideographs, kana and Hangul syllables are one token each; Thai, Lao, Khmer and Myanmar split into base
character + combining marks; other word characters are kept; pure-ASCII words go through rouge-score's own
`DefaultTokenizer` (Porter stemming for words longer than 3 characters), non-ASCII words are kept as is.

The speed comes from never re-stemming a word: rouge-score's stemmer is called once per distinct word.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
import unicodedata
from functools import cache, lru_cache
from typing import Any

from rouge_score import tokenize as rouge_tokenize

_NON_ALNUM_ASCII = re.compile(r"[^a-z0-9]+")


@cache
def porter_stemmer() -> Any:
    """nltk's PorterStemmer, the one rouge-score's DefaultTokenizer stems with.

    `import nltk` runs nltk's package __init__, which imports numpy and most of nltk (0.4 s) though the stemmer's
    module needs none of it. Unless nltk is loaded already, the module is loaded under nltk's own names with bare
    parent packages, and those names are removed again, so a later `import nltk` is the whole, real one."""
    if "nltk" not in sys.modules and (spec := importlib.util.find_spec("nltk")) and spec.submodule_search_locations:
        root = spec.submodule_search_locations[0]
        try:
            for name, path in (("nltk", root), ("nltk.stem", f"{root}/stem")):
                package = types.ModuleType(name)
                package.__path__ = [path]
                sys.modules[name] = package
            return importlib.import_module("nltk.stem.porter").PorterStemmer()
        except Exception:  # another nltk layout: fall back to the ordinary import below
            pass
        finally:
            for name in [n for n in sys.modules if n == "nltk" or n.startswith("nltk.")]:
                del sys.modules[name]
    from nltk.stem import porter

    return porter.PorterStemmer()


@lru_cache(maxsize=200_000)
def _ascii_word_tokens(word: str) -> tuple[str, ...]:
    return tuple(rouge_tokenize.tokenize(word, porter_stemmer()))


def _is_cjk(code: int) -> bool:
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x309F or 0x30A0 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


def _is_non_spaced(code: int) -> bool:
    return 0x0E00 <= code <= 0x0E7F or 0x0E80 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


def _words(text: str) -> list[str]:
    if text.isascii():
        # NFKC is the identity on ASCII, and ASCII word characters are exactly [a-z0-9] once lowercased.
        return _NON_ALNUM_ASCII.sub(" ", text.lower()).split()
    text = unicodedata.normalize("NFKC", text).lower()
    pieces: list[str] = []
    for char in text:
        code = ord(char)
        if code < 128:
            pieces.append(char if char.isalnum() else " ")
        elif _is_cjk(code):
            pieces.append(f" {char} ")
        elif _is_non_spaced(code):
            pieces.append(char if unicodedata.category(char).startswith("M") else f" {char}")
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            pieces.append(char)
        else:
            pieces.append(" ")
    return "".join(pieces).split()


@lru_cache(maxsize=20_000)
def tokenize_text(text: str) -> tuple[str, ...]:
    tokens: list[str] = []
    for word in _words(text):
        if word.isascii():
            tokens.extend(_ascii_word_tokens(word))
        else:
            tokens.append(word)
    return tuple(tokens)
