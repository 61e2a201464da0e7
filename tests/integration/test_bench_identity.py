"""scripts/bench/html_identity.py in each format, on small documents: the script reads
translator's own document code, so it must follow that code as it changes."""

import json
import subprocess
import sys

import docx
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from util import ROOT

SCRIPT = ROOT / "scripts" / "bench" / "html_identity.py"


def _run(tmp_path, fmt: str, *names) -> dict:
    listing = tmp_path / f"{fmt}.txt"
    listing.write_text("".join(f"{n}\n" for n in names))
    result = subprocess.run([sys.executable, str(SCRIPT), "--list", str(listing),
                             "--format", fmt], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_the_identity_check_reads_word_html_and_markdown_files(tmp_path):
    document = docx.Document()
    document.add_paragraph("Ein Hund läuft. ").add_run("Er ist schnell.").bold = True
    link = '<w:hyperlink w:anchor="a"><w:ins w:id="7" w:author="x"><w:r><w:t>Ein Mann</w:t>'
    p = f'<w:p {nsdecls("w")}><w:r><w:t xml:space="preserve">Dort: </w:t></w:r>{link}'
    document.element.body.insert(1, parse_xml(p + "</w:r></w:ins></w:hyperlink></w:p>"))
    document.save(tmp_path / "a.docx")
    counts = _run(tmp_path, "docx", tmp_path / "a.docx")
    assert counts["pages"] == counts["same_text_and_formatting"] == 1, counts
    assert counts["capitals_same_formatting"] == counts["reversed_without_error"] == 1, counts
    (tmp_path / "a.html").write_text("<p>Ein <b>Hund</b> läuft &#60;schnell&gt;.</p>\n")
    counts = _run(tmp_path, "html", tmp_path / "a.html")
    assert counts["same_bytes"] == counts["reversed_well_formed"] == 1, counts
    (tmp_path / "a.md").write_text("Ein *Hund* [läuft](u).\n")
    assert _run(tmp_path, "markdown", tmp_path / "a.md")["same_bytes"] == 1
