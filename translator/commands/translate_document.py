"""`translate --input F --format text|html|markdown|docx`: a document translated with its
structure (translator/documents), resumably when --output is given."""

from __future__ import annotations

import sys
from pathlib import Path

from translator.errors import UserError


def engine_translate(translator, request):
    """The documents' `translate` callable over an engine: one best translation per
    sentence with its word alignment (None from an engine that gives none)."""
    capable = getattr(getattr(translator, "capabilities", None), "alignments", False)
    asked = request.replace(alignments=True) if capable else request

    def translate(sentences: list[str]):
        results = translator.translate(sentences, asked)
        return [(h[0].text, getattr(h[0], "alignment", None)) for h in results]

    return translate


def source_language(translator, src_lang: str | None) -> str | None:
    """The language whose sentence rules split the input: --src-lang, else the model's."""
    return src_lang or getattr(translator.cfg.data, "src_lang", None)


def target_language(translator, tgt_lang: str | None) -> str | None:
    """The language a document is translated into: --tgt-lang, else the model's."""
    return tgt_lang or getattr(translator.cfg.data, "tgt_lang", None)


def check_document_options(fmt: str, input_file, output_file, nbest: int, guides) -> None:
    """Refuse what a document translation cannot do, before a model is loaded."""
    if input_file is None:
        raise UserError(f"--format {fmt} translates a file: give --input F")
    if fmt == "docx" and output_file is None:
        raise UserError("--format docx writes a file: give --output G")
    if nbest != 1:
        raise UserError(f"--nbest {nbest}: --format {fmt} writes one translation a sentence")
    if guides:
        raise UserError(f"--prefix, --constraint and --terms go with lines, not --format {fmt}")


def translate_document_file(translator, request, fmt: str, input_file: Path,
                            output_file: Path | None, checkpoint, src_lang,
                            tgt_lang=None) -> None:  # fmt: skip
    """Translate the document `input_file` into `output_file` (resumably: documents.journal)
    or, without one, to standard output."""
    from translator.decode.resumable import model_stamps
    from translator.documents import translate_bytes
    from translator.documents.journal import translate_document
    from translator.fileio import readable_file

    input_file = readable_file(input_file)
    translate = engine_translate(translator, request)
    lang = source_language(translator, src_lang)
    target = target_language(translator, tgt_lang)
    if output_file is None:
        data = translate_bytes(input_file.read_bytes(), input_file, fmt, translate, lang, target)
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    sampling = request.sampling
    identity = {
        "model": model_stamps(checkpoint),
        "decode": request.decode.to_dict(),
        "prefix": list(request.source_or(translator.source_prefix)),
        "sampling": None if sampling is None else repr(sampling),
    }
    translate_document(input_file, output_file, fmt, translate, lang, identity, target)
