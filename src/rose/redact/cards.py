"""Payment card numbers: a card-network prefix with a length that network uses, passing Luhn.

13-16 digits in one piece, or 13-19 in groups of 3-6 joined by one consistent space or dash. Digit runs that
fail Luhn or carry no card prefix are left alone, and so are ungrouped runs of 17+ digits (ids, seeds) and runs
of more than 7 groups (tables of numbers): Luhn alone passes one random number in ten.
"""
from __future__ import annotations

import re

from rose.redact.core import PRIO_CARD, WORD_CHARS, Candidate, at_boundary

_CARD_RUN_RE = re.compile(r"[0-9][0-9 -]{11,}[0-9]")
_DIGIT_RUN_RE = re.compile(r"[0-9]+")
_CARD_LEFT_BAD = "_.,:+-"  # besides word chars: decimals, times, signs, phone prefixes
_CARD_MAX_GROUPS = 7  # a card (4-5 groups) plus a neighbouring number or two


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def _card_network(d: str) -> bool:
    """A real issuer prefix with a length that issuer uses (Visa, Mastercard, Amex, Discover, Diners, JCB,
    UnionPay, Maestro). Keeps Luhn's 1-in-10 false positives off timestamps, ids and phone numbers."""
    n = len(d)
    if not 13 <= n <= 19 or len(set(d)) == 1:
        return False
    p2, p3, p4, p6 = int(d[:2]), int(d[:3]), int(d[:4]), int(d[:6])
    if d[0] == "4":
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16
    if p2 in (34, 37):
        return n == 15
    if p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925:
        return 16 <= n <= 19
    if 300 <= p3 <= 305 or p4 == 3095 or p2 in (36, 38, 39):
        return 14 <= n <= 19
    if 3528 <= p4 <= 3589 or p2 == 62:
        return 16 <= n <= 19
    if p2 == 50 or 56 <= p2 <= 69:
        return n >= 16  # Maestro; its rare 12-15 digit numbers look like any other integer
    return False


def _card_right_ok(text: str, end: int) -> bool:
    if end >= len(text):
        return True
    c = text[end]
    if c in WORD_CHARS:
        return False
    return not (c in ".,:" and end + 1 < len(text) and text[end + 1].isdigit())


def find(text: str, out: list[Candidate]) -> None:
    """Digit groups (13-16 digits in one piece, or 13-19 in groups of 3-6 joined by one consistent space or
    dash) that carry a card-network prefix and pass Luhn. Any group of a run may start a card, so one next to
    another number (an order id, a CVV) is still found; the longest valid window from each start wins. A run
    of more than _CARD_MAX_GROUPS groups is a table of numbers (ports, years, a printed array), not a card."""
    for m in _CARD_RUN_RE.finditer(text):
        run = m.group()
        if len(run) - run.count(" ") - run.count("-") < 13:
            continue
        groups = [g.span() for g in _DIGIT_RUN_RE.finditer(text, m.start(), m.end())]
        count = len(groups)
        if count > _CARD_MAX_GROUPS:
            continue
        right_ok = _card_right_ok(text, groups[-1][1])
        a = 0
        while a < count:
            gs, ge = groups[a]
            size = ge - gs
            if text[gs] not in "23456" or not (
                    at_boundary(text, gs, _CARD_LEFT_BAD) if a == 0 else text[gs - 1] == " "):
                a += 1
                continue
            best = -1
            # an ungrouped run longer than 16 digits is far more often an id, seed or hash than a card
            if 13 <= size <= 16 and (a < count - 1 or right_ok):
                digits = text[gs:ge]
                if _card_network(digits) and _luhn(digits):
                    best = a
            if 3 <= size <= 6:
                total, sep, digits = size, "", text[gs:ge]
                for b in range(a + 1, count):
                    bs, be = groups[b]
                    between = text[groups[b - 1][1]:bs]
                    if len(between) != 1 or (sep and between != sep):
                        break
                    sep = between
                    total += be - bs
                    if total > 19 or be - bs > 6:
                        break
                    digits += text[bs:be]
                    if total >= 13 and (b < count - 1 or right_ok) and _card_network(digits) and _luhn(digits):
                        best = b
                    if be - bs < 3:
                        break  # a short group can only end a card
            if best < 0:
                a += 1
                continue
            out.append((gs, groups[best][1], PRIO_CARD, "credit-card"))
            a = best + 1


