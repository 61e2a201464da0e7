"""How `translator translate` reads and writes text: UTF-8 from arguments, standard input or
a file, lazy chunks of a stream, files written whole, the prompt loop, and the attention
picture of one sentence."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from translator.data.pharaoh import pharaoh
from translator.data.readers import arriving, chunked, decode_lines
from translator.errors import UserError


def checked_text(text: str, where: str) -> str:
    """`text`, unless it holds bytes that were not UTF-8 (Python keeps each as a lone
    surrogate, U+DC80 to U+DCFF): then a one-line error naming `where`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(text[err.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise UserError(f"{where}: not valid UTF-8 ({what}); give UTF-8 text") from None
    return text


def utf8_arguments(texts: list[str]) -> list[str]:
    return [checked_text(t, f"TEXT argument {n}") for n, t in enumerate(texts, 1)]


def stdin_chunks(size: int, whole: bool = False):
    """Lists of up to `size` lines of standard input, read as UTF-8 whatever the locale (as
    --input reads a file), each as soon as its lines are there: a person typing, or a
    program that waits for each line's translation, gets it at once (readers.arriving).
    `whole`: every list but the last holds `size` lines, as seeded sampling needs to draw
    the same whatever the pace of the input. Lines before one that is not UTF-8 come as a
    list of their own before its error, so that they are translated and written first."""
    place = lambda n: f"standard input, line {n}"  # noqa: E731
    raws = chunked(sys.stdin.buffer, size) if whole else arriving(sys.stdin.fileno(), size)
    number = 1
    for raw in raws:
        good = []
        try:
            good.extend(decode_lines(raw, place, "give UTF-8 text", number))
        except UserError:
            if good:
                yield good
            raise
        yield good
        number += len(raw)


FILE_CHUNK = 4096  # lines of an --input file translated (and, into --output, recorded) at a time


def chunk_request(request, start: int):
    """`request` for the FILE_CHUNK lines of a file from line `start`: with seeded sampling,
    each chunk draws from its own stream (--seed plus the chunk's number), so a file gives
    the same translations to standard output, to --output, and when a stopped run resumes."""
    sampling = request.sampling
    if sampling is None or sampling.seed is None:
        return request
    return request.replace(sampling=sampling.reseeded(sampling.seed + start // FILE_CHUNK))


def write_translations(translator, chunks, out, request, bar=None, guides=None, start: int = 0,
                       per_chunk=False, take=None) -> None:  # fmt: skip
    """Translate chunk by chunk as the DecodeRequest `request` asks; one line per input line
    (n-best: K lines, index TAB score TAB text, the index counted from `start`), flushed
    after each chunk so output starts before the input ends; where the request asks for
    alignments, each translation is followed by a TAB and its alignment ("i-j ...").
    `chunks` begin at input line `start`; `guides`: a line_guides.LineGuides of the whole
    input, or None. `per_chunk`: the chunks are a file's FILE_CHUNK lines (chunk_request).
    `take`: the guides' reader, already at `start`, where a caller that comes back chunk
    after chunk keeps one (a new one reads the guide files from their first line)."""
    index, nbest = start, request.nbest
    if take is None:
        take = guides.reader(start) if guides else None
    for lines in chunks:
        guided = chunk_request(request, index) if per_chunk else request
        if take is not None:
            pre, phrases = take(lines)
            guided = guided.guided(translator.tokenizer, lines, translator.max_target, pre, phrases)
        for hyps in translator.translate(lines, guided, progress=bar if bar is not None else False):
            if nbest == 1:
                out.write(columns(hyps[0], request) + "\n")
            else:
                out.writelines(f"{index}\t{h.score:.4f}\t{columns(h, request)}\n" for h in hyps)
            index += 1
        out.flush()


def columns(translation, request) -> str:
    """A translation's text and the columns after it that the request asks for, in their
    fixed order: confidence, whether it is under the request's min_confidence ("doubtful",
    else "ok"), then alignments."""
    cells = [translation.text]
    if request.confidence:
        cells.append(f"{translation.confidence:.4f}")
    if request.min_confidence is not None:
        cells.append("doubtful" if translation.confidence < request.min_confidence else "ok")
    if request.alignments:
        cells.append(pharaoh(translation.alignment))
    return "\t".join(cells)


def print_file(translator, input_file: Path, request, guides=None) -> None:
    """Translate a file of any size to standard output, a chunk of lines at a time (--output
    writes one instead, resumably: decode/resumable.py)."""
    from translator.data.readers import iter_lines
    from translator.progress import progress_bar

    total = sum(1 for _ in iter_lines(input_file))  # a cheap pass, for the bar's total
    with progress_bar(total=total, desc="translate", unit="line") as bar:
        lines = chunked(iter_lines(input_file), FILE_CHUNK)
        write_translations(translator, lines, sys.stdout, request, bar, guides, per_chunk=True)


def interactive_loop(translator, request) -> None:
    """A prompt loop for a person: one sentence in, its translation out, until Ctrl-D."""
    src, tgt = translator.cfg.data.src_lang, translator.cfg.data.tgt_lang
    print(f"translating {src} -> {tgt}; an empty line or Ctrl-D ends", file=sys.stderr)
    while True:
        try:
            line = checked_text(input(f"{src}> "), "the line typed")
        except EOFError:
            break
        except UnicodeDecodeError as err:  # a locale whose decoding is strict
            byte = err.object[err.start]
            raise UserError(
                f"the line typed: not valid {err.encoding} (byte 0x{byte:02x})"
            ) from None
        if not line.strip():
            break
        print(f"{tgt}> {translator.translate([line], request)[0][0].text}", flush=True)


def draw_attention(translator, text: list[str], request, path: Path, layer: int) -> None:
    from translator.models.family import title as family_title
    from translator.plots.figures import plot_attention

    if len(text) != 1:
        raise UserError("--plot-attention draws one sentence: give exactly one text argument")
    best, source, target, weights = translator.attention(text[0], request, layer)
    label = translator.attention_label(layer)
    name, data = family_title(translator.cfg.model.type), translator.cfg.data
    title = (f"{name} ({label})" if label else name) + (
        f"\n{data.src_lang}: {text[0]}\n{data.tgt_lang}: {best.text}"
    )
    plot_attention(source, target, weights, str(path), title)
    typer.echo(best.text)
    typer.echo(f"attention heatmap written to {path}", err=True)
