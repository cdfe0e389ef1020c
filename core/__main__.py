import sys

from masklens.core.cli import main

sys.exit(main())
