"""Allow ``python -m sizing``."""

from sizing.cli import main

main()
