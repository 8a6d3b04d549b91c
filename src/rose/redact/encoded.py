"""Kubernetes Secrets: in a ``kind: Secret`` manifest every ``data`` value is a secret, base64-encoded.

The encoding hides the shape any other detector would see (a base64 ``postgres://...`` or ``hunter2`` looks like
any blob), so the manifest itself is the context: every value under ``data:`` / ``stringData:`` of a document
whose ``kind`` is ``Secret`` is replaced, in YAML (``kubectl get secret -o yaml``, Helm output) and in JSON
(``-o json``). ConfigMaps and other kinds are left alone.
"""
from __future__ import annotations

import re

from rose.redact.core import PRIO_ENCODED, Candidate

_SECRET_RE = re.compile(r"""Secret["']?[ \t]*(?=$|[\r\n,}])""")
_KIND_BEFORE_RE = re.compile(r"""(?:^|[\n{,])[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?$""")
_DOC_SEP_RE = re.compile(r"(?m)^---[ \t]*$")
_YAML_BLOCK_RE = re.compile(r"(?m)^(?P<ind>[ \t]*)(?:data|stringData):[ \t]*(?:#[^\n]*)?\r?\n")
_YAML_ITEM_RE = re.compile(r"(?P<ind>[ \t]+)(?P<k>[^\s:#][^:\n]{0,252}):(?:[ \t]+(?P<v>[^\n]*?))?[ \t]*\r?$")
_JSON_BLOCK_RE = re.compile(r'"(?:data|stringData)"[ \t]*:[ \t]*\{')
_JSON_ITEM_RE = re.compile(r'\s*"(?:[^"\\]|\\.){1,253}"\s*:\s*"(?P<v>(?:[^"\\]|\\.){0,65536})"\s*(?P<end>[,}])')
_MAX_DOC = 1 << 20


def _yaml_values(text: str, start: int, end: int, out: list[Candidate]) -> None:
    for bm in _YAML_BLOCK_RE.finditer(text, start, end):
        base = len(bm.group("ind").expandtabs())
        pos = bm.end()
        item_ind = -1
        while pos < end:
            nl = text.find("\n", pos, end)
            line_stop = end if nl == -1 else nl
            line = text[pos:line_stop]
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                ind = len(line) - len(line.lstrip(" \t"))
                if ind <= base:
                    break
                if item_ind < 0:
                    item_ind = ind
                if ind == item_ind:
                    im = _YAML_ITEM_RE.match(text, pos, line_stop)
                    if im is not None and im.group("v"):
                        s, e = im.span("v")
                        v = text[s:e]
                        if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
                            s, e = s + 1, e - 1
                        if v not in ("|", ">", "|-", ">-", "|+", ">+") and e > s:
                            out.append((s, e, PRIO_ENCODED, "kubernetes-secret"))
                elif ind > item_ind:  # the lines of a block scalar (key: |)
                    out.append((pos + ind, line_stop - (len(line) - len(line.rstrip())), PRIO_ENCODED,
                                "kubernetes-secret"))
            if nl == -1:
                break
            pos = nl + 1


def _json_values(text: str, start: int, end: int, out: list[Candidate]) -> None:
    for bm in _JSON_BLOCK_RE.finditer(text, start, end):
        pos = bm.end()
        while True:
            im = _JSON_ITEM_RE.match(text, pos, end)
            if im is None:
                break
            if im.end("v") > im.start("v"):
                out.append((im.start("v"), im.end("v"), PRIO_ENCODED, "kubernetes-secret"))
            if im.group("end") == "}":
                break
            pos = im.end()


def find(text: str, out: list[Candidate]) -> None:
    if "Secret" not in text or "ata" not in text:
        return
    done = -1
    for km in _SECRET_RE.finditer(text):
        if km.start() < done or _KIND_BEFORE_RE.search(text, max(0, km.start() - 40), km.start()) is None:
            continue
        seps = [m.start() for m in _DOC_SEP_RE.finditer(text, max(0, km.start() - _MAX_DOC),
                                                        min(len(text), km.end() + _MAX_DOC))]
        start = max([s for s in seps if s < km.start()], default=max(0, km.start() - _MAX_DOC))
        end = min([s for s in seps if s > km.end()], default=min(len(text), km.end() + _MAX_DOC))
        _yaml_values(text, start, end, out)
        _json_values(text, start, end, out)
        done = end
