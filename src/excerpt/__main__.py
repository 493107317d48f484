import sys

from excerpt.launch import main

sys.exit(main())
