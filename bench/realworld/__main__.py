import sys

from bench.realworld.cli import main

sys.exit(main())
