"""`python -m tests.signoz_emulator`: the emulator by hand (see the package docstring)."""

from .by_hand import main

raise SystemExit(main())
