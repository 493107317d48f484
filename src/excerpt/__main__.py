import sys

from excerpt.cli import main

sys.exit(main())
