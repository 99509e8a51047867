"""``python -m assocmem``: the command line, as the ``assocmem`` script runs it."""

from assocmem.adapters.cli import main

raise SystemExit(main())
