import sys

from rose.cli import main

sys.exit(main())
