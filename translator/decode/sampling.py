"""Sampled translations (`translate --sampling`): diverse outputs, and synthetic sources for
back-translation, which profit from the variety that the likeliest output lacks.

Each step takes the search's log-probabilities (specials masked, <eos> forced at the length
limit: translator/decode/search.py), divides them by the temperature, keeps the top k tokens or the
smallest set whose probability reaches p (nucleus sampling, Holtzman et al. 2020) and draws
one token per row with torch.multinomial from a torch.Generator seeded by --seed. All rows of
a batch draw at once, so the output depends on the seed, the input and the batch size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from translator.errors import UserError

if TYPE_CHECKING:  # (parsing --sampling needs no torch: a mistake is named before it loads)
    import torch

SPEC_HELP = "topk:K (K a whole number >= 1) or topp:P (0 < P <= 1)"


@dataclass
class Sampling:
    top_k: int | None = None
    top_p: float | None = None
    temperature: float = 1.0
    seed: int | None = None  # None: a fresh random seed
    generators: dict = field(default_factory=dict, repr=False)  # device -> its stream

    def reseeded(self, seed: int) -> Sampling:
        """The same way of drawing, from a fresh random stream seeded by `seed`."""
        return Sampling(self.top_k, self.top_p, self.temperature, seed)

    def generator(self, device: torch.device) -> torch.Generator:
        """One random stream per device for the whole run (every batch continues it)."""
        import torch

        key = str(device)
        if key not in self.generators:
            gen = torch.Generator(device=device)
            if self.seed is None:
                gen.seed()
            else:
                gen.manual_seed(self.seed)
            self.generators[key] = gen
        return self.generators[key]

    def choose(self, logp: torch.Tensor) -> torch.Tensor:
        """One token per row of log-probabilities [N, V] (-inf: never)."""
        import torch

        logits = logp.float() / self.temperature
        if self.top_k is not None:
            kth = logits.topk(min(self.top_k, logits.size(-1)), dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if self.top_p is not None:
            ranked, order = logits.sort(dim=-1, descending=True)
            probs = ranked.softmax(-1)
            # Drop a token once the tokens ranked above it already reach p (the first stays).
            drop = (probs.cumsum(-1) - probs) >= self.top_p
            drop = torch.zeros_like(drop).scatter(1, order, drop)  # back to vocabulary order
            logits = logits.masked_fill(drop, float("-inf"))
        probs = logits.softmax(-1)
        return torch.multinomial(probs, 1, generator=self.generator(logp.device)).squeeze(1)


def parse_spec(spec: str) -> tuple[int | None, float | None]:
    """(top_k, top_p) of `topk:K` or `topp:P`; anything else is the user's mistake."""
    kind, _, value = spec.strip().partition(":")
    wrong = UserError(f"--sampling '{spec}': expected {SPEC_HELP}")
    try:
        if kind == "topk":
            k = int(value)
            if k >= 1:
                return k, None
        elif kind == "topp":
            p = float(value)
            if 0.0 < p <= 1.0:
                return None, p
    except ValueError:
        pass
    raise wrong


def sampling_options(
    spec: str | None, temperature: float | None, seed: int | None, beam: int | None
) -> Sampling | None:
    """The Sampling that translate's --sampling, --temperature and --seed ask for (None: the
    search). The config's beam gives way to sampling; a --beam above 1 beside it is an error."""
    if spec is None:
        if temperature is not None or seed is not None:
            raise UserError("--temperature and --seed go with --sampling topk:K or topp:P")
        return None
    top_k, top_p = parse_spec(spec)
    if temperature is not None and not temperature > 0.0:
        raise UserError(f"--temperature must be greater than 0, got {temperature:g}")
    if beam is not None and beam > 1:
        raise UserError(
            f"--beam {beam} and --sampling exclude each other: sampling draws one output per "
            "--nbest, token by token"
        )
    return Sampling(top_k, top_p, 1.0 if temperature is None else temperature, seed)
