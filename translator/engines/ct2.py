"""An exported folder (translator/engines/export.py) translated by `ctranslate2.Translator`.

`ExportedTranslator` is an engine (engines/engine.py) as decode.translator.Translator is:
`translate(lines, request)` returns the same `Translation` objects, so commands only differ
in how they open the model (translator/engines/load.py).

How our decoding settings map onto CTranslate2's:

- Length cap: ours is `max_len_a * source_length + max_len_b` tokens per sentence, then
  <eos>; CTranslate2 takes one `max_decoding_length` per call. Each batch (sorted by
  length, so its limits are close) runs with its largest limit; outputs longer than their
  own limit are cut to it (for greedy search exactly our output), and with a beam the few
  sentences whose hypotheses reached a lower limit are searched again with their own.
  A hypothesis that stops at its limit is scored, as in our search, with the <eos> that
  ends it (`score_batch`).
- Length penalty: ours is GNMT's ((5 + length) / 6) ** alpha, CTranslate2's
  length ** alpha. Both stop a sentence once `beam` hypotheses have ended, as ours does,
  so they find the same hypotheses; CTranslate2 returns them all (num_hypotheses =
  beam) with scores from which we take back the log-probability, divide it by our
  penalty and rank again. With alpha 0, CTranslate2 would stop as soon as its best
  beam ends; a penalty of 1e-6 keeps its stopping rule ours while changing no ranking.
- <pad> and <bos> are never output, <unk> only with decode.allow_unk, an empty output
  is allowed (min_decoding_length 0), as in our search. One difference remains:
  CTranslate2 removes the banned tokens before its softmax, ours after, so its
  log-probabilities are renormalized over the allowed tokens: the scores shown are higher
  by the mass the model gives the banned tokens, and where that mass is large (a briefly
  trained model) a beam's ranking can change. Greedy outputs are the same.
- Confidence (decode/confidence.py) reads each token's log-probability as the PyTorch
  engine keeps it, so the kept hypotheses are scored again (`score_batch`, which bans
  nothing): a float32 export's confidence is the checkpoint's, wherever the two find the
  same hypotheses. The calibration comes from the manifest (engines/export.py).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import torch

from translator.config import Config, config_from_dict
from translator.config.languages import served_languages
from translator.data.batching import pad_ids
from translator.decode.alignment import word_alignment
from translator.decode.batches import Translation, in_batches, source_ids
from translator.decode.calibrate import confidence_request, with_confidence
from translator.decode.request import (
    Capabilities,
    DecodeRequest,
    EngineBase,
    fed_prefixes,
    warn_once,
)
from translator.decode.rules import length_penalty, max_lengths
from translator.decode.score import Score, score_in_batches
from translator.decode.translator import started
from translator.engines.ct2_folder import HINT, folder_calibration, folder_tokenizer, read_manifest
from translator.engines.ct2_search import Searcher
from translator.engines.export import MANIFEST
from translator.engines.lang_codes import code_ids, language_codes
from translator.errors import UserError, optional_import
from translator.specials import BOS, EOS, PAD

log = logging.getLogger(__name__)


def _device(ct2, name: str) -> str:
    if name in ("auto", "cpu"):
        return "cpu"
    if name.startswith("cuda") and ct2.get_cuda_device_count() > 0:
        return "cuda"
    raise UserError(f"--device {name}: an exported model runs on cpu (or cuda where present)")


class ExportedTranslator(EngineBase):
    """Strings in, strings out, through CTranslate2."""

    def __init__(
        self,
        folder: str | Path,
        device: str = "auto",
        prefix_of=None,
        use_vmap: bool | None = None,
        workers: int | None = None,
    ):
        """`prefix_of(cfg, tokenizer, codes)`: (the source ids put before every line, the
        target ids every output is forced to begin with) of a request that names none;
        `codes`: the manifest's language codes (engines/lang_codes.py) or None. Without it:
        none, or the codes of the model's own languages. `use_vmap`: whether to use the
        export's vocabulary shortlist (default: where it has one); `workers`: batches
        decoded at once (default: one per core on a CPU)."""
        self.folder = folder = Path(folder)
        manifest = read_manifest(folder)
        ct2 = optional_import("ctranslate2", "ctranslate2", "exported models")
        self.cfg: Config = config_from_dict(manifest["config"], f"{folder / MANIFEST} (config)")
        self.tokenizer = folder_tokenizer(folder, manifest)
        self.quantization = manifest.get("quantization", "float32")
        self.manifest = manifest
        # how confidence is computed: the checkpoint's calibration, exported with it, or None
        self.calibration = folder_calibration(folder, manifest)
        # the export's vocabulary shortlist, if it has one (benchmarks turn it off to compare)
        self.use_vmap = bool(manifest.get("vocab_map")) if use_vmap is None else use_vmap
        self.device = where = _device(ct2, device)
        # On a CPU, one batch per core at once (each batch on one thread) beats one batch at
        # a time on all cores: a beam search's matrices are too small to share.
        threads = torch.get_num_threads()
        self.workers = workers or (threads if where == "cpu" else 1)
        try:
            self.engine = ct2.Translator(
                str(folder),
                device=where,
                compute_type=self.quantization,
                inter_threads=self.workers,
                intra_threads=1 if where == "cpu" else threads,
            )
        except (RuntimeError, ValueError, OSError) as err:
            reason = " ".join(str(err).split())[:160]
            raise UserError(
                f"{folder}: CTranslate2 cannot load the model ({reason})", HINT
            ) from None
        torch.set_num_threads(threads)  # loading set this thread's OpenMP count to intra_threads
        src, tgt = self.tokenizer.src, self.tokenizer.tgt
        self._src_pieces = [src.id_to_piece(i) for i in range(src.get_piece_size())]
        self._tgt_ids = {tgt.id_to_piece(i): i for i in range(tgt.get_piece_size())}
        # source ids put before every line of a request that names none (load_engine's tags)
        codes = language_codes(manifest.get("source"))  # an imported model's record
        if prefix_of is not None:
            prefix, start = prefix_of(self.cfg, self.tokenizer, codes)
        else:
            prefix, start = ((), ()) if codes is None else code_ids(codes, self.cfg.data)
        self.source_prefix, self.target_start = tuple(prefix), tuple(start)
        self.language_codes = codes
        self._alignment_recorded = "alignment" in manifest
        never = self.tokenizer.never_output(self.cfg.data.tags)
        banned = [[tgt.id_to_piece(i)] for i in (PAD, BOS, *never)]
        self._eos = tgt.id_to_piece(EOS)
        self._searcher = Searcher(self.engine, banned, self._eos, self.use_vmap)
        self.max_source = self.max_target = self.cfg.model.max_positions
        self._frozen = True

    attention_layers = 0
    no_attention = "an exported model gives none; serve its checkpoint file"
    # an export only searches, unconstrained, and shows no attention; a Transformer's export
    # returns its alignment layer's attention (models/transformer_ct2.py) for alignments
    capabilities = Capabilities(
        constraints=False,
        attention=False,
        streaming=False,
        sampling=False,
        alignments=True,
        confidence=True,
    )

    def describe(self) -> dict:
        return {
            "family": self.cfg.model.type,
            "engine": "ctranslate2",
            "parameters": None,
            "device": self.device,
            "languages": served_languages(self.cfg.data, self.language_codes)["languages"],
            "beam": self.cfg.decode.beam,
            "attention": False,
            "alignments": self.capabilities.alignments,  # (words aligned from its attention)
        }

    def attention(self, line: str, request: DecodeRequest | None = None, layer: int = -1):
        raise UserError(
            f"--plot-attention needs the PyTorch checkpoint: the exported model in "
            f"{self.folder} gives no attention weights"
        )

    def attention_label(self, layer: int) -> str:
        return self.attention("", None, layer)  # raises: no layer to name

    def stream(self, request: DecodeRequest, capacity: int, cancelled, nbest_of):
        raise UserError(f"{self.folder}: an exported model decodes whole batches, not a stream")

    def translate(
        self, lines: list[str], request: DecodeRequest | None = None, progress: bool = False
    ) -> list[list[Translation]]:
        """As decode.translator.Translator.translate: length-sorted batches, input order back;
        prefixes through CTranslate2's target_prefix. Its search cannot require phrases or
        sample, so such requests are refused, never answered otherwise."""
        request = request or self.request()
        if request.phrases is not None and any(request.phrases):
            raise UserError(
                f"{self.folder} is an exported (CTranslate2) model, whose search cannot require "
                "phrases; give the checkpoint file for --constraint and --terms"
            )
        if request.sampling is not None:
            raise UserError(f"--sampling: {self.folder} is an exported model, which only searches")
        self.check_alignments(request)
        if request.alignments and not self._alignment_recorded:
            warn_once(self, "unrecorded alignment", log,
                      f"{self.folder}: its manifest does not say which attention it aligns "
                      "words with, so its alignments (and the places of tags in documents) "
                      "may differ from its checkpoint's; export the checkpoint again")  # fmt: skip
        asked = confidence_request(request) if request.confidence else request
        found = in_batches(
            self.tokenizer, lines, self.max_source, asked, self.source_of(request), progress,
            self._batch, self.workers,
        )  # fmt: skip
        if not request.confidence:
            return found
        self._keep_logprobs(lines, found, request)
        return with_confidence(self, lines, found, request)

    def _keep_logprobs(self, lines: list[str], found: list[list], request) -> None:
        """The request's n-best translations of each line with their tokens' log-probabilities
        and their </s>'s, as the PyTorch engine keeps them (decode/confidence.py reads them;
        of the rest of the beam, only texts): scored again, since CTranslate2's search
        renormalises over the tokens it may output (module docstring) and scoring does not."""
        todo, ids = source_ids(self.tokenizer, lines, self.max_source, self.source_of(request))
        start, pieces = self.start_of(request), self.tokenizer.tgt.id_to_piece
        rows = [(j, tr) for j, n in enumerate(todo) for tr in found[n][: request.nbest]]
        if not rows:
            return
        scored = self.engine.score_batch(
            [[self._src_pieces[i] for i in ids[j]] for j, _ in rows],
            [[pieces(i) for i in (*start, *tr.tokens)] for _, tr in rows],
            max_batch_size=request.decode.batch_size,
            max_input_length=0,
        )
        for (_, tr), result in zip(rows, scored):
            tr.logprobs = tuple(result.log_probs[len(start) :])

    def score(
        self,
        sources: list[str],
        targets: list[str],
        request: DecodeRequest | None = None,
        progress: bool = False,
    ) -> list[Score]:
        """As decode.translator.Translator.score, through CTranslate2's score_batch."""
        pieces = self.tokenizer.tgt.id_to_piece
        request = request or self.request()
        start = list(self.start_of(request))  # read, not scored

        def run(src, tgt, pairs=None):
            source = [[self._src_pieces[i] for i in s] for s in src]
            target = [[pieces(i) for i in start + t[1:-1]] for t in tgt]  # it adds <bos>, <eos>
            found = self.engine.score_batch(source, target, max_input_length=0)
            scores = [
                Score(float(sum(r.log_probs[len(start) :])), len(r.log_probs) - len(start))
                for r in found
            ]
            if pairs is None:
                return scores
            aligned = self._forced_alignments(source, target, pairs, len(prefix), len(start))
            return [dataclasses.replace(s, alignment=a) for s, a in zip(scores, aligned)]

        limits = (self.max_source, self.max_target)
        size, prefix = request.decode.batch_size, self.source_of(request)
        return score_in_batches(
            self.tokenizer, sources, targets, limits, size, progress, run, prefix,
            request.alignments,
        )  # fmt: skip

    def _forced_alignments(self, source, target, pairs, prefix: int, skip: int) -> list:
        """The word alignment of each (source pieces, target pieces) with its texts `pairs`:
        CTranslate2 scores without attention, so a search forced through the whole target
        (its target_prefix) gives the weights it reads while producing it."""
        found = self.engine.translate_batch(
            source,
            target_prefix=target,
            beam_size=1,
            max_input_length=0,
            max_decoding_length=max(len(t) for t in target) + 1,
            return_attention=True,
        )
        out = []
        for pieces, want, out_ in zip(source, target, found):
            line = pieces[prefix:-1] if pieces[-1:] == [self._eos] else pieces[prefix:]
            weights = [row[prefix:] for row in out_.attention[0][skip : len(want)]]
            text, given = pairs[len(out)]
            out.append(word_alignment(weights, line, want[skip:], text, given, self.tokenizer))
        return out

    def _batch(self, ids: list[list[int]], request: DecodeRequest, sources=None):
        """As decode.translator.Translator._batch: with `sources` (the texts of `ids`, where
        the request asks for alignments), each translation with its word alignment."""
        skip = len(start := self.start_of(request))  # (searched, then not shown)
        dc, nbest = started(request.decode, start), request.nbest
        prefixes = fed_prefixes(start, request.prefixes, len(ids))
        # our search's output limit of each sentence (a prefix fits whole)
        steps = self.cfg.model.max_positions
        caps = max_lengths(pad_ids(ids), dc.max_len_a, dc.max_len_b, steps).tolist()
        texts, sources = sources, [[self._src_pieces[i] for i in s] for s in ids]
        attend = texts is not None
        pieces = self.tokenizer.tgt.id_to_piece
        prefix = None if prefixes is None else [[pieces(i) for i in p] for p in prefixes]
        if prefixes is not None:
            caps = [max(c, len(p)) for c, p in zip(caps, prefixes)]
        # CTranslate2's beam search can hand a sentence of a batch the attention of another,
        # its greedy search does not: beams are read again by a greedy pass forced through
        # them (ct2_search.Searcher)
        kept = attend and dc.beam == 1  # the search's own attention kept
        found = self._searcher.search(sources, max(caps), dc, prefix, kept, skip)
        if dc.beam > 1:  # beams that reached a limit below the batch's: again with their own
            again: dict[int, list[int]] = {}
            for n, hyps in enumerate(found):
                if caps[n] < max(caps) and any(len(h[0]) >= caps[n] for h in hyps):
                    again.setdefault(caps[n], []).append(n)
            for cap, rows in again.items():
                part = None if prefix is None else [prefix[n] for n in rows]
                again_found = self._searcher.search(
                    [sources[n] for n in rows], cap, dc, part, kept, skip
                )
                for n, hyps in zip(rows, again_found):
                    found[n] = hyps
        cut = []  # hypotheses at their limit: our search ends them with a forced <eos>
        for n, hyps in enumerate(found):
            for hyp in hyps:
                if not hyp[2] or len(hyp[0]) > caps[n]:
                    hyp[0] = hyp[0][: caps[n]]
                    hyp[3] = None if hyp[3] is None else hyp[3][: caps[n] + 1]
                    cut.append((n, hyp))
        if cut:
            scored = self.engine.score_batch(
                [sources[n] for n, _ in cut], [h[0] for _, h in cut], max_input_length=0
            )
            for (_, hyp), result in zip(cut, scored):
                hyp[1] = sum(result.log_probs[skip:])  # the <eos> included, a forced start not
        lists = []
        for hyps in found:
            best: dict[tuple, tuple] = {}  # shown tokens -> (score, attention)
            for body, logprob, _, att in hyps:
                tokens = tuple(self._tgt_ids[p] for p in body)
                length = len(tokens) + 1  # with <eos>
                score = logprob / length_penalty(length, dc.len_penalty, dc.len_norm)
                if score > best.get(tokens[skip:], (float("-inf"),))[0]:
                    best[tokens[skip:]] = (score, att)
            lists.append(sorted(best.items(), key=lambda kv: -kv[1][0])[:nbest])
        if attend and not kept:
            lists = self._searcher.forced_attention(sources, lists, start, pieces)
        # one call for the batch's texts: sentencepiece's per-call cost is a tenth of the
        # decoding time of a small model
        outs = iter(self.tokenizer.decode_tgt([list(t) for ranked in lists for t, _ in ranked]))
        prefix_len = len(self.source_of(request))
        made = [[Translation(next(outs), s, t) for t, (s, _) in ranked] for ranked in lists]
        for n, ranked in enumerate(lists):
            if attend:
                line = sources[n][prefix_len:]
                line = line[:-1] if line and line[-1] == self._eos else line
                for tr, (t, (_, att)) in zip(made[n], ranked):
                    weights = [row[prefix_len:] for row in att[skip:]]
                    target = [pieces(i) for i in t]
                    tr.alignment = word_alignment(
                        weights, line, target, texts[n], tr.text, self.tokenizer
                    )
        return made
