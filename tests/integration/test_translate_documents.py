"""`translate --input F --output G --format ...` on the tiny checkpoint: each format's round
trip keeps its structure, an interrupted run resumes with only the missing sentences and
writes the same file, and bad inputs are one line, exit 2, with nothing written."""

import gzip
import importlib.util
import io
import re

import docx
import pytest
from util import ROOT

from translator.commands import translate_document

TEXT = "Ein Mann fährt Rad. Zwei Hunde\nspielen im Schnee.\n\n\nEine Frau liest. Ein Kind lacht.\n"
MARKDOWN = """---
title: bleibt
---

# Ein *Mann* fährt

- Zwei Hunde. Ein Kind
- [Eine Frau](http://x.y) liest.

```
code bleibt
```
"""


def translate(here, model, source, output, *extra):
    return here("translate", "--checkpoint", str(model), "--input", str(source),
                "--output", str(output), *extra)  # fmt: skip


def test_text_paragraphs_keep_their_blank_lines(here, three_steps, tmp_path):
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text(TEXT, encoding="utf-8")
    done = translate(here, three_steps, source, output, "--format", "text")
    assert done.returncode == 0, done.stderr
    out = output.read_text(encoding="utf-8")
    blank = re.compile(r"\n(?:[ \t]*\n)+")
    assert blank.findall(out) == blank.findall(TEXT) == ["\n\n\n"]
    assert out.endswith("\n") and out != TEXT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.txt"]


def test_markdown_by_extension_keeps_code_and_front_matter(here, three_steps, tmp_path):
    source, output = tmp_path / "in.md", tmp_path / "out.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    assert translate(here, three_steps, source, output).returncode == 0
    out = output.read_text(encoding="utf-8")
    assert out.startswith("---\ntitle: bleibt\n---\n\n# ")
    assert out.endswith("\n```\ncode bleibt\n```\n") and "](http://x.y)" in out
    assert out.count("\n- ") == 2


def test_docx_round_trip(here, three_steps, tmp_path):
    d = docx.Document()
    d.add_paragraph("Ein Mann fährt Rad.", style="Heading 1")
    d.add_paragraph("Zwei Hunde ").add_run("spielen").bold = True
    d.add_table(rows=1, cols=1).cell(0, 0).text = "Eine Frau liest."
    source, output = tmp_path / "in.docx", tmp_path / "out.docx"
    d.save(source)
    assert translate(here, three_steps, source, output).returncode == 0
    out = docx.Document(str(output))
    assert [p.style.name for p in out.paragraphs] == ["Heading 1", "Normal"]
    assert len(out.tables) == 1 and out.paragraphs[0].text != "Ein Mann fährt Rad."


class Stop(Exception):
    pass


def test_an_interrupted_document_resumes(here, three_steps, tmp_path, monkeypatch):
    monkeypatch.setattr("translator.documents.units.BATCH", 2)
    source = tmp_path / "in.txt"
    source.write_text(TEXT, encoding="utf-8")
    whole = tmp_path / "whole.txt"
    assert translate(here, three_steps, source, whole, "--format", "text").returncode == 0
    real, sent = translate_document.engine_translate, []

    def stopping(translator, request):
        inner = real(translator, request)

        def call(sentences):
            if sent:
                raise Stop
            sent.extend(sentences)
            return inner(sentences)

        return call

    monkeypatch.setattr(translate_document, "engine_translate", stopping)
    output = tmp_path / "out.txt"
    with pytest.raises(Stop):
        translate(here, three_steps, source, output, "--format", "text")
    assert not output.exists() and (tmp_path / "out.txt.journal").exists()

    def counting(translator, request):
        inner = real(translator, request)
        return lambda sentences: sent.extend(sentences) or inner(sentences)

    sent.clear()
    monkeypatch.setattr(translate_document, "engine_translate", counting)
    assert translate(here, three_steps, source, output, "--format", "text").returncode == 0
    assert sent == ["Eine Frau liest.", "Ein Kind lacht."]
    assert output.read_bytes() == whole.read_bytes()
    assert not (tmp_path / "out.txt.journal").exists()


@pytest.mark.parametrize(
    ("name", "data", "options", "message"),
    [
        ("in.txt", b"Ein Mann.\n", ["--format", "docx"], "in.txt: not a docx file"),
        ("in.docx", b"Ein Mann.\n", [], "in.docx: not a docx file"),
        ("in.md", b"PK\x03\x04zip", [], "not markdown text (hint: give --format docx)"),
        ("in.txt", b"Ein Mann.\n", ["--format", "pdf"], "--format pdf: not one of"),
        ("in.txt", b"Ein \xff.\n", ["--format", "text"], "in.txt: not UTF-8 text"),
        ("in.md", b"Ein Mann.\n", ["--nbest", "2"], "--nbest 2: --format markdown writes"),
    ],
)
def test_bad_inputs_one_line_nothing_written(here, three_steps, tmp_path, name, data,
                                             options, message):  # fmt: skip
    source, output = tmp_path / name, tmp_path / ("out-" + name)
    source.write_bytes(data)
    done = translate(here, three_steps, source, output, *options)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1 and message in errors[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_docx_needs_an_output(here, three_steps, tmp_path):
    source = tmp_path / "in.docx"
    source.write_bytes(io.BytesIO(b"x").getvalue())
    done = here("translate", "--checkpoint", str(three_steps), "--input", str(source))
    assert done.returncode == 2 and "--format docx writes a file: give --output G" in done.stderr


def test_html_by_extension_and_markdown_to_standard_output(here, three_steps, tmp_path):
    page = '<p lang="de">Ein <b class="x">Mann</b> fährt Rad.</p>\n<pre>bleibt &amp; so</pre>\n'
    source, output = tmp_path / "in.html", tmp_path / "out.html"
    source.write_text(page, encoding="utf-8")
    assert translate(here, three_steps, source, output).returncode == 0
    out = output.read_text(encoding="utf-8")
    assert out.startswith('<p lang="en">') and '<b class="x">' in out  # the model's target
    assert out.endswith("</p>\n<pre>bleibt &amp; so</pre>\n")
    regional = here("translate", "--checkpoint", str(three_steps), "--input", str(source),
                    "--tgt-lang", "en-GB")  # fmt: skip
    assert regional.returncode == 0 and regional.stdout.startswith('<p lang="en-GB">')
    markdown = tmp_path / "in.md"
    markdown.write_text(MARKDOWN, encoding="utf-8")
    done = here("translate", "--checkpoint", str(three_steps), "--input", str(markdown))
    assert done.returncode == 0 and done.stdout.startswith("---\ntitle: bleibt\n---\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.html", "in.md", "out.html"]


def test_bench_documents_times_both_ways_in_turns(three_steps, tmp_path):
    path = ROOT / "scripts" / "bench" / "bench_documents.py"
    spec = importlib.util.spec_from_file_location("bench_documents", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    source, reference = tmp_path / "src.de.gz", tmp_path / "ref.en"
    lines = ["Ein Mann fährt Rad.", "Zwei Hunde spielen", "Eine Frau liest.", "Ein Kind lacht."]
    with gzip.open(source, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    reference.write_text("A man rides.\nTwo dogs play\nA woman reads.\nA child laughs.\n")
    args = ["--checkpoint", str(three_steps), "--source", str(source), "--reference",
            str(reference), "--device", "cpu", "--repeats", "3"]  # fmt: skip
    row = bench.main(args)
    assert row["sentences"] == 4 and row["repeats"] == 3 and len(row["time_ratios"]) == 3
    assert row["time_ratio_median"] == sorted(row["time_ratios"])[1]
    assert isinstance(row["bleu_lines"], float) and isinstance(row["bleu_document"], float)
