"""`python -m lara.gate`: run the gate, or `--write-suites` to refresh gx/expectations/."""

import sys

from lara.gate.cli import main

sys.exit(main())
