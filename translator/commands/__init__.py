"""Commands too long for cli.py, each in its own module; cli.py registers them."""
