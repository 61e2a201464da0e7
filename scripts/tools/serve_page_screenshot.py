"""A picture of the page of `translator serve` with one sentence translated (docs/serve_page.png):
the server on a free loopback port, the page drawn by a headless Chromium in a window taller
than any page, then cut below the page's last box, so the picture holds the whole page.

    python scripts/tools/serve_page_screenshot.py --checkpoint runs/x/best.pt --text "Ein Satz." \
        --beam 5 --output docs/serve_page.png

Needs chromium (apt-get install chromium) and the `serve` and `plot` extras (Pillow comes with
matplotlib)."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

WIDTH, TALLEST = 1000, 4000  # pixels: the page's width, and a window no page outgrows
MARGIN = 24  # pixels of background kept below the page's last box


def serve(checkpoint: str, log) -> tuple[subprocess.Popen, str]:
    """`translator serve` on a free port, once /health answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "translator", "serve", "--checkpoint", checkpoint]
    proc = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "/health", timeout=5):
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the server did not come up; its log: {log.name}")


def crop_to_page(path: Path) -> tuple[int, int]:
    """Cut the rows of bare background below the page's content, keeping MARGIN of them."""
    from PIL import Image, ImageChops

    with Image.open(path) as image:
        image = image.convert("RGB")
        background = Image.new(
            "RGB", image.size, image.getpixel((image.width - 1, image.height - 1))
        )
        box = ImageChops.difference(image, background).getbbox()
        bottom = min(image.height, (box[3] if box else image.height) + MARGIN)
        image.crop((0, 0, image.width, bottom)).save(path)
        return image.width, bottom


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--text", required=True, help="the sentence the page translates")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--tgt-lang", help="the menu's language, for a multilingual model")
    parser.add_argument("--output", type=Path, default=Path("docs/serve_page.png"))
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "serve.log", "wb") as log:
        proc, url = serve(args.checkpoint, log)
        try:
            fields = {"text": args.text, "beam": args.beam}
            query = urllib.parse.urlencode(
                {**fields, **({"tgt_lang": args.tgt_lang} if args.tgt_lang else {})}
            )
            shot = Path(tmp) / "page.png"
            flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
            subprocess.run(
                [
                    browser,
                    *flags,
                    f"--user-data-dir={tmp}/profile",
                    f"--window-size={WIDTH},{TALLEST}",
                    "--virtual-time-budget=20000",  # the page's requests answer before the shot
                    f"--screenshot={shot}",
                    f"{url}/?{query}",
                ],
                check=True,
                capture_output=True,
                timeout=180,
            )
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
        width, height = crop_to_page(shot)
        shutil.copyfile(shot, args.output)
    print(f"{args.output}: {width}x{height} pixels")


if __name__ == "__main__":
    main()
