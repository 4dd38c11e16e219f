"""Merge methods by name, as mergekit's merge_methods/registry.py keeps them: each file of this
package registers one method on import, and every caller looks it up here, so adding a method is
adding a file (or calling `register`), never a branch on the method's name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.errors import UserError
from backend.merge.methods.base import MergeMethod

if TYPE_CHECKING:
    import torch

METHODS: dict[str, MergeMethod] = {}
DEFAULT = "linear"


def register(method: MergeMethod) -> MergeMethod:
    known = METHODS.get(method.name)
    if known is not None and type(known) is not type(method):
        raise ValueError(f"two merge methods are named {method.name!r}: {type(known)} and {type(method)}")
    METHODS[method.name] = method
    return method


def names() -> tuple[str, ...]:
    return tuple(sorted(METHODS))


def get(name: str) -> MergeMethod:
    try:
        return METHODS[name]
    except KeyError:
        raise UserError(f"unknown merge method {name!r}; choose one of {', '.join(names())}") from None


def by_mergekit_name(name: str | None) -> MergeMethod:
    for method in METHODS.values():
        if method.mergekit_name is not None and method.mergekit_name == name:
            return method
    known = sorted(m.mergekit_name for m in METHODS.values() if m.mergekit_name)
    raise UserError(f"mergekit method {name!r} has no equivalent here; supported: {', '.join(known)}")


def combine_into(
    method: str, acc: torch.Tensor, inputs: Sequence[torch.Tensor], weights: Sequence[float], tmp: torch.Tensor
) -> torch.Tensor:
    """The one place θ (θ_α included) is computed, for the merge engine and both live α switches."""
    return get(method).combine_into(acc, inputs, weights, tmp)
