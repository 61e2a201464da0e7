"""What every config section is built on: a pydantic model that refuses unknown keys and
takes values only of their own type, and the constrained types the sections use.

Kept apart from schema.py so that models/family.py can build the `model:` section's base on it
while schema.py imports the family registry. Imports no torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ConfigDict, Field

# Strict: true is not 1 and "3" is not 3 (a YAML typo is refused, not guessed at); numbers
# are still accepted where a string is expected (test_split: 2016).
Text = Annotated[str, Field(strict=False)]
# Counts and sizes end where C code (sentencepiece, torch's kernels) takes a 32-bit integer.
LARGEST = 2**31 - 1
Positive = Annotated[int, Gt(0), Le(LARGEST)]
NonNegative = Annotated[int, Ge(0), Le(LARGEST)]
PositiveNumber = Annotated[float, Gt(0)]
NonNegativeNumber = Annotated[float, Ge(0)]
Probability = Annotated[float, Ge(0), Lt(1)]


class Section(BaseModel):
    """One section of the config (or the whole config)."""

    # Every number is finite: .inf or .nan in YAML is refused at the key that holds it.
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        coerce_numbers_to_str=True,
        protected_namespaces=(),
        allow_inf_nan=False,
    )

    def replace(self, **changes: Any) -> Any:
        """A copy with `changes` put in (values of the keys' own types)."""
        return self.model_copy(update=changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain data, every family's own model keys included."""
        return self.model_dump(serialize_as_any=True)


class ModelConfig(Section):
    """The keys every family has. A family's config subclasses this and adds its own."""

    type: str = "transformer"  # the model family: transformer | lstm | bahdanau | luong
    enc_layers: NonNegative = 3  # encoder layers (at least 1 for the recurrent families)
    dec_layers: NonNegative = 3  # decoder layers (at least 1)
    dropout: Probability = 0.1  # dropout probability on embeddings and between layers
    tie_embeddings: bool = True  # decoder input and output embeddings (and source, if joint)
    max_positions: Positive = (
        1024  # longest source/target in subwords (training drops longer pairs)
    )

    def problems(self) -> Iterator[tuple[str, str]]:
        """(key, what is wrong) for every impossible combination of values that the types
        alone do not rule out; the config names the file and the value."""
        return iter(())
