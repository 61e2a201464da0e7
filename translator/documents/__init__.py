"""Documents translated with their structure: text paragraphs, Markdown, HTML and docx
(docs/documents.md).

Every format module takes a `translate(sentences) -> [(translation, alignment or None)]`
callable (units.Translate) and the source language (for sentence splitting), and never
imports an engine: `translate_text(text, translate, lang) -> str`, `translate_markdown`,
`translate_html` (str -> str) and `translate_docx(data: bytes, ...) -> bytes`. HTML and
docx also take how their language tags change (language.Retag): a translated document
names the target's language.
"""

from __future__ import annotations

from pathlib import Path

from translator.data.readers import BOM, ZIP_MAGIC
from translator.errors import FileProblem, UserError

FORMATS = ("text", "html", "markdown", "docx")
EXTENSIONS = {".html": "html", ".htm": "html", ".xhtml": "html", ".md": "markdown",
              ".markdown": "markdown", ".docx": "docx"}  # fmt: skip


def format_of(path: str | Path | None, asked: str | None) -> str | None:
    """The document format of `path`: `asked` (--format) when given, else its extension's;
    None for a file read one sentence a line (.txt and other extensions)."""
    if asked is not None:
        if asked not in FORMATS:
            raise UserError(f"--format {asked}: not one of {', '.join(FORMATS)}")
        return asked
    return EXTENSIONS.get(Path(path).suffix.lower()) if path is not None else None


def _text_of(data: bytes, path: Path, fmt: str) -> str:
    """The UTF-8 text of a file --format `fmt` reads as text; a zip (a docx, say) or bytes
    that are not UTF-8 are a UserError naming the file, whose hint names the command's
    option (the server answers without it)."""
    if data.startswith(ZIP_MAGIC):
        what = "text" if fmt == "text" else f"{fmt} text"
        raise UserError(f"{path}: a zip file (a Word document?), not {what}", "give --format docx")
    try:
        return data.decode("utf-8-sig" if data.startswith(BOM) else "utf-8")
    except UnicodeDecodeError as err:
        raise UserError(
            f"{path}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})",
            f"--format {fmt} reads UTF-8",  # (a hint: the command's, not the server's)
        ) from None


def translate_bytes(data: bytes, path: Path, fmt: str, translate, lang: str | None,
                    target: str | None = None) -> bytes:  # fmt: skip
    """The file `path` (its content `data`) of format `fmt` translated from `lang` into
    `target` (codes as the model spells them), as bytes to write; a file that is not of
    that format is a UserError naming it."""
    from translator.documents.language import retag_for

    retag = retag_for(target)
    if fmt == "docx":
        from translator.documents.docx import translate_docx

        return translate_docx(data, translate, lang, name=str(path), retag=retag)
    text = _text_of(data, path, fmt)
    if fmt == "text":
        from translator.documents.text import translate_text as run
    elif fmt == "markdown":
        from translator.documents.markdown import translate_markdown as run
    else:
        from functools import partial

        from translator.documents.html import translate_html

        run = partial(translate_html, retag=retag)
    try:
        out = run(text, translate, lang)
    except FileProblem:
        raise
    except UserError as err:
        raise UserError(f"{path}: {err.message}", err.hint) from None
    bom = BOM if data.startswith(BOM) else b""  # kept: some Windows tools read by it
    return bom + out.encode("utf-8")
