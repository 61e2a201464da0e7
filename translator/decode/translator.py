"""Strings in, strings out: a trained model (or an ensemble) and its tokenizer, the PyTorch
engine (engines/engine.py). Each call's settings come in its DecodeRequest."""

from __future__ import annotations

import dataclasses
import logging

import torch

from translator.config import Config
from translator.config.languages import served_languages
from translator.data.batching import pad_ids
from translator.data.pharaoh import Alignment
from translator.data.tokenizer import Tokenizer
from translator.decode.alignment import forced_attention, word_alignment
from translator.decode.batches import Translation, in_batches, source_ids
from translator.decode.beam import BeamStream
from translator.decode.calibrate import confidence_request, with_confidence
from translator.decode.confidence import Calibration
from translator.decode.request import Capabilities, DecodeRequest, EngineBase, fed_prefixes
from translator.decode.rules import Hypothesis, unforced
from translator.decode.score import Score, score_in_batches, teacher_forced
from translator.decode.search import decode
from translator.errors import UserError
from translator.models.base import Seq2Seq
from translator.runtime import autocast, pick_device
from translator.specials import EOS, UNK

log = logging.getLogger(__name__)


class Translator(EngineBase):
    def __init__(
        self,
        model: Seq2Seq,
        tokenizer: Tokenizer,
        cfg: Config,
        device: torch.device | None = None,
        dtype: torch.dtype = torch.float32,
        name: str | None = None,
        max_source: int | None = None,
        source_prefix=(),
        target_start=(),
        language_codes: dict[str, int] | None = None,
        calibration: dict | None = None,
    ):
        self.device = device or pick_device("auto")
        self.model = model.to(self.device).eval()
        self.tokenizer, self.cfg, self.dtype = tokenizer, cfg, dtype
        self.name = name or cfg.model.type  # for messages and picture titles
        self.max_source = max_source or cfg.model.max_positions  # longer input is cut
        self.max_target = self.model.max_output_len
        # source ids put before every line of a request that names none: the tags of the
        # target language and corpus that load_engine was given
        self.source_prefix = tuple(source_prefix)
        # target ids every output of a request that names none is forced to begin with,
        # not shown: the target language code of an imported model (engines/lang_codes.py)
        self.target_start = tuple(target_start)
        self.language_codes = language_codes  # (a request may name other languages)
        # how confidence is computed (translator calibrate), or None: uncalibrated
        self.calibration = Calibration.from_dict(calibration) if calibration else None
        self.attention_layers = self.model.attention_layers
        self.capabilities = Capabilities(
            constraints=True,
            attention=self.attention_layers > 0,
            streaming=self.model.supports_streaming,
            sampling=True,
            alignments=self.model.alignment_layer is not None,
            confidence=True,
        )
        if self.model.attention_layers and self.model.alignment_layer is None:
            seeing = [(i, self.model.members[i]) for i in self.model.seeing]
            layers = ", ".join(f"model {i + 1} from {m.alignment_layer - m.attention_layers}"
                               for i, m in seeing)  # fmt: skip
            self.no_alignments = (
                f"the ensemble's models align from different attention layers, counted from "
                f"their last (-1): {layers}; give models that align from the same one (a "
                "Transformer's model.alignment_layer; a recurrent model's is its one, -1)"
            )
        self._frozen = True

    def attention_label(self, layer: int) -> str:
        return self.model.attention_label(layer)

    def describe(self) -> dict:
        return {
            "family": self.cfg.model.type,
            "engine": "pytorch",
            "parameters": self.model.num_parameters(),
            "device": str(self.device),
            "languages": served_languages(self.cfg.data, self.language_codes)["languages"],
            "beam": self.cfg.decode.beam,
            "attention": self.capabilities.attention,
            "alignments": self.capabilities.alignments,  # (words aligned from its attention)
        }

    def translate(
        self, lines: list[str], request: DecodeRequest | None = None, progress: bool = False
    ) -> list[list[Translation]]:
        """Translate lines in length-sorted batches; results come back in input order, each
        the request's n-best. A blank line yields an empty translation without the model."""
        request = request or self.request()
        self.check_alignments(request)
        asked = confidence_request(request) if request.confidence else request
        found = in_batches(
            self.tokenizer, lines, self.max_source, asked, self.source_of(request), progress,
            self._batch,
        )  # fmt: skip
        return with_confidence(self, lines, found, request) if request.confidence else found

    def score(
        self,
        sources: list[str],
        targets: list[str],
        request: DecodeRequest | None = None,
        progress: bool = False,
    ) -> list[Score]:
        """How likely the model finds each target given its source (decode/score.py)."""
        request = request or self.request()
        self.check_alignments(request)
        start, prefix = list(self.start_of(request)), self.source_of(request)

        def run(src, tgt, pairs=None):  # the forced start follows <bos>, read but not scored
            tgt = [t[:1] + start + t[1:] for t in tgt] if start else tgt
            found = teacher_forced(self.model, src, tgt, self.device, self.dtype, len(start))
            if pairs is None:
                return found
            hyps = [Hypothesis(t[1:-1] if t[-1] == EOS else t[1:], 0.0) for t in tgt]
            aligned = self.aligned(pad_ids(src).to(self.device), [[h] for h in hyps], pairs,
                                   len(prefix), len(start))  # fmt: skip
            return [dataclasses.replace(f, alignment=a[0]) for f, a in zip(found, aligned)]

        limits = (self.max_source, self.max_target)
        size = request.decode.batch_size
        return score_in_batches(
            self.tokenizer, sources, targets, limits, size, progress, run, prefix,
            request.alignments,
        )  # fmt: skip

    def _batch(
        self, ids: list[list[int]], request: DecodeRequest, sources: list[str] | None = None
    ) -> list[list[Translation]]:
        """The request's n-best of source `ids`; with `sources` (their texts, given where
        the request asks for alignments), each with its word alignment."""
        src = pad_ids(ids).to(self.device)
        start = self.start_of(request)
        dc, nbest, sampling = started(request.decode, start), request.nbest, request.sampling
        prefixes = fed_prefixes(start, request.prefixes, len(ids))
        # the constrained search keeps no attention: its outputs are read through again
        phrased = bool(request.phrases and any(request.phrases))
        layer = self.model.alignment_layer if sources is not None and not phrased else None
        skip = len(start)  # a forced start, left out of the ranking: the beam's every one
        wide = max(nbest, dc.beam) if skip and not phrased and sampling is None else nbest
        with torch.inference_mode(), autocast(self.device, self.dtype):
            hyps = decode(self.model, src, dc, wide, sampling, layer, prefixes, request.phrases)
        hyps = [unforced(sent, skip, dc)[:nbest] for sent in hyps]  # (skip 0: as they are)
        if sources is None:
            return [self.translations(sent, skip) for sent in hyps]
        pairs = [(line, None) for line in sources]
        aligned = self.aligned(src, hyps, pairs, len(self.source_of(request)), skip)
        return [self.translations(sent, skip, a) for sent, a in zip(hyps, aligned)]

    def translations(self, hyps, skip: int = 0, alignments=None) -> list[Translation]:
        """The hypotheses (search.Hypothesis) of one sentence as texts, without their first
        `skip` tokens (the forced start); `alignments`: each one's, or None."""
        hyps = [unstarted(h, skip) for h in hyps]
        texts = self.tokenizer.decode_tgt([h.tokens for h in hyps])
        alignments = alignments or [None] * len(hyps)
        return [
            Translation(
                t, h.score, tuple(h.tokens), a, None if h.logprobs is None else tuple(h.logprobs)
            )
            for t, h, a in zip(texts, hyps, alignments)
        ]

    def aligned(
        self, src: torch.Tensor, hyps, pairs, prefix: int, skip: int
    ) -> list[list[Alignment]]:
        """The word alignment of each hypothesis (search.Hypothesis, with the forced start)
        of each sentence of `src` [n, S]: its attention where the search kept it, else read
        through the model again (forced_attention). `pairs`: each sentence's (source text,
        target text or None: the hypothesis's own); `prefix`: the ids before each source's
        own; `skip`: the forced start's length."""
        layer, model = self.model.alignment_layer, self.model
        missing = [(n, h) for n, sent in enumerate(hyps) for h in sent if h.attention is None]
        if missing:
            rows = torch.tensor([n for n, _ in missing], device=src.device)
            with torch.inference_mode(), autocast(self.device, self.dtype):
                found = forced_attention(model, src[rows], [h.tokens for _, h in missing], layer)
            for (_, h), weights in zip(missing, found):
                h.attention = weights
        src_piece, tgt_piece = self.tokenizer.src.id_to_piece, self.tokenizer.tgt.id_to_piece
        out = []
        for row, (sent, (line, given)) in enumerate(zip(hyps, pairs)):
            ids = [i for i in src[row, prefix:].tolist() if i > EOS or i == UNK]  # no </s>, pad
            pieces = [src_piece(i) for i in ids]
            sent = [unstarted(h, skip) for h in sent]
            texts = (
                [given] * len(sent)
                if given is not None
                else self.tokenizer.decode_tgt([h.tokens for h in sent])
            )
            out.append([
                word_alignment(h.attention[:, prefix:], pieces,
                               [tgt_piece(int(t)) for t in h.tokens], line, text, self.tokenizer)
                for h, text in zip(sent, texts)
            ])  # fmt: skip
        return out

    def stream(self, request: DecodeRequest, capacity: int, cancelled, nbest_of) -> Stream:
        return Stream(self, request, capacity, cancelled, nbest_of)

    def attention(self, line: str, request: DecodeRequest | None = None, layer: int = -1):
        """The best translation of `line` (beginning with the request's target prefix, if
        it has one), its source and target pieces, and the [target, source] attention
        weights of decoder `layer` that the same search gave while producing it (then
        <eos>)."""
        model = self.model
        if not model.attention_layers:
            raise UserError(f"{self.name} has no attention weights to draw")
        if not -model.attention_layers <= layer < model.attention_layers:
            n = model.attention_layers
            raise UserError(
                f"--layer {layer}: the model has {n} attention layers (0..{n - 1}, or -1)"
            )
        request = request or self.request()
        _, ids = source_ids(self.tokenizer, [line], self.max_source, self.source_of(request))
        if not ids:
            raise UserError("an empty sentence has no attention to show")
        src = pad_ids(ids).to(self.device)
        start = self.start_of(request)
        prefixes = fed_prefixes(start, request.prefixes, 1)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            best = decode(model, src, started(request.decode, start), 1, request.sampling,
                          layer, prefixes)[0][0]  # fmt: skip
        best = unstarted(best, len(start))
        pieces = self.tokenizer.src.id_to_piece
        source = [pieces(int(i)) for i in src[0]]
        target = [self.tokenizer.tgt.id_to_piece(int(t)) for t in [*best.tokens, EOS]]
        return self.translations([best])[0], source, target, best.attention.cpu().numpy()


def started(dc, start: tuple[int, ...]):
    """The decoding settings of a search fed `start`: its output limit counts the shown
    tokens, so the forced ones come on top."""
    return dc.replace(max_len_b=dc.max_len_b + len(start)) if start else dc


def unstarted(hyp, skip: int):
    """A hypothesis without its first `skip` tokens (and their attention rows and
    log-probabilities)."""
    if not skip:
        return hyp
    att = None if hyp.attention is None else hyp.attention[skip:]
    lps = None if hyp.logprobs is None else hyp.logprobs[skip:]
    return dataclasses.replace(hyp, tokens=list(hyp.tokens[skip:]), attention=att, logprobs=lps)


class Stream:
    """Translator.stream: a BeamStream (decode/beam.py) fed with texts, its steps run on the
    engine's device and precision, its hypotheses handed back as translations."""

    def __init__(self, engine: Translator, request, capacity: int, cancelled, nbest_of):
        self.engine, self.nbest_of = engine, nbest_of
        self.skips: dict = {}  # owner -> the forced start tokens its outputs begin with
        # owner -> (its source ids [1, S], text, source prefix length), where it asked for
        # alignments: a stream keeps no attention, so its outputs are read through again
        self.aligning: dict = {}
        dc = started(request.decode, engine.start_of(request))
        self.search = BeamStream(
            engine.model, dc, capacity=capacity,
            cancelled=cancelled, regroup=max(1, capacity // 2),
        )  # fmt: skip

    def __len__(self) -> int:
        return len(self.search)

    @property
    def advanced(self) -> int:
        """Sentence-steps taken so far (for the server's averages)."""
        return self.search.advanced

    def add(self, texts: list[str], owners: list, request: DecodeRequest) -> list[int]:
        engine = self.engine
        todo, ids = source_ids(
            engine.tokenizer, texts, engine.max_source, engine.source_of(request)
        )
        if todo:
            start = engine.start_of(request)
            pre = request.prefixes
            pre = fed_prefixes(start, None if pre is None else [pre[i] for i in todo], len(todo))
            src = pad_ids(ids).to(engine.device)
            self.search.add(src, [owners[i] for i in todo], pre)
            self.skips.update((owners[i], len(start)) for i in todo if start)
            if request.alignments:
                engine.check_alignments(request)
                prefix = len(engine.source_of(request))
                self.aligning.update(
                    (owners[i], (src[n : n + 1], texts[i], prefix)) for n, i in enumerate(todo)
                )
        return todo

    def step(self) -> list:
        engine = self.engine
        with torch.inference_mode(), autocast(engine.device, engine.dtype):
            ended = self.search.step()
        return [(owner, self._translations(owner, hyps)) for owner, hyps in ended]

    def _translations(self, owner, hyps) -> list[Translation]:
        engine, skip = self.engine, self.skips.pop(owner, 0)
        hyps = unforced(hyps, skip, self.search.dc)[: self.nbest_of(owner)]
        if owner not in self.aligning:
            return engine.translations(hyps, skip)
        src, text, prefix = self.aligning.pop(owner)
        aligned = engine.aligned(src, [hyps], [(text, None)], prefix, skip)[0]
        return engine.translations(hyps, skip, aligned)

    def owners(self):
        waiting = [entry[1] for entry in self.search.waiting]  # (source, owner, prefix)
        return (owner for owner in self.search.owners + waiting if owner is not None)
