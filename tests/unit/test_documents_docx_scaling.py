"""A Word paragraph holding many hyperlinks, tracked insertions and deletions costs work
linear in them: counted in the calls into the docx modules, not in time."""

import io
import sys
from pathlib import Path

import docx
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from fake_translate import same

from translator.documents import docx_runs
from translator.documents.docx import translate_docx

MODULES = Path(docx_runs.__file__).parent


def _paragraph(n: int) -> bytes:
    """A document of one paragraph: n sentences, each a link, an insertion and a deletion."""
    run = '<w:r><w:t xml:space="preserve">{}</w:t></w:r>'
    parts = [
        f'<w:hyperlink w:anchor="a{i}">{run.format(f"Link{i} ")}</w:hyperlink>'
        f'<w:ins w:id="{2 * i}" w:author="x">{run.format(f"new{i} ")}</w:ins>'
        f'<w:del w:id="{2 * i + 1}" w:author="x"><w:r><w:delText>old{i} </w:delText></w:r></w:del>'
        + run.format(f"words{i}. ")
        for i in range(n)
    ]
    document = docx.Document()
    document.element.body.insert(0, parse_xml(f"<w:p {nsdecls('w')}>{''.join(parts)}</w:p>"))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _calls(data: bytes) -> int:
    """Calls into translator/documents/docx*.py translating `data` through `same`."""
    count, ours = 0, {}

    def counted(frame, event, arg):
        nonlocal count
        if event == "call":
            code = frame.f_code
            if code not in ours:
                path = Path(code.co_filename)
                ours[code] = path.parent == MODULES and path.stem.startswith("docx")
            count += ours[code]

    sys.setprofile(counted)
    try:
        out = translate_docx(data, same, "en")
    finally:
        sys.setprofile(None)
    assert _texts(out) == _texts(data)  # the identity model gives every word back in place
    return count


def _texts(data: bytes) -> str:
    body = docx.Document(io.BytesIO(data)).element.body
    return "".join(t.text or "" for t in body.iter() if t.tag.endswith(("}t", "}delText")))


def test_a_paragraph_of_many_wrappers_costs_work_linear_in_them():
    small, large = _calls(_paragraph(60)), _calls(_paragraph(240))
    assert large < 5 * small, (small, large)  # linear: about 4; the square: about 16
