"""translate --input F --output G with --prefixes or --constraints files (decode/resumable.py):
each guide file is read once through, not again from its first line for every chunk."""

from translator.config import DecodeConfig
from translator.decode import line_guides, resumable, translate_io
from translator.decode.line_guides import LineGuides
from translator.decode.request import DecodeRequest
from translator.decode.translator import Translation


class Chars:
    def encode_tgt(self, texts):
        return [[1, *map(ord, t), 2] for t in texts]


class Echo:
    """A translator that gives each line back after its prefix and phrases."""

    tokenizer, max_target, source_prefix = Chars(), 10_000, ()

    def translate(self, lines, request, progress=False):
        text = lambda ids: "".join(map(chr, ids))  # noqa: E731
        prefixes = [text(p) for p in request.prefixes or [[] for _ in lines]]
        musts = [[text(c) for c in m] for m in request.phrases or [[] for _ in lines]]
        return [[Translation(p + line + "".join(f" +{c}" for c in must), 0.0)]
                for p, line, must in zip(prefixes, lines, musts)]  # fmt: skip


def test_guide_lines_read_grow_linearly_with_the_input(tmp_path, monkeypatch):
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 10)
    read, real = [0], line_guides.iter_lines

    def counted(path):
        for line in real(path):
            read[0] += 1
            yield line

    monkeypatch.setattr(line_guides, "iter_lines", counted)
    for n in (200, 400):
        src, pre, con = (tmp_path / f"{name}{n}" for name in ("in", "pre", "con"))
        src.write_text("".join(f"l{i}\n" for i in range(n)))
        pre.write_text("".join(f"p{i} \n" for i in range(n)))
        con.write_text("".join(f"c{i}\n" for i in range(n)))
        guides = LineGuides(prefix_file=pre, constraint_file=con)
        out = tmp_path / f"out{n}"
        read[0] = 0
        resumable.translate_file(Echo(), src, out, DecodeRequest(DecodeConfig(), 1), "m", guides)
        assert out.read_text().splitlines()[-1] == f"p{n - 1} l{n - 1} +c{n - 1}"
        assert read[0] == 2 * n  # (each chunk read both files from line 1: n² / 10)
