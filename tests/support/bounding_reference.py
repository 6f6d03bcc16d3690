"""The privacy unit's rule written from its words (docs/privacy-model.md, "The privacy unit"), independently of
:mod:`dpgui.data.bounding`: the tests' reference for the rows it keeps."""

from __future__ import annotations

import collections
import hashlib
import math
from collections.abc import Hashable, Iterable

import pandas as pd


def kept_by_the_rule(rows: Iterable[tuple[str, tuple[int, ...], Hashable]], salt: str,
                     limit: int) -> collections.Counter:
    """The kept rows of each value, from ``(person text, integer ORDER of the counted keys, value counted)`` rows:
    each person's rows sorted by their ORDER and ranked 1..n_p, the ``limit`` ranks with the smallest
    (md5 hex of ``salt:p:r``, r) kept."""
    by_person: dict[str, list[tuple[tuple[int, ...], Hashable]]] = collections.defaultdict(list)
    for person, order, value in rows:
        by_person[person].append((order, value))
    counts: collections.Counter = collections.Counter()
    for person, found in by_person.items():
        found.sort(key=lambda row: row[0])
        ranks = range(1, len(found) + 1)
        digest = {r: hashlib.md5(f"{salt}:{person}:{r}".encode()).hexdigest() for r in ranks}
        for r in sorted(ranks, key=lambda r: (digest[r], r))[:limit]:
            counts[found[r - 1][1]] += 1
    return counts


def bin_key(x: float, lower: float, upper: float, width: float) -> int:
    """The binning rule's key for bins of ``width`` on [lower, upper) where ``(x - lower) // width`` is exact (e.g.
    width 2 from 0): -1 missing, -2 below, -3 at or above the bounds."""
    if math.isnan(x):
        return -1
    return -2 if x < lower else -3 if x >= upper else int((x - lower) // width)


def kept_of_frame(frame: pd.DataFrame, id_column: str, keys: tuple[str, ...], regions: tuple[str, ...],
                  bins: tuple[float, float, float], salt: str, limit: int) -> collections.Counter:
    """:func:`kept_by_the_rule` of a frame's ``region`` (its index in ``regions``, the not-listed after) and ``x``
    (its bin key, ``bins`` = (lower, upper, width)), counting the values of ``keys`` (of "region", "x")."""
    orders, values = [], []
    for x, region in zip(frame["x"].tolist(), frame["region"].tolist(), strict=True):
        key = bin_key(x, *bins)
        order = {"region": regions.index(region) if region in regions else len(regions), "x": key}
        value = {"region": region, "x": key}
        orders.append(tuple(order[k] for k in keys))
        values.append(tuple(value[k] for k in keys))
    return kept_by_the_rule(zip(map(str, frame[id_column].tolist()), orders, values, strict=True), salt, limit)
