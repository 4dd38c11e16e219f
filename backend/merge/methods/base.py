"""What a merge method declares: its name, its per-tensor math, and how it reads a spec's weights.

The math works on one tensor (or one flat chunk of it) at a time and writes float32 into `acc`.
`inputs` are the checkpoints' tensors in spec order: float32 chunks from the merge engine, the
checkpoints' own dtype from a live α switch; `tmp` is a float32 scratch of the same size that the
method may overwrite. Inputs are never written to: the engine shares them between the K specs of a
one-pass sweep. torch is imported inside the math, so that the CLI's spec modules stay light.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    import torch


def as_f32(t: torch.Tensor, tmp: torch.Tensor) -> torch.Tensor:
    """t itself when it is float32 already, else its exact float32 copy in tmp."""
    return t if t.dtype == tmp.dtype else tmp.copy_(t)


class MergeMethod(ABC):
    name: ClassVar[str]  # the value of Merge.method
    formula: ClassVar[str]  # one line, for docs and errors
    mergekit_name: ClassVar[str | None] = None  # mergekit's merge_method with the same formula, if any

    def check(self, weights: list[float]) -> None:  # noqa: B027 (optional hook: by default any weights are read)
        """Refuse (UserError) or warn about weights this method cannot read; the default takes any."""

    @abstractmethod
    def alpha_weights(self, alpha: float) -> list[float]:
        """The weights of the two-input α form: θ_low at α = 0, θ_high at α = 1, any real α."""

    @abstractmethod
    def combine_into(
        self, acc: torch.Tensor, inputs: Sequence[torch.Tensor], weights: Sequence[float], tmp: torch.Tensor
    ) -> torch.Tensor:
        """θ for one tensor, in float32, into acc (returned)."""

    def to_mergekit(self, models: list[str], weights: list[float]) -> dict:
        """The models part of the equivalent mergekit config."""
        from backend.errors import UserError

        raise UserError(f"merge method {self.name!r} has no mergekit equivalent to export")

    def from_mergekit(self, config: dict) -> tuple[list[str], list[float]]:
        """(models, weights) from a mergekit config of this method (KeyError/TypeError if malformed)."""
        raise NotImplementedError  # only reached for methods with a mergekit_name, which override it
