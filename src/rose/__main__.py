import sys

from rose.launcher import main

sys.exit(main())
