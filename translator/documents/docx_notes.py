"""A Word file's footnotes, endnotes and comments, which docx.py translates as it does the
body: python-docx reads the comments part as XML but keeps the footnotes' and endnotes'
as bytes, so those are parsed here and their translation written back before saving.
The separator lines Word draws above the notes (notes of type separator and
continuationSeparator) stay as they are.
"""

from __future__ import annotations

from docx.opc.constants import RELATIONSHIP_TYPE as RT

from translator.documents.docx_parts import _NS, _refuse_dtd

NOTES = (RT.FOOTNOTES, RT.ENDNOTES, RT.COMMENTS)
P = _NS + "p"
_NOTE_TAGS = {_NS + "footnote", _NS + "endnote"}
_SEPARATORS = {"separator", "continuationSeparator"}


class Notes:
    """The notes parts of python-docx Document `doc` (`name`: the file's, for errors)."""

    def __init__(self, doc, name: str):
        from docx.oxml.parser import parse_xml

        self.parts = []  # (part, its XML root, whether it is kept as bytes)
        for rel in list(doc.part.rels.values()):
            if rel.reltype not in NOTES or rel.is_external:
                continue
            part = rel.target_part
            root = getattr(part, "_element", None)
            if root is None:
                root = parse_xml(part.blob)
                _refuse_dtd(root, part.partname, name)
            self.parts.append((part, root, not hasattr(part, "_element")))

    @property
    def roots(self) -> list:
        return [root for _, root, _ in self.parts]

    def save(self) -> None:
        """Write the parts kept as bytes back from their (translated) XML."""
        from docx.opc.oxml import serialize_part_xml

        for part, root, as_bytes in self.parts:
            if as_bytes:
                part._blob = serialize_part_xml(root)


def paragraphs(root) -> list:
    """The paragraphs in XML element `root` to translate: all but a separator note's."""
    return [p for p in root.iter(P) if not any(
        up.tag in _NOTE_TAGS and up.get(_NS + "type") in _SEPARATORS
        for up in p.iterancestors())]  # fmt: skip
