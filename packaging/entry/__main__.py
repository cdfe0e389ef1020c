"""`python -m masklens …`: the same as the `masklens` command."""

import sys

from masklens.core.cli import main

sys.exit(main())
